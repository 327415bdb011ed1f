import { z } from 'zod';
import { REWARD_KINDS } from '../rewards/reward-kinds.js';
import { isoDateTime, jsonObject } from '../rewards/reward-schemas.js';
import { codeTypeSchema } from './code-events.js';
import { claimHoldSchema } from './fraud-events.js';
import { purchaseRefSchema, revenueUserEvents } from './revenue-events.js';

/** Events of the `user-{app_user_id}` stream: everything one user's responses show. */

const referredBySchema = z.object({
  claim_id: z.string(),
  code: z.string(),
  type: codeTypeSchema,
  /** Referrer's app_user_id, promo code, or affiliate id. */
  owner_id: z.string(),
});
export type ReferredByFact = z.infer<typeof referredBySchema>;

const profileFields = {
  is_trial: z.boolean().nullable(),
  is_premium: z.boolean().nullable(),
  first_seen_at: isoDateTime.nullable(),
  metadata: jsonObject.nullable(),
  payment_customer_id: z.string().nullable(),
};

const grantCauseSchema = z.discriminatedUnion('type', [
  /** Receiver reward for claiming `code`. */
  z.object({ type: z.literal('claim'), code: z.string(), claim_id: z.string() }),
  /** Receiver reward for converting after claiming `code`. */
  z.object({ type: z.literal('conversion'), code: z.string() }),
  /** Sender reward: the referrer's count of claims/conversions reached `count`. */
  z.object({
    type: z.literal('referrals'),
    variant: z.enum(['claim', 'conversion']),
    count: z.number().int(),
    claimer: z.string(),
    program_id: z.string(),
  }),
  z.object({ type: z.literal('manual'), operation_id: z.string().nullable() }),
]);
export type GrantCause = z.infer<typeof grantCauseSchema>;

const pooledValueSchema = z.object({
  value: z.string(),
  link: z.string().nullable(),
  expires_at: isoDateTime,
});
export type PooledValue = z.infer<typeof pooledValueSchema>;

export const userEvents = {
  UserRegistered: z.object({ app_user_id: z.string(), registered_at: isoDateTime, ...profileFields }),
  /** Only the fields that changed. */
  UserProfileUpdated: z.object({ changes: z.object(profileFields).partial() }),
  ReferralProgramAssigned: z.object({ program_id: z.string(), referral_code: z.string() }),
  /** `hold`: a fraud rule with action `hold` let the claim through; its referrer's rewards wait for the review (SPEC §13). */
  CodeClaimed: referredBySchema.extend({ claimed_at: isoDateTime, program_id: z.string().nullable(), hold: claimHoldSchema.optional() }),
  /**
   * A claim that took its code's slot and did not happen: refused after the slot was taken (a
   * `payment_customer_claimers` rule, or a failed append), or left unrecorded by a crash and found
   * by the repair or by the claimer's next claim (as it takes a slot of the full code, or once it
   * is recorded). The slot is released after it (`ClaimSlotReleased`).
   */
  ClaimAbandoned: z.object({ claim_id: z.string(), code: z.string() }),
  /**
   * v3: `source` says what counted it (CONVERSIONS_FROM, SPEC §11): the client's is_premium, or a
   * verified purchase (`purchase`, so a refund of it finds the conversion); `program_id` is the
   * claim's program (attribution).
   */
  UserConverted: z.object({
    converted_at: isoDateTime,
    referred_by: referredBySchema,
    source: z.enum(['client', 'verified']),
    purchase: purchaseRefSchema.nullable(),
    program_id: z.string().nullable(),
  }),
  /** v4: `program_id` is the claim's program (analytics by program), null before v4. */
  UserChurned: z.object({ churned_at: isoDateTime, referred_by: referredBySchema, program_id: z.string().nullable() }),
  /**
   * One grant. `entry_id` names the reward entry it opens or adds to (SPEC §5.3): credit grants
   * of one reward with the same `expires_at` accumulate in one entry, whose id is the grant_id of
   * its first grant; every other grant opens its own entry (`entry_id` = `grant_id`). Elsewhere
   * (`RewardValueAssigned`, `RewardExpired`, `CreditsWithdrawn.debits`) `grant_id` names an entry.
   */
  RewardGranted: z.object({
    grant_id: z.string(),
    entry_id: z.string(),
    reward_key: z.string(),
    kind: z.enum(REWARD_KINDS),
    /** Credits this grant adds (credit rewards); null for other kinds. */
    credits: z.number().int().nullable(),
    granted_at: isoDateTime,
    expires_at: isoDateTime.nullable(),
    cause: grantCauseSchema,
    /** v3: the entry's clawback policy when granted (SPEC §11): revoked if the converting purchase is refunded. */
    clawback: z.enum(['none', 'on_refund']),
    /** For credit rewards: the user's active credits of this key after the grant. */
    balance_after: z.number().int().nullable(),
  }),
  /** A manual grant with an operation_id found the (non-stacking) reward already active: nothing added, the operation remembered. */
  RewardGrantSkipped: z.object({ reward_key: z.string(), operation_id: z.string(), reason: z.literal('already_active') }),
  RewardValueAssigned: z.object({ grant_id: z.string(), assigned_at: isoDateTime, value: pooledValueSchema }),
  RewardExpired: z.object({
    grant_id: z.string(),
    reward_key: z.string(),
    kind: z.enum(REWARD_KINDS),
    expired_at: isoDateTime,
    credits_forfeited: z.number().int().nullable(),
    balance_after: z.number().int().nullable(),
  }),
  CreditsWithdrawn: z.object({
    operation_id: z.string().nullable(),
    key: z.string(),
    withdrawn_at: isoDateTime,
    credits_requested_to_withdraw: z.number().int(),
    credits_withdrawn: z.number().int(),
    credits_available_at_start: z.number().int(),
    credits_available_at_end: z.number().int(),
    /** Which entries were drained, in drain order. */
    debits: z.array(z.object({ grant_id: z.string(), credits: z.number().int() })),
  }),
  /** Counted on the referrer's stream by the referral process manager. */
  /** `cause_position`: global position of the claimer's event; reactions apply in log order, so
   * a cause at or below the last counted one was already counted (idempotent reprocessing). */
  ReferralClaimCounted: z.object({ claimer: z.string(), code: z.string(), claims: z.number().int(), cause_position: z.string() }),
  ReferralConversionCounted: z.object({ claimer: z.string(), conversions: z.number().int(), cause_position: z.string() }),
  ReferralChurnCounted: z.object({ claimer: z.string(), churns: z.number().int(), cause_position: z.string() }),
  /**
   * The user's personal fields were erased (SPEC §13): their data keys destroyed, so every
   * earlier value of `fields` reads as null; `erased_events` are the ids of the user's events
   * that held such a value. Holds no personal data itself.
   */
  UserErased: z.object({ erased_at: isoDateTime, fields: z.array(z.string()), erased_events: z.array(z.string()) }),
  /** Verified revenue and clawbacks (SPEC §11): src/domain/events/revenue-events.ts. */
  ...revenueUserEvents,
};

/** One grant as recorded (`RewardGranted` data): what `rewards_granted` shows. */
export type GrantedFact = z.infer<typeof userEvents.RewardGranted>;
