import { z } from 'zod';
import { isoDateTime, jsonObject, rewardDefinitionSchema, configuredRewardSchema } from '../rewards/reward-schemas.js';

/** Configuration streams: `reward-{key}`, `program-{id}`, `promo-{CODE}`, `affiliate-{id}`. */

const programSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  metadata: jsonObject.nullable(),
  distribution_percentage: z.number().int(),
  limit: z.number().int(),
  rewards: z.object({ sender: z.array(configuredRewardSchema), receiver: z.array(configuredRewardSchema) }),
  created_at: isoDateTime,
  updated_at: isoDateTime.nullable(),
});
export type Program = z.infer<typeof programSchema>;

const promoCodeSchema = z.object({
  code: z.string(),
  description: z.string().nullable(),
  is_active: z.boolean(),
  limit: z.number().int(),
  rewards: z.array(configuredRewardSchema),
  created_at: isoDateTime,
  updated_at: isoDateTime.nullable(),
});
export type PromoCode = z.infer<typeof promoCodeSchema>;

export const AFFILIATE_STATUSES = ['pending', 'approved', 'rejected', 'withdrawn', 'archived', 'deactivated', 'banned'] as const;

const affiliateSchema = z.object({
  id: z.string(),
  status: z.enum(AFFILIATE_STATUSES),
  name: z.string(),
  logo_url: z.string().nullable(),
  platforms: z.array(z.object({ type: z.string(), handle: z.string(), verified: z.boolean() })),
  app_user_id: z.string().nullable(),
  codes: z.array(z.string()),
  rewards: z.array(configuredRewardSchema),
  created_at: isoDateTime,
  updated_at: isoDateTime.nullable(),
});
export type Affiliate = z.infer<typeof affiliateSchema>;

export const configEvents = {
  RewardCreated: z.object({ reward: rewardDefinitionSchema }),
  RewardUpdated: z.object({ reward: rewardDefinitionSchema }),
  ProgramCreated: z.object({ program: programSchema }),
  ProgramUpdated: z.object({ program: programSchema }),
  PromoCodeCreated: z.object({ promo_code: promoCodeSchema }),
  PromoCodeUpdated: z.object({ promo_code: promoCodeSchema }),
  AffiliateCreated: z.object({ affiliate: affiliateSchema }),
  AffiliateUpdated: z.object({ affiliate: affiliateSchema }),
};
