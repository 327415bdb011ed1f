import { CLOCK_SLACK_MS } from '../clock-slack.js';

/**
 * When to try a failed delivery again (SPEC §12): exponential backoff with jitter — the first
 * retry within 30 s, then growing, capped — honouring the receiver's `Retry-After` up to the
 * same cap, until the retry window after the first attempt has passed; then the message is
 * dead. Pure.
 *
 * `Retry-After` can only lengthen a wait: a receiver answering `Retry-After: 0` (or a date
 * already past) on every attempt would otherwise be retried at the engine's polling pace, ten
 * times a second for the whole retry window. No wait is longer than MAX_DELAY_MS, so a
 * `next_attempt_at` further than that from now was set while the clock was ahead (a clock
 * stepped back): `isDue` takes it as due, rather than holding the endpoint's messages for as
 * long as the clock was wrong.
 */

/** First retry after 5–10 s (full jitter over the upper half), then ×4 per attempt, at most 6 h. */
const BASE_MS = 10_000;
const FACTOR = 4;
const MAX_DELAY_MS = 6 * 3_600_000;

export function backoffDelayMs(failedAttempts: number, random: number): number {
  const ceiling = Math.min(MAX_DELAY_MS, BASE_MS * FACTOR ** Math.max(0, failedAttempts - 1));
  return Math.round(ceiling * (0.5 + random / 2));
}

export interface FailureInput {
  /** When the message was first attempted (this attempt when it is the first). */
  firstAttemptAt: Date;
  now: Date;
  /** Attempts made, this one included. */
  attempts: number;
  /** The receiver's Retry-After, in ms from now; null when absent. */
  retryAfterMs: number | null;
  retryWindowMs: number;
  /** A number in [0, 1) for the jitter. */
  random: number;
}

export type FailureVerdict = { status: 'failed'; nextAttemptAt: Date } | { status: 'dead' };

export function afterFailure(input: FailureInput): FailureVerdict {
  const deadline = input.firstAttemptAt.getTime() + input.retryWindowMs;
  if (input.now.getTime() >= deadline) return { status: 'dead' };
  const retryAfter = Math.min(MAX_DELAY_MS, input.retryAfterMs ?? 0);
  // The receiver's shortest wait ends past the window: no attempt is left that honours it.
  if (input.now.getTime() + retryAfter > deadline) return { status: 'dead' };
  const delay = Math.min(MAX_DELAY_MS, Math.max(retryAfter, backoffDelayMs(input.attempts, input.random)));
  return { status: 'failed', nextAttemptAt: new Date(Math.min(input.now.getTime() + delay, deadline)) };
}

/** `Retry-After` as seconds or an HTTP date, in ms from `now`; null when absent or unreadable. */
export function parseRetryAfter(header: string | null, now: Date): number | null {
  if (header === null || header.trim() === '') return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - now.getTime());
}

/**
 * Whether a message waiting until `nextAttemptAt` is due at `now` (ISO date-times): its time has
 * come, or it lies further ahead than any wait, with a minute's slack (a clock stepped back).
 */
export function isDue(nextAttemptAt: string, now: string): boolean {
  return nextAttemptAt <= now || Date.parse(nextAttemptAt) - Date.parse(now) > MAX_DELAY_MS + CLOCK_SLACK_MS;
}
