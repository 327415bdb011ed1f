import { z } from './zod-openapi.js';
import { deactivationSchema, MAX_INTERVAL, rewardDefinitionSchema } from '../../domain/rewards/reward-schemas.js';
import { byKind, nullableJsonObject, outDateTime } from './common.js';

/** The wire shapes reuse the domain's schemas: one definition of each. */
const interval = (period: 'days' | 'months' | 'years', max: number) => ({
  type: 'object',
  properties: {
    variant: { type: 'string', const: 'interval' },
    duration: { type: 'integer', minimum: 1, maximum: max },
    period: { type: 'string', const: period },
  },
  required: ['variant', 'duration', 'period'],
});

/** Spelled out for the document: an interval is at most 100 years in each period. */
export const deactivationBody = deactivationSchema.meta({
  id: 'Deactivation',
  description: `\`never\`, or an interval of at most 100 years (${MAX_INTERVAL.days} days, ${MAX_INTERVAL.months} months or ${MAX_INTERVAL.years} years).`,
  oneOf: [
    { type: 'object', properties: { variant: { type: 'string', const: 'never' } }, required: ['variant'] },
    interval('days', MAX_INTERVAL.days),
    interval('months', MAX_INTERVAL.months),
    interval('years', MAX_INTERVAL.years),
  ],
});

/** The stored definition as the wire shows it (the admin API adds `kind`). */
export const rewardDefinitionWire = rewardDefinitionSchema.extend({ metadata: nullableJsonObject }).strict();

const rewardDefinitionOut = rewardDefinitionWire
  .omit({ kind: true })
  .openapi('RewardDefinition', { description: 'Common fields plus the fields of its kind (credits; offer_code_*; entitlement_*; offering_*).' });

const pooledValue = z.object({ value: z.string(), link: z.string().nullable(), expires_at: outDateTime });

export const activeEntryOut = z
  .object({
    reward: rewardDefinitionOut,
    expires_at: outDateTime.nullable(),
    credits: z.number().int().optional(),
    value: z
      .union([pooledValue, pooledValue.omit({ link: true })])
      .nullable()
      .optional(),
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
    metadata: nullableJsonObject,
    distribution_percentage: z.number().int(),
    limit: z.number().int(),
    rewards: z.object({ sender: byKind(programEntryOut).strict(), receiver: byKind(programEntryOut).strict() }).strict(),
    created_at: outDateTime,
    updated_at: outDateTime.nullable(),
  })
  .strict()
  .openapi('ReferralProgram');

/** The shapes the view builders (src/application/queries/*-view*.ts) produce, from these schemas. */
export type RewardDefinitionOut = z.input<typeof rewardDefinitionOut>;
export type ActiveEntryOut = z.input<typeof activeEntryOut>;
export type ExpiredEntryOut = z.input<typeof expiredEntryOut>;
export type ProgramEntryOut = z.input<typeof programEntryOut>;
export type ReferralProgramOut = z.input<typeof referralProgramOut>;
