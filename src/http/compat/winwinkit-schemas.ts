import { CLAIM_ONLY_RECEIVER_KINDS, REPEATABLE_SENDER_KINDS, REWARD_KINDS, type RewardKind } from '../../domain/rewards/reward-kinds.js';
import { jsonObject, outDateTime } from '../schemas/common.js';
import { affiliateOut, upsertUserBody, userOut, withdrawResultOut } from '../schemas/users.js';
import { z } from '../schemas/zod-openapi.js';
import { AFFILIATE_PLATFORMS, CUSTOMER_ID, KIND_ON_WIRE, type WireKind } from './winwinkit-wire.js';

/**
 * The answers of the WinWinKit-compatible surface, as strict as the SDKs' models (SPEC §15):
 * every kind has its own reward, entry and activation shape, enums are closed, integers are
 * integers. They describe the mount in /openapi.json, so the API suite's response validation
 * holds the mount to them. Names are the wire's (`googleplay_promo_code`, `stripe_customer_id`, …).
 */
const name = (component: string) => `WinWinKit${component}`;
const int = () => z.number().int();

/** Fields of each kind's reward definition beyond the common ones. */
const DEFINITION_FIELDS: Record<RewardKind, Record<string, z.ZodTypeAny>> = {
  basic: {},
  credit: { credits: int() },
  offer_code: { offer_code_id: z.string(), offer_code_ref_name: z.string(), subscription_product_id: z.string() },
  store_promo_code: {},
  partner_entitlement: { entitlement_id: z.string(), entitlement_key: z.string() },
  partner_offering: { offering_id: z.string(), offering_key: z.string() },
};

const COMPONENT: Record<RewardKind, string> = {
  basic: 'Basic',
  credit: 'Credit',
  offer_code: 'OfferCode',
  store_promo_code: 'GooglePlayPromoCode',
  partner_entitlement: 'RevenueCatEntitlement',
  partner_offering: 'RevenueCatOffering',
};

const definition = (kind: RewardKind) =>
  z
    .object({
      key: z.string(),
      name: z.string(),
      description: z.string().nullable(),
      metadata: jsonObject,
      ...DEFINITION_FIELDS[kind],
      created_at: outDateTime,
      updated_at: outDateTime.nullable(),
    })
    .strict()
    .openapi(name(`${COMPONENT[kind]}Reward`));

const definitions = Object.fromEntries(REWARD_KINDS.map((kind) => [kind, definition(kind)])) as Record<RewardKind, ReturnType<typeof definition>>;

const offerCodeValue = z.object({ value: z.string(), link: z.string(), expires_at: outDateTime }).strict().openapi(name('OfferCodeValue'));
const promoCodeValue = z.object({ value: z.string(), expires_at: outDateTime }).strict().openapi(name('GooglePlayPromoCodeValue'));

const activeEntry = (kind: RewardKind) =>
  z
    .object({
      reward: definitions[kind],
      ...(kind === 'credit' ? { credits: int() } : {}),
      ...(kind === 'offer_code' ? { value: offerCodeValue.nullable() } : {}),
      ...(kind === 'store_promo_code' ? { value: promoCodeValue.nullable() } : {}),
      expires_at: outDateTime.nullable(),
      created_at: outDateTime,
      updated_at: outDateTime.nullable(),
    })
    .strict()
    .openapi(name(`User${COMPONENT[kind]}RewardActive`));

/** Expired entries: `expired_at` may be null only for the RevenueCat kinds (the SDKs' models). */
const expiredEntry = (kind: RewardKind) =>
  z
    .object({
      reward: definitions[kind],
      expired_at: kind === 'partner_entitlement' || kind === 'partner_offering' ? outDateTime.nullable() : outDateTime,
      created_at: outDateTime,
      updated_at: outDateTime.nullable(),
    })
    .strict()
    .openapi(name(`User${COMPONENT[kind]}RewardExpired`));

const deactivation = z
  .union([
    z.object({ variant: z.literal('never') }).strict(),
    z.object({ variant: z.literal('interval'), duration: int(), period: z.enum(['days', 'months', 'years']) }).strict(),
  ])
  .openapi(name('Deactivation'));

const programEntry = (kind: RewardKind, role: 'sender' | 'receiver') =>
  z
    .object({
      reward: definitions[kind],
      activation:
        role === 'receiver'
          ? z.object({ variant: CLAIM_ONLY_RECEIVER_KINDS.includes(kind) ? z.enum(['claim']) : z.enum(['claim', 'conversion']) }).strict()
          : z.object({ variant: z.enum(['claim', 'conversion']), amount: int(), ...(REPEATABLE_SENDER_KINDS.includes(kind) ? { limit: int() } : {}) }).strict(),
      deactivation,
    })
    .strict()
    .openapi(name(`ReferralProgram${role === 'sender' ? 'Sender' : 'Receiver'}${COMPONENT[kind]}Reward`));

/** The six wire-named arrays, each of `item(kind)`. */
function byWireKind(item: (kind: RewardKind) => z.ZodTypeAny) {
  return z
    .object(Object.fromEntries(REWARD_KINDS.map((kind) => [KIND_ON_WIRE[kind], z.array(item(kind))])) as Record<WireKind, z.ZodArray<z.ZodTypeAny>>)
    .strict();
}

const senderRewards = byWireKind((kind) => programEntry(kind, 'sender')).openapi(name('ReferralProgramSenderRewards'));
const receiverRewards = byWireKind((kind) => programEntry(kind, 'receiver')).openapi(name('ReferralProgramReceiverRewards'));

const wireProgram = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    metadata: jsonObject,
    distribution_percentage: int(),
    limit: int(),
    rewards: z.object({ sender: senderRewards, receiver: receiverRewards }).strict(),
    created_at: outDateTime,
    updated_at: outDateTime.nullable(),
  })
  .strict()
  .openapi(name('ReferralProgram'));

const wireRewardsGranted = byWireKind(activeEntry).openapi(name('UserRewardsGranted'));

/** The native user with the wire's names: the customer id renamed, rewards and program by wire kind. */
const wireUser = userOut
  .omit({ [CUSTOMER_ID.native]: true, stats: true, rewards: true, referral_program: true, metadata: true })
  .extend({
    metadata: jsonObject,
    [CUSTOMER_ID.wire]: z.string().nullable(),
    stats: z.object({ claims: int(), conversions: int(), churns: int() }).strict(),
    rewards: z.object({ active: byWireKind(activeEntry), expired: byWireKind(expiredEntry) }).strict(),
    referral_program: z.union([wireProgram, z.null()]),
  })
  .strict()
  .openapi(name('User'));

/** Requests: the native bodies with the wire's names. */
export const wireUpsertUserBody = upsertUserBody
  .omit({ [CUSTOMER_ID.native]: true })
  .extend({ [CUSTOMER_ID.wire]: upsertUserBody.shape[CUSTOMER_ID.native] })
  .openapi(name('UpsertUserRequest'));

const data = <T extends z.ZodRawShape>(shape: T) => z.object({ data: z.object(shape).strict() }).strict();
export const wireUserResponse = data({ user: wireUser });
export const wireGetUserResponse = data({ user: wireUser, affiliate: z.union([affiliateOut, z.null()]) });
export const wireClaimResponse = data({ rewards_granted: wireRewardsGranted, user: wireUser });
export const wireWithdrawResponse = data({ withdraw_result: withdrawResultOut, user: wireUser });

/** `GET /codes/{code}`: the entity by type (referrer, promo limit, affiliate with its known platforms). */
const codeBase = { code: z.string(), is_active: z.boolean(), rewards: receiverRewards };
export const wireCodeResponse = z
  .object({
    data: z
      .discriminatedUnion('type', [
        z.object({ type: z.literal('referral'), ...codeBase, entity: z.object({ app_user_id: z.string() }).strict() }).strict(),
        z.object({ type: z.literal('promo'), ...codeBase, entity: z.object({ limit: int() }).strict() }).strict(),
        z
          .object({
            type: z.literal('affiliate'),
            ...codeBase,
            entity: z
              .object({
                name: z.string(),
                logo_url: z.string().nullable(),
                platforms: z.array(z.object({ type: z.enum(AFFILIATE_PLATFORMS), handle: z.string(), verified: z.boolean() }).strict()),
              })
              .strict(),
          })
          .strict(),
      ])
      .openapi(name('Code')),
  })
  .strict();
