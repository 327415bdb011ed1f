import Stripe from 'stripe';
import type { TestService } from './test-service.js';

export const STRIPE_SECRET = 'whsec_test_secret_for_the_suite';
export const REVENUECAT_AUTH = 'Bearer rc-test-webhook-auth';

export async function post(svc: TestService, pathname: string, body: string | Buffer, headers: Record<string, string> = {}) {
  const response = await fetch(`${svc.url}${pathname}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/** A Stripe event signed with Stripe's own test-signature helper. */
export function stripeEvent(svc: TestService, event: { id: string; type: string; object: Record<string, unknown> }, secret = STRIPE_SECRET) {
  const payload = JSON.stringify({ id: event.id, object: 'event', type: event.type, created: Math.floor(Date.now() / 1000), data: { object: event.object } });
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret });
  return post(svc, '/webhooks/stripe', payload, { 'stripe-signature': signature });
}

export const invoicePaid = (id: string, customer: string, amount = 999, reason = 'subscription_create') => ({
  id: `evt_${id}`,
  type: 'invoice.paid',
  object: {
    id: `in_${id}`,
    object: 'invoice',
    customer,
    subscription: `sub_${customer}`,
    billing_reason: reason,
    amount_paid: amount,
    currency: 'eur',
    lines: { data: [{ period: { start: 1_790_000_000, end: 1_792_600_000 }, price: { id: 'price_monthly' } }] },
  },
});
export const chargeRefunded = (id: string, customer: string, invoice: string, amount = 999) => ({
  id: `evt_${id}`,
  type: 'charge.refunded',
  object: { id: `ch_${id}`, object: 'charge', customer, invoice, amount_refunded: amount, currency: 'eur' },
});

export function revenueCat(svc: TestService, event: Record<string, unknown>, auth = REVENUECAT_AUTH) {
  return post(svc, '/webhooks/revenuecat', JSON.stringify({ api_version: '1.0', event }), { authorization: auth });
}

export const rcEvent = (id: string, type: string, appUserId: string, extra: Record<string, unknown> = {}) => ({
  id,
  type,
  app_user_id: appUserId,
  original_app_user_id: appUserId,
  aliases: [appUserId],
  product_id: 'premium_monthly',
  period_type: 'NORMAL',
  purchased_at_ms: 1_790_000_000_000,
  expiration_at_ms: 1_792_600_000_000,
  event_timestamp_ms: 1_790_000_000_000,
  price_in_purchased_currency: 4.99,
  currency: 'USD',
  transaction_id: `tx-${id}`,
  original_transaction_id: `otx-${appUserId}`,
  ...extra,
});
