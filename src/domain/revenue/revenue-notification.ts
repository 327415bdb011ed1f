import { z } from 'zod';
import { isoDateTime } from '../rewards/reward-schemas.js';

/** The stores and billing providers whose notifications the service takes in (SPEC §11). */
export const REVENUE_PROVIDERS = ['app-store', 'google-play', 'revenuecat', 'stripe'] as const;
export type RevenueProvider = (typeof REVENUE_PROVIDERS)[number];

/**
 * What a notification means for revenue: a paid (or trial) purchase, a renewal, a refund
 * (refund, revocation or chargeback), an expiry without renewal, or nothing we act on (`other`:
 * test pings, renewal-preference changes…), which is still kept in the inbox.
 */
const REVENUE_KINDS = ['purchase', 'renewal', 'refund', 'expiry', 'other'] as const;
export type RevenueKind = (typeof REVENUE_KINDS)[number];

/** How to find the notification's user, in SPEC §11's order (first that applies wins). */
const matchKeysSchema = z.object({
  /** Candidates that are app_user_ids themselves, in order (RevenueCat app_user_id, original, aliases; Play obfuscatedExternalAccountId). */
  app_user_ids: z.array(z.string()),
  /** App Store appAccountToken: the user's account token (UUIDv5 of its app_user_id). */
  account_token: z.string().nullable(),
  /** Stripe customer id, matched to payment_customer_id. */
  customer_id: z.string().nullable(),
  /** A transaction (App Store originalTransactionId, Play purchase token) already linked to a user. */
  linked_transaction: z.string().nullable(),
});
export type MatchKeys = z.infer<typeof matchKeysSchema>;

/** Every provider's notification in one shape; money in integer minor units of `currency`. */
export const revenueNotificationSchema = z.object({
  provider: z.enum(REVENUE_PROVIDERS),
  /** The provider's notification id: App Store notificationUUID, Pub/Sub messageId, RevenueCat/Stripe event.id. */
  notification_id: z.string().min(1),
  /** The provider's own name for it (e.g. DID_RENEW, INITIAL_PURCHASE, invoice.paid). */
  provider_type: z.string(),
  kind: z.enum(REVENUE_KINDS),
  occurred_at: isoDateTime,
  transaction_id: z.string().nullable(),
  /** The id that stays the same across renewals (App Store originalTransactionId, Play purchase token, Stripe subscription/charge). */
  original_transaction_id: z.string().nullable(),
  /**
   * A refund whose `transaction_id` is its own (a Stripe dispute): the transaction it takes back,
   * when the provider says (the disputed charge's invoice). Absent for the others.
   */
  refunded_transaction_id: z.string().nullable().optional(),
  product_id: z.string().nullable(),
  price_minor: z.number().int().nullable(),
  currency: z.string().nullable(),
  period_start: isoDateTime.nullable(),
  period_end: isoDateTime.nullable(),
  /**
   * Not a payment (SPEC §11: trials are not conversions): a free trial, and any access the user
   * did not pay for — a price of 0, a promotional grant, a purchase a family member shares.
   */
  is_trial: z.boolean(),
  match: matchKeysSchema,
});
export type RevenueNotification = z.infer<typeof revenueNotificationSchema>;

/** The user-stream event type a notification of each kind records. */
export const RECORDED_TYPE = {
  purchase: 'PurchaseRecorded',
  renewal: 'RenewalRecorded',
  refund: 'RefundRecorded',
  expiry: 'SubscriptionExpired',
} as const;

/** The id of a notification across providers (providers' ids may collide with each other). */
export function notificationKey(provider: RevenueProvider, notificationId: string): string {
  return `${provider}:${notificationId}`;
}
