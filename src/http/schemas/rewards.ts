import { z } from './zod-openapi.js';
import { byKind, jsonObject, outDateTime } from './common.js';

export const deactivationBody = z
  .discriminatedUnion('variant', [
    z.object({ variant: z.literal('never') }),
    z.object({ variant: z.literal('interval'), duration: z.number().int().min(1).max(100_000), period: z.enum(['days', 'months', 'years']) }),
  ])
  .openapi('Deactivation');

export const rewardDefinitionOut = z
  .object({
    key: z.string(),
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
    created_at: outDateTime,
    updated_at: outDateTime.nullable(),
  })
  .strict()
  .openapi('RewardDefinition', { description: 'Common fields plus the fields of its kind (credits; offer_code_*; entitlement_*; offering_*).' });

const pooledValue = z.object({ value: z.string(), link: z.string().nullable(), expires_at: outDateTime });

export const activeEntryOut = z
  .object({
    reward: rewardDefinitionOut,
    expires_at: outDateTime.nullable(),
    credits: z.number().int().optional(),
    value: z.union([pooledValue, pooledValue.omit({ link: true })]).nullable().optional(),
    created_at: outDateTime,
    updated_at: outDateTime.nullable(),
  })
  .strict()
  .openapi('ActiveRewardEntry', { description: '`credits` on credit entries; `value` on offer_code and store_promo_code entries.' });

export const expiredEntryOut = z
  .object({ reward: rewardDefinitionOut, expired_at: outDateTime.nullable(), created_at: outDateTime, updated_at: outDateTime.nullable() })
  .strict()
  .openapi('ExpiredRewardEntry');

export const programEntryOut = z
  .object({
    reward: rewardDefinitionOut,
    activation: z.object({ variant: z.enum(['claim', 'conversion']), amount: z.number().int().optional(), limit: z.number().int().optional() }).strict(),
    deactivation: deactivationBody,
  })
  .strict()
  .openapi('ProgramRewardEntry');

export const rewardsGrantedOut = byKind(activeEntryOut).strict().openapi('RewardsGranted');

export const referralProgramOut = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    metadata: jsonObject.nullable(),
    distribution_percentage: z.number().int(),
    limit: z.number().int(),
    rewards: z.object({ sender: byKind(programEntryOut).strict(), receiver: byKind(programEntryOut).strict() }).strict(),
    created_at: outDateTime,
    updated_at: outDateTime.nullable(),
  })
  .strict()
  .openapi('ReferralProgram');
