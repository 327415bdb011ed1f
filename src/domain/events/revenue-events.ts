import { z } from 'zod';
import { codeTypeSchema } from './code-events.js';
import { REVENUE_PROVIDERS, revenueNotificationSchema } from '../revenue/revenue-notification.js';
import { isoDateTime } from '../rewards/reward-schemas.js';
import { REWARD_KINDS } from '../rewards/reward-kinds.js';

/** A purchase that a revenue event or a conversion refers to. */
export const purchaseRefSchema = z.object({
  provider: z.enum(REVENUE_PROVIDERS),
  notification_id: z.string(),
  transaction_id: z.string().nullable(),
  original_transaction_id: z.string().nullable(),
});
export type PurchaseRef = z.infer<typeof purchaseRefSchema>;

/** The code a revenue event counts for (analytics, attribution). */
const revenueSourceSchema = z.object({ code: z.string(), type: codeTypeSchema, owner_id: z.string(), program_id: z.string().nullable() });
export type RevenueSource = z.infer<typeof revenueSourceSchema>;

/** Where the user came from when the revenue was recorded (for attribution), null when it claimed nothing. */
const attributionSchema = revenueSourceSchema.nullable();

const revenueFact = revenueNotificationSchema.omit({ match: true }).extend({
  recorded_at: isoDateTime,
  attribution: attributionSchema,
});

/**
 * Events of the inbound streams: `inbound-{provider}-{notification_id}` holds one verified
 * notification (the stream's uniqueness is the deduplication); `inbound-rejected-{id}` one
 * refused delivery.
 */
export const inboundEvents = {
  /** A verified notification, normalised; `app_user_id` is its user when matched on receipt. */
  NotificationReceived: z.object({ received_at: isoDateTime, notification: revenueNotificationSchema, app_user_id: z.string().nullable() }),
  /**
   * A notification refused (bad signature, wrong app): recorded without its payload.
   * `notification_id`: the provider's id when the provider's signature held but the payload is
   * for another app, package or environment (it was read); null when it could not be trusted.
   */
  NotificationRejected: z.object({
    provider: z.enum(REVENUE_PROVIDERS),
    received_at: isoDateTime,
    reason: z.string(),
    notification_id: z.string().min(1).nullable(),
  }),
};

/** Events of the user stream about verified revenue: what a notification meant for that user, and clawbacks. */
export const revenueUserEvents = {
  /**
   * `refunded_before`: a refund of it was recorded first (out of order): it neither makes the
   * user premium nor converts it. `expired_before`: an expiry of its subscription that happened
   * after it was recorded first (out of order): it converts the user, who churns at once, and
   * does not make it premium. `repeats_purchase`: a purchase or renewal of the same transaction
   * was recorded before (for this user or another), under another notification id (a provider
   * sending one payment twice): kept as a fact, not counted as revenue again, and it changes
   * nothing else; present (true) on a repeat only.
   */
  PurchaseRecorded: revenueFact.extend({ refunded_before: z.boolean(), expired_before: z.boolean(), repeats_purchase: z.boolean().optional() }),
  RenewalRecorded: revenueFact.extend({ refunded_before: z.boolean(), expired_before: z.boolean(), repeats_purchase: z.boolean().optional() }),
  /**
   * `reverses_conversion`: the refunded purchase is the one that converted this user (clawback due).
   * `conversion_attribution`: on such a refund whose purchase counted for no code (`attribution`
   * null: paid before the claim), the code the conversion counted for: the refund counts there as
   * that conversion's, its money does not (the purchase's never did). Absent otherwise (and on
   * refunds recorded before 2026-11-29, which counted for no code).
   * `repeats_refund`: a refund of the same transaction was recorded before (Apple sends REFUND,
   * then REVOKE; Stripe sends charge.refunded for each partial refund, with the running total):
   * kept as a fact, not counted as another refund; `adds_refunded_minor` is what it refunds
   * beyond the refunds of that transaction recorded before (0 for Apple's pair). Both are present
   * on a repeat only: a first refund has neither, and refunds its `price_minor`.
   */
  RefundRecorded: revenueFact.extend({
    reverses_conversion: z.boolean(),
    conversion_attribution: revenueSourceSchema.optional(),
    repeats_refund: z.boolean().optional(),
    adds_refunded_minor: z.number().int().min(0).optional(),
  }),
  SubscriptionExpired: revenueFact,
  /**
   * A grant taken back because the purchase that earned it was refunded (SPEC §11 clawback).
   * Credits: `debits` drained from entries of the key (unspent), `shortfall` the part already
   * spent (the balance never goes below 0). Other kinds: the entry ends at once.
   */
  RewardRevoked: z.object({
    grant_id: z.string(),
    entry_id: z.string(),
    reward_key: z.string(),
    kind: z.enum(REWARD_KINDS),
    revoked_at: isoDateTime,
    credits_granted: z.number().int().nullable(),
    debits: z.array(z.object({ grant_id: z.string(), credits: z.number().int() })),
    shortfall: z.number().int().nullable(),
    balance_after: z.number().int().nullable(),
    /** The converted user whose refunded purchase caused it, and the refund notification. */
    claimer: z.string(),
    refund: purchaseRefSchema,
  }),
};
