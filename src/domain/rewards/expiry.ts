import type { Deactivation } from './reward-schemas.js';

/**
 * Adds a calendar interval in UTC. Month arithmetic clamps to the last day of the target
 * month (Jan 31 + 1 month = Feb 28/29), as calendars do.
 */
export function addInterval(from: Date, duration: number, period: 'days' | 'months' | 'years'): Date {
  if (period === 'days') return new Date(from.getTime() + duration * 86_400_000);
  const months = period === 'months' ? duration : duration * 12;
  const target = new Date(from.getTime());
  const day = target.getUTCDate();
  target.setUTCDate(1);
  target.setUTCMonth(target.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(day, lastDay));
  return target;
}

/** The last instant ISO 8601 writes with a four-digit year: the last time the log can hold. */
export const LAST_TIME_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** When a grant made at `grantedAt` stops being active; null = never. */
export function expiryFor(deactivation: Deactivation, grantedAt: Date): string | null {
  if (deactivation.variant === 'never') return null;
  const end = addInterval(grantedAt, deactivation.duration, deactivation.period);
  // Definitions stored before intervals were capped could reach past year 9999.
  return new Date(Math.min(end.getTime(), LAST_TIME_MS)).toISOString();
}

/** Whether something that ends at `expiresAt` (null: never) is still in force at `now`: an entry, a code, a secret. */
export function isActiveAt(expiresAt: string | null, now: Date): boolean {
  return expiresAt === null || Date.parse(expiresAt) > now.getTime();
}
