import Stripe from 'stripe';
import { z } from 'zod';
import {
  currencyCode,
  type InboundRequest,
  inRange,
  jsonObject,
  type NotificationVerifier,
  WebhookMalformedError,
  WebhookUnauthorizedError,
} from '../../application/revenue/inbound-request.js';
import { LAST_TIME_MS } from '../../domain/rewards/expiry.js';
import { currencyDigits } from '../../domain/revenue/currency-digits.js';
import type { RevenueKind, RevenueNotification } from '../../domain/revenue/revenue-notification.js';

/**
 * Stripe's minor units where they are not ISO 4217's (Stripe's currencies guide): MGA is a
 * zero-decimal currency there, and ISK stays two-decimal (`100` is 1 króna). Every other amount
 * arrives in ISO 4217's minor units, the ones the log keeps for every provider.
 */
const STRIPE_DIGITS: Readonly<Record<string, number>> = { MGA: 0, ISK: 2 };

/** A Stripe amount in ISO 4217's minor units of its currency (any case); `source` names its field. */
function isoMinor(amount: number, currency: string, source: string): number {
  const iso = currencyDigits(currency);
  const shift = iso - (STRIPE_DIGITS[currency.toUpperCase()] ?? iso);
  return shift === 0 ? amount : inRange(Math.round(amount * 10 ** shift), source);
}

/** SPEC §11: Stripe-Signature timestamps older than this are refused (replays). */
const TOLERANCE_S = 300;

const id = z.string().min(1);
const idOrObject = z
  .union([id, z.object({ id })])
  .nullish()
  .transform((value) => (value == null ? null : typeof value === 'string' ? value : value.id));
/** A Stripe time (seconds since 1970), up to the last one the log can hold. */
const time = z
  .number()
  .int()
  .min(0)
  .max(Math.floor(LAST_TIME_MS / 1000));
const seconds = time.nullish();

const invoiceSchema = z.object({
  id,
  customer: idOrObject,
  subscription: idOrObject,
  parent: z.object({ subscription_details: z.object({ subscription: idOrObject }).nullish() }).nullish(),
  billing_reason: z.string().nullish(),
  amount_paid: z.number().int().min(0),
  currency: z.string(),
  lines: z
    .object({
      data: z.array(
        z.object({
          period: z.object({ start: seconds, end: seconds }).nullish(),
          price: z.object({ id, product: idOrObject }).nullish(),
          pricing: z.object({ price_details: z.object({ price: idOrObject, product: z.string().nullish() }).nullish() }).nullish(),
        }),
      ),
    })
    .nullish(),
});
const subscriptionSchema = z.object({
  id,
  customer: idOrObject,
  ended_at: seconds,
  current_period_end: seconds,
  items: z.object({ data: z.array(z.object({ price: z.object({ id }).nullish() })) }).nullish(),
});
const amount = z.number().int().min(0);
const chargeSchema = z.object({ id, customer: idOrObject, invoice: idOrObject, amount_refunded: amount, currency: z.string() });
/** A dispute names its charge: an id, or (expanded) the charge with its customer. */
const disputeSchema = z.object({
  id,
  charge: z.union([id.transform((chargeId) => ({ id: chargeId, customer: null, invoice: null })), z.object({ id, customer: idOrObject, invoice: idOrObject })]),
  amount,
  currency: z.string(),
});

const iso = (value: number | null | undefined) => (value == null ? null : new Date(value * 1000).toISOString());

function shape<S extends z.ZodTypeAny>(schema: S, value: unknown, what: string): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new WebhookMalformedError('BAD_REQUEST', `Not a Stripe ${what}: ${issue.message}`, `/data/object/${issue.path.join('/')}`);
  }
  return parsed.data;
}

/** A Stripe event, as far as it is read before its type's own object (each type parses that). */
export const stripeEventBody = z
  .object({
    id: z.string().min(1),
    type: z.string(),
    created: time,
    data: z
      .object({
        object: z
          .object({})
          .loose()
          .describe(
            "The event's object in Stripe's shape: the invoice of `invoice.paid`, the subscription of `customer.subscription.deleted`, the charge of `charge.refunded`, the dispute of `charge.dispute.created` (each needs its `id`, and amounts in minor units with their `currency`); another type is kept as `other`",
          ),
      })
      .loose(),
  })
  .loose();

/** Stripe: `Stripe-Signature` verified by the stripe library over the raw body (SPEC §11). */
export class StripeVerifier implements NotificationVerifier {
  readonly provider = 'stripe' as const;

  constructor(private readonly secret: string) {}

  async verify(request: InboundRequest): Promise<RevenueNotification> {
    const header = request.header('stripe-signature');
    if (!header) throw new WebhookUnauthorizedError('missing Stripe-Signature header');
    let event: { id: string; type: string; created: number; data: { object: unknown } };
    try {
      event = Stripe.webhooks.constructEvent(request.body, header, this.secret, TOLERANCE_S) as unknown as typeof event;
    } catch (error) {
      if (error instanceof Stripe.errors.StripeSignatureVerificationError) throw new WebhookUnauthorizedError(`bad Stripe-Signature: ${error.message}`);
      // The signature verified but the body is not JSON.
      throw new WebhookMalformedError('BODY_INVALID', 'The body is not valid JSON');
    }
    // The library bounds the signature's age only: a timestamp in the future stays valid until the
    // clock reaches it. SPEC §11's tolerance is a window on both sides, for every `t=` the header
    // holds (the library verifies with the last one), read as the library reads them.
    if (signatureStamps(header).some((signedAt) => !(signedAt <= Date.now() / 1000 + TOLERANCE_S)))
      throw new WebhookUnauthorizedError('bad Stripe-Signature: Timestamp outside the tolerance zone (in the future)');
    jsonObject(event);
    const envelope = stripeEventBody.safeParse(event);
    if (!envelope.success) {
      const issue = envelope.error.issues[0]!;
      throw new WebhookMalformedError('BAD_REQUEST', `Not a Stripe event (id, type, created, data.object): ${issue.message}`, `/${issue.path.join('/')}`);
    }
    const base = {
      provider: 'stripe' as const,
      notification_id: event.id,
      provider_type: event.type,
      occurred_at: iso(event.created)!,
    };
    const none = {
      transaction_id: null,
      original_transaction_id: null,
      product_id: null,
      price_minor: null,
      currency: null,
      period_start: null,
      period_end: null,
      is_trial: false,
    };
    const match = (customer: string | null) => ({ app_user_ids: [], account_token: null, customer_id: customer, linked_transaction: null });
    switch (event.type) {
      case 'invoice.paid': {
        const invoice = shape(invoiceSchema, event.data.object, 'invoice');
        const line = invoice.lines?.data[0];
        const kind: RevenueKind = invoice.billing_reason === 'subscription_cycle' ? 'renewal' : 'purchase';
        return {
          ...base,
          kind,
          transaction_id: invoice.id,
          original_transaction_id: invoice.subscription ?? invoice.parent?.subscription_details?.subscription ?? null,
          product_id: line?.price?.id ?? line?.pricing?.price_details?.price ?? null,
          price_minor: isoMinor(invoice.amount_paid, invoice.currency, '/data/object/amount_paid'),
          currency: currencyCode(invoice.currency, '/data/object/currency'),
          period_start: iso(line?.period?.start),
          period_end: iso(line?.period?.end),
          // A subscription's first invoice of 0 is its trial.
          is_trial: invoice.amount_paid === 0,
          match: match(invoice.customer),
        };
      }
      case 'customer.subscription.deleted': {
        const subscription = shape(subscriptionSchema, event.data.object, 'subscription');
        return {
          ...base,
          ...none,
          kind: 'expiry',
          original_transaction_id: subscription.id,
          product_id: subscription.items?.data[0]?.price?.id ?? null,
          period_end: iso(subscription.ended_at),
          match: match(subscription.customer),
        };
      }
      case 'charge.refunded': {
        const charge = shape(chargeSchema, event.data.object, 'charge');
        return {
          ...base,
          ...none,
          kind: 'refund',
          transaction_id: charge.invoice ?? charge.id,
          price_minor: isoMinor(charge.amount_refunded, charge.currency, '/data/object/amount_refunded'),
          currency: currencyCode(charge.currency, '/data/object/currency'),
          match: match(charge.customer),
        };
      }
      case 'charge.dispute.created': {
        const dispute = shape(disputeSchema, event.data.object, 'dispute');
        return {
          ...base,
          ...none,
          kind: 'refund',
          // A refund of its own: a dispute's amount is not a running total of the charge's refunds
          // (as `charge.refunded` sends), so it must not be taken for a repeat of them.
          transaction_id: dispute.id,
          // The purchase it takes back: its charge's invoice, when the charge comes expanded.
          refunded_transaction_id: dispute.charge.invoice,
          price_minor: isoMinor(dispute.amount, dispute.currency, '/data/object/amount'),
          currency: currencyCode(dispute.currency, '/data/object/currency'),
          // A dispute names no customer of its own: matched when its charge is expanded with one.
          match: match(dispute.charge.customer),
        };
      }
      default: {
        const object = event.data.object as { customer?: unknown };
        return { ...base, ...none, kind: 'other', match: match(typeof object?.customer === 'string' ? object.customer : null) };
      }
    }
  }
}

/** Every `t=` of a Stripe-Signature header, read as Stripe's library reads it (split on `,` and `=`, then parseInt). */
function signatureStamps(header: string): number[] {
  return header
    .split(',')
    .map((item) => item.split('='))
    .filter(([key]) => key === 't')
    .map(([, value]) => Number.parseInt(value ?? '', 10));
}
