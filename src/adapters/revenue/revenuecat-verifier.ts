import { sameSecret } from '../system/same-secret.js';
import { z } from 'zod';
import {
  currencyCode,
  ISO_CURRENCY,
  type InboundRequest,
  isoFromMillis,
  minorUnits,
  type NotificationVerifier,
  parseJsonBody,
  WebhookMalformedError,
  WebhookUnauthorizedError,
} from '../../application/revenue/inbound-request.js';
import type { RevenueKind, RevenueNotification } from '../../domain/revenue/revenue-notification.js';
import { LAST_TIME_MS } from '../../domain/rewards/expiry.js';

/** Milliseconds since 1970, up to the end of the year 9999 (the log's last time). */
const epochMillis = z.number().max(LAST_TIME_MS).nullish();

/** A RevenueCat webhook's body: the event (the fields read here; others are ignored). */
export const revenueCatWebhookBody = z.object({
  event: z
    .object({
      id: z.string().min(1),
      type: z.string(),
      app_user_id: z.string().nullish(),
      original_app_user_id: z.string().nullish(),
      aliases: z.array(z.string()).nullish(),
      product_id: z.string().nullish(),
      period_type: z.string().nullish(),
      /** PROMOTIONAL: an entitlement granted, not bought (RevenueCat's own, or this service's fulfilment). */
      store: z.string().nullish(),
      purchased_at_ms: epochMillis,
      expiration_at_ms: epochMillis,
      event_timestamp_ms: epochMillis,
      price_in_purchased_currency: z.number().nullish(),
      /** ISO 4217, any case (kept upper case by currencyCode); the pattern shows in the API document. */
      currency: z.string().regex(ISO_CURRENCY).nullish(),
      transaction_id: z.string().nullish(),
      original_transaction_id: z.string().nullish(),
      cancel_reason: z.string().nullish(),
    })
    .describe(
      'A purchase, renewal, expiry or refund (a CANCELLATION for CUSTOMER_SUPPORT) names its user: a non-empty `app_user_id`, `original_app_user_id` or one of `aliases`',
    ),
});

/** RevenueCat event types → what they mean for revenue (a refund is a CANCELLATION for CUSTOMER_SUPPORT). */
function kindOf(type: string, cancelReason: string | null | undefined): RevenueKind {
  switch (type) {
    case 'INITIAL_PURCHASE':
    case 'NON_RENEWING_PURCHASE':
      return 'purchase';
    case 'RENEWAL':
      return 'renewal';
    case 'EXPIRATION':
      return 'expiry';
    case 'CANCELLATION':
      return cancelReason === 'CUSTOMER_SUPPORT' ? 'refund' : 'other';
    default:
      return 'other';
  }
}

/** RevenueCat webhooks: the Authorization header must equal REVENUECAT_WEBHOOK_AUTH (compared in constant time). */
export class RevenueCatVerifier implements NotificationVerifier {
  readonly provider = 'revenuecat' as const;

  constructor(private readonly expectedAuthorization: string) {}

  async verify(request: InboundRequest): Promise<RevenueNotification> {
    const given = request.header('authorization') ?? '';
    if (!sameSecret(given, this.expectedAuthorization)) {
      throw new WebhookUnauthorizedError(given.length === 0 ? 'missing Authorization header' : 'wrong Authorization header');
    }
    const parsed = revenueCatWebhookBody.safeParse(parseJsonBody(request.body));
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new WebhookMalformedError('BAD_REQUEST', `Not a RevenueCat event: ${issue.message}`, `/${issue.path.join('/')}`);
    }
    const { event } = parsed.data;
    const currency = currencyCode(event.currency ?? null, '/event/currency');
    const price = event.price_in_purchased_currency;
    const appUserIds = [event.app_user_id, event.original_app_user_id, ...(event.aliases ?? [])].filter(
      (id): id is string => typeof id === 'string' && id.length > 0,
    );
    const kind = kindOf(event.type, event.cancel_reason);
    // RevenueCat names the user of every purchase, renewal, refund and expiry (a TRANSFER, which
    // records nothing, may name none): one without is not RevenueCat's shape, and would wait unmatched for ever.
    if (kind !== 'other' && appUserIds.length === 0) {
      throw new WebhookMalformedError(
        'BAD_REQUEST',
        `A RevenueCat ${event.type} names its user (app_user_id, original_app_user_id or aliases)`,
        '/event/app_user_id',
      );
    }
    return {
      provider: 'revenuecat',
      notification_id: event.id,
      provider_type: event.type,
      kind,
      occurred_at:
        isoFromMillis(event.event_timestamp_ms, '/event/event_timestamp_ms') ??
        isoFromMillis(event.purchased_at_ms, '/event/purchased_at_ms') ??
        new Date().toISOString(),
      transaction_id: event.transaction_id ?? null,
      original_transaction_id: event.original_transaction_id ?? null,
      product_id: event.product_id ?? null,
      price_minor: currency !== null && typeof price === 'number' ? Math.abs(minorUnits(currency, price, '/event/price_in_purchased_currency')) : null,
      currency,
      period_start: isoFromMillis(event.purchased_at_ms, '/event/purchased_at_ms'),
      period_end: isoFromMillis(event.expiration_at_ms, '/event/expiration_at_ms'),
      is_trial: event.period_type === 'TRIAL' || event.store === 'PROMOTIONAL' || price === 0,
      match: { app_user_ids: [...new Set(appUserIds)], account_token: null, customer_id: null, linked_transaction: null },
    };
  }
}
