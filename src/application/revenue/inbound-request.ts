import { currencyDigits } from '../../domain/revenue/currency-digits.js';
import { LAST_TIME_MS } from '../../domain/rewards/expiry.js';
import { isJsonObject } from '../../domain/json-object.js';
import type { RevenueNotification, RevenueProvider } from '../../domain/revenue/revenue-notification.js';

/** An inbound notification as received: the exact bytes (signatures cover them), headers, query. */
export interface InboundRequest {
  body: Buffer;
  header(name: string): string | undefined;
  query: Record<string, unknown>;
}

/** One provider's authentication and reading of its notifications (src/adapters/revenue/). */
export interface NotificationVerifier {
  provider: RevenueProvider;
  /** The notification, verified and normalised; throws the errors below. */
  verify(request: InboundRequest): Promise<RevenueNotification>;
}

/** The signature or token is missing or wrong, or it verifies for another app: 401, recorded without payload. */
export class WebhookUnauthorizedError extends Error {
  /**
   * `authenticated`: the provider's own signature holds, but the payload is for another app,
   * package or environment (a misconfiguration worth keeping a record of, never a stranger's
   * flood); it was read, so `notificationId` is its id.
   */
  constructor(
    readonly reason: string,
    readonly authenticated: { notificationId: string | null } | null = null,
  ) {
    super(reason);
    this.name = 'WebhookUnauthorizedError';
  }
}

/** Not JSON (`BODY_INVALID`) or verified but not the shape the provider documents (`BAD_REQUEST`): 400. */
export class WebhookMalformedError extends Error {
  constructor(
    readonly code: 'BODY_INVALID' | 'BAD_REQUEST',
    message: string,
    readonly source: string | null = null,
  ) {
    super(message);
    this.name = 'WebhookMalformedError';
  }
}

/** The body as a JSON object; `BODY_INVALID` when it is not JSON, or JSON but not an object (SPEC §9). */
export function parseJsonBody(body: Buffer): Record<string, unknown> {
  let parsed: unknown;
  try {
    // A leading byte order mark is read past, as the API's JSON bodies are.
    parsed = JSON.parse(body.toString('utf8').replace(/^\uFEFF/, ''));
  } catch {
    throw new WebhookMalformedError('BODY_INVALID', 'The body is not valid JSON');
  }
  return jsonObject(parsed);
}

/** `value` when it is a JSON object; `BODY_INVALID` otherwise (an array, a string, null…). */
export function jsonObject(value: unknown): Record<string, unknown> {
  if (!isJsonObject(value)) throw new WebhookMalformedError('BODY_INVALID', 'The body must be a JSON object');
  return value;
}

/**
 * A currency as the log keeps it: ISO 4217's three letters, upper case (Stripe sends `eur`, Apple
 * `EUR`: one currency is one row in the figures). Anything else in a verified payload is 400.
 */
export function currencyCode<C extends string | null>(currency: C, source: string): C {
  if (currency === null) return currency;
  if (!ISO_CURRENCY.test(currency)) throw new WebhookMalformedError('BAD_REQUEST', 'The currency is not an ISO 4217 code (three letters)', source);
  return currency.toUpperCase() as C;
}

/** An ISO 4217 currency code as providers send it (any case). */
export const ISO_CURRENCY = /^[A-Za-z]{3}$/;

/** Money as the log keeps it from every provider: never negative, in an upper-case ISO 4217 code (`currencyCode`). */
export function recordableMoney(money: { price_minor: number | null; currency: string | null }): boolean {
  const { price_minor, currency } = money;
  return (price_minor === null || price_minor >= 0) && (currency === null || (ISO_CURRENCY.test(currency) && currency === currency.toUpperCase()));
}

/** Money in integer minor units of `currency` (ISO 4217 digits: 2 for EUR, 0 for JPY); `source` names the amount's field. */
export function minorUnits(currency: string, amountInMajor: number, source: string): number {
  return inRange(Math.round(amountInMajor * 10 ** currencyDigits(currency)), source);
}

/**
 * An amount in minor units the log can hold (a safe integer); a verified notification with a price
 * beyond it (1e300) is malformed: 400 naming the field (`source`), not a failure to record it.
 */
export function inRange(minor: number, source: string): number {
  if (!Number.isSafeInteger(minor)) throw new WebhookMalformedError('BAD_REQUEST', 'An amount in the notification is out of range', source);
  return minor;
}

/** Milliseconds since 1970 as an ISO time; null when absent or not positive; 400 past the year 9999, naming the field (`source`). */
export function isoFromMillis(value: unknown, source: string): string | null {
  const number = typeof value === 'string' ? Number(value) : value;
  if (typeof number !== 'number' || !(number > 0)) return null;
  if (!(number <= LAST_TIME_MS)) throw new WebhookMalformedError('BAD_REQUEST', 'A time in the notification is out of range', source);
  return new Date(number).toISOString();
}
