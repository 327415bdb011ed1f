import { z } from 'zod';
import { isJsonObject } from '../json-object.js';
import { REWARD_KINDS } from './reward-kinds.js';

export const isoDateTime = z.iso.datetime({ offset: true });
/** A JSON object kept exactly as given (a zod record would rebuild it and lose keys such as "__proto__"). */
export const jsonObject = z.custom<Record<string, unknown>>(isJsonObject, 'must be a JSON object');

/** The longest deactivation interval: 100 years (a reward that must never end says `never`). */
export const MAX_INTERVAL = { days: 36_525, months: 1_200, years: 100 } as const;

export const deactivationSchema = z
  .discriminatedUnion('variant', [
    z.object({ variant: z.literal('never') }),
    z.object({
      variant: z.literal('interval'),
      duration: z.number().int().min(1).max(MAX_INTERVAL.days),
      period: z.enum(['days', 'months', 'years']),
    }),
  ])
  .superRefine((deactivation, ctx) => {
    if (deactivation.variant === 'interval' && deactivation.duration > MAX_INTERVAL[deactivation.period]) {
      ctx.addIssue({
        code: 'too_big',
        origin: 'number',
        maximum: MAX_INTERVAL[deactivation.period],
        inclusive: true,
        path: ['duration'],
        message: `an interval is at most 100 years (${MAX_INTERVAL[deactivation.period]} ${deactivation.period}); use "never" for no end`,
      });
    }
  });
export type Deactivation = z.infer<typeof deactivationSchema>;

export const activationSchema = z.object({
  variant: z.enum(['claim', 'conversion']),
  amount: z.number().int().min(1).max(1_000_000_000).optional(),
  limit: z.number().int().min(0).max(1_000_000_000).optional(),
});
export type Activation = z.infer<typeof activationSchema>;

/** The stored definition of a reward (the `reward-{key}` stream folds into this). */
export const rewardDefinitionSchema = z.object({
  key: z.string(),
  kind: z.enum(REWARD_KINDS),
  name: z.string(),
  description: z.string().nullable(),
  metadata: jsonObject.nullable(),
  credits: z.number().int().optional(),
  offer_code_id: z.string().optional(),
  offer_code_ref_name: z.string().optional(),
  subscription_product_id: z.string().optional(),
  entitlement_id: z.string().optional(),
  entitlement_key: z.string().optional(),
  offering_id: z.string().optional(),
  offering_key: z.string().optional(),
  created_at: isoDateTime,
  updated_at: isoDateTime.nullable(),
});
export type RewardDefinition = z.infer<typeof rewardDefinitionSchema>;

/** A reward as configured on a program, promo code or affiliate (one of its entries; not a user's RewardEntry). */
export const configuredRewardSchema = z.object({
  reward_key: z.string(),
  activation: activationSchema,
  deactivation: deactivationSchema,
  /** SPEC §11: `on_refund` revokes this entry's grants when the converting purchase is refunded. */
  clawback: z.enum(['none', 'on_refund']).optional(),
});
export type ConfiguredReward = z.infer<typeof configuredRewardSchema>;
