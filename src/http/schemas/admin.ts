import { normalizeCode } from '../../domain/codes/referral-code.js';
import { AFFILIATE_STATUSES } from '../../domain/events/config-events.js';
import { z } from './zod-openapi.js';
import { appUserId, chars, dateTime, handedOutValue, nullableJsonObject, orNull, outDateTime, pathId, text, webUrl } from './common.js';
import { deactivationBody, rewardDefinitionWire } from './rewards.js';
import { offerCodeId } from './store.js';

export const rewardKey = z
  .string()
  .regex(/^[a-z0-9_-]{1,64}$/, 'must match [a-z0-9_-]{1,64}')
  .openapi({ example: 'five-credits' });
export const programId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must match [A-Za-z0-9_-]{1,64}')
  .openapi({ example: 'default' });
export const affiliateId = programId.openapi({ example: 'acme' });
/** Promo and affiliate codes: [A-Za-z0-9_-]{3,32}, stored upper-cased (codes match case-insensitively). */
export const configuredCode = z
  .string()
  .regex(/^[A-Za-z0-9_-]{3,32}$/, 'must match [A-Za-z0-9_-]{3,32} (stored upper-cased)')
  .transform(normalizeCode)
  .openapi({
    type: 'string',
    pattern: '^[A-Za-z0-9_-]{3,32}$',
    description: 'Stored and returned upper-cased; matched case-insensitively.',
    example: 'WELCOME10',
  });

const common = {
  name: text(200),
  description: orNull(chars(0, 2000), 'string').optional(),
  metadata: nullableJsonObject.optional(),
};

export const rewardBody = z
  .discriminatedUnion('kind', [
    z.object({ kind: z.literal('basic'), ...common }),
    z.object({ kind: z.literal('credit'), ...common, credits: z.number().int().min(1).max(2_147_483_647) }),
    z.object({ kind: z.literal('offer_code'), ...common, offer_code_id: offerCodeId, offer_code_ref_name: text(200), subscription_product_id: text(200) }),
    z.object({ kind: z.literal('store_promo_code'), ...common }),
    z.object({ kind: z.literal('partner_entitlement'), ...common, entitlement_id: pathId(128), entitlement_key: text(200) }),
    z.object({ kind: z.literal('partner_offering'), ...common, offering_id: text(128), offering_key: text(200) }),
  ])
  .openapi('RewardRequest');

/** An activation number: any size a business rule can judge (422 *.INVALID_ACTIVATION), not sheer size. */
const activationNumber = z.number().int().min(-1_000_000_000).max(1_000_000_000).optional();

const entryBody = z
  .object({
    reward_key: rewardKey,
    // Ranges beyond types are business rules (422 *.INVALID_ACTIVATION), except sheer size.
    activation: z.object({
      variant: z.enum(['claim', 'conversion']),
      amount: activationNumber.openapi({
        description: 'Must be at least 1 (sender entries need it); a smaller value is refused with 422 `*.INVALID_ACTIVATION`',
      }),
      limit: activationNumber.openapi({
        description:
          'At most this many grants, 0 = unlimited; must be at least 0 (sender credit, offer_code and store_promo_code entries need it); a negative value is refused with 422 `*.INVALID_ACTIVATION`',
      }),
    }),
    deactivation: deactivationBody,
    /** SPEC §11: revoke what this entry granted when the purchase that converted the referee is refunded. */
    clawback: z
      .enum(['none', 'on_refund'])
      .optional()
      .openapi({ description: '`on_refund` revokes what this entry granted when the purchase that converted the referee is refunded (default none)' }),
  })
  .openapi('RewardEntryRequest');

export const programBody = z
  .object({
    ...common,
    distribution_percentage: z.number().int().min(0).max(100),
    limit: z.number().int().min(0).max(2_147_483_647),
    rewards: z.object({ sender: z.array(entryBody).max(100).default([]), receiver: z.array(entryBody).max(100).default([]) }),
  })
  .openapi('ProgramRequest');

export const promoCodeBody = z
  .object({
    description: orNull(chars(0, 2000), 'string').optional(),
    is_active: z.boolean(),
    limit: z.number().int().min(0).max(2_147_483_647),
    rewards: z.array(entryBody).max(100),
  })
  .openapi('PromoCodeRequest');

export const affiliateBody = z
  .object({
    status: z.enum(AFFILIATE_STATUSES),
    name: text(200),
    logo_url: webUrl.nullable().optional(),
    platforms: z.array(z.object({ type: text(64), handle: text(200), verified: z.boolean() })).max(50),
    app_user_id: orNull(appUserId, 'string').optional(),
    codes: z.array(configuredCode).max(100),
    rewards: z.array(entryBody).max(100),
  })
  .openapi('AffiliateRequest');

export const poolCodesBody = z
  .object({
    codes: z
      .array(z.object({ value: handedOutValue(256), link: webUrl.nullable().optional(), expires_at: dateTime }))
      .min(1)
      .max(10_000),
  })
  .openapi('PoolCodesRequest');

export const adminRewardOut = rewardDefinitionWire.openapi('AdminReward', { description: 'A reward definition with its `kind` and the fields of that kind.' });

const storedEntryOut = z.object({
  reward_key: z.string(),
  activation: z.object({ variant: z.enum(['claim', 'conversion']), amount: z.number().int().optional(), limit: z.number().int().optional() }),
  deactivation: deactivationBody,
  clawback: z.enum(['none', 'on_refund']).optional(),
});

export const promoCodeOut = z
  .object({
    code: z.string(),
    description: z.string().nullable(),
    is_active: z.boolean(),
    limit: z.number().int(),
    rewards: z.array(storedEntryOut),
    stats: z.object({
      claims: z.number().int(),
      conversions: z.number().int(),
      refunds: z.number().int().openapi({ description: 'Refunds of conversions made through the code (SPEC §11: admin views only)' }),
    }),
    created_at: outDateTime,
    updated_at: outDateTime.nullable(),
  })
  .openapi('PromoCode');

export const adminAffiliateOut = z
  .object({
    id: z.string(),
    status: z.enum(AFFILIATE_STATUSES),
    name: z.string(),
    logo_url: z.string().nullable(),
    platforms: z.array(z.object({ type: z.string(), handle: z.string(), verified: z.boolean() })),
    app_user_id: z.string().nullable(),
    codes: z.array(z.object({ code: z.string(), code_link: z.string().nullable() })),
    rewards: z.array(storedEntryOut),
    stats: z.object({
      claims: z.number().int(),
      conversions: z.number().int(),
      earnings: z.number(),
      refunds: z.number().int().openapi({ description: "Refunds of conversions made through the affiliate's codes (SPEC §11: admin views only)" }),
    }),
    created_at: outDateTime,
    updated_at: outDateTime.nullable(),
  })
  .openapi('AdminAffiliate');

export const poolCodesOut = z.object({ added: z.number().int(), skipped: z.number().int(), available: z.number().int() }).openapi('PoolCodesResult');

export const poolFiguresOut = z
  .object({
    available: z.number().int().openapi({ description: 'Codes not handed out and not expired' }),
    used: z.number().int().openapi({ description: 'Codes handed out to a grant' }),
    expired: z.number().int().openapi({ description: 'Codes that expired before anyone got them' }),
    waiting: z.number().int().openapi({ description: 'Grants waiting for a code (the pool ran dry)' }),
  })
  .strict()
  .openapi('PoolFigures');

export type AdminRewardOut = z.input<typeof adminRewardOut>;
