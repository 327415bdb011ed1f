import { currencyDigits } from '../../src/domain/revenue/currency-digits';

/**
 * The value of an optional text field to send: what was typed, or for an empty field null, unless
 * the definition being edited stored "" there (an empty field shows both): saving an edit that
 * changed nothing sends back what was stored.
 */
export const typedOrNull = (typed: string, stored: string | null): string | null => (typed !== '' ? typed : stored === '' ? '' : null);

/** Numbers, money and dates in the browser's locale. */
const locale = navigator.language || undefined;
const integer = new Intl.NumberFormat(locale, { maximumFractionDigits: 0 });
const dateTime = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' });
const day = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeZone: 'UTC' });
const shortDay = new Intl.DateTimeFormat(locale, { month: 'short', day: 'numeric', timeZone: 'UTC' });

export const formatNumber = (value: number): string => integer.format(value);

export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dateTime.format(date);
}

/** A UTC calendar day (`YYYY-MM-DD`), as the analytics API counts them. */
export function formatDay(isoDay: string): string {
  return day.format(new Date(`${isoDay}T00:00:00Z`));
}

/** A chart tick: seconds since the epoch at a UTC midnight. */
export const formatShortDay = (seconds: number): string => shortDay.format(new Date(seconds * 1000));

/** An amount in minor units (cents) of an ISO currency. */
export function formatMoney(minor: number, currency: string): string {
  try {
    // The API's minor units are ISO 4217's (the service's own table), whatever the browser's locale data says.
    const digits = currencyDigits(currency);
    const format = new Intl.NumberFormat(locale, { style: 'currency', currency, minimumFractionDigits: digits, maximumFractionDigits: digits });
    return format.format(minor / 10 ** digits);
  } catch {
    return `${formatNumber(minor)} ${currency} (minor units)`;
  }
}

/**
 * `[{currency, gross_minor, refunded_minor}]` as the analytics API gives them, one per currency:
 * the gross amount, and what was refunded of it when anything was (`$60.00 (refunded $1.00)`).
 */
export function formatRevenue(revenue: { currency: string; gross_minor: number; refunded_minor: number }[]): string {
  if (revenue.length === 0) return '—';
  return revenue
    .map((r) => `${formatMoney(r.gross_minor, r.currency)}${r.refunded_minor === 0 ? '' : ` (refunded ${formatMoney(r.refunded_minor, r.currency)})`}`)
    .join(', ');
}

/** Today and the n−1 days before it, in UTC, as the analytics API takes them. */
export function lastDays(n: number, now: Date = new Date()): { from: string; to: string } {
  const to = now.toISOString().slice(0, 10);
  const from = new Date(Date.parse(`${to}T00:00:00Z`) - (n - 1) * 86_400_000).toISOString().slice(0, 10);
  return { from, to };
}
