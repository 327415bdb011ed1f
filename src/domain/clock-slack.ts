/**
 * How far two clocks may disagree (instances of one deployment, a small NTP step) before a time
 * one of them wrote is taken for a clock stepped back: a webhook message due further ahead than
 * any wait (src/domain/webhooks/retry-schedule.ts), a rate-limit window ending further ahead than
 * its length (src/ports/rate-limit-store.ts).
 */
export const CLOCK_SLACK_MS = 60_000;
