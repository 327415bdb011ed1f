import { expect } from 'chai';
import { afterFailure, backoffDelayMs, isDue, parseRetryAfter } from '../../../src/domain/webhooks/retry-schedule.js';

const T0 = new Date('2026-03-10T12:00:00.000Z');
const HOUR = 3_600_000;

describe('webhook retry schedule (pure)', () => {
  it('retries first within 30 s, then grows about fourfold per attempt, jittered, capped at 6 h', () => {
    for (const random of [0, 0.5, 0.999]) {
      expect(backoffDelayMs(1, random)).to.be.within(5_000, 10_000);
      expect(backoffDelayMs(2, random)).to.be.within(20_000, 40_000);
      expect(backoffDelayMs(3, random)).to.be.within(80_000, 160_000);
      expect(backoffDelayMs(20, random)).to.be.within(3 * HOUR, 6 * HOUR);
    }
    expect(backoffDelayMs(1, 0)).to.be.lessThan(backoffDelayMs(1, 0.9));
  });

  it('schedules the next attempt, honours Retry-After, never past the retry window, then dead', () => {
    const base = { firstAttemptAt: T0, retryAfterMs: null, retryWindowMs: 72 * HOUR, random: 0 };
    expect(afterFailure({ ...base, now: T0, attempts: 1 })).to.deep.equal({ status: 'failed', nextAttemptAt: new Date(T0.getTime() + 5_000) });
    expect(afterFailure({ ...base, now: T0, attempts: 1, retryAfterMs: 120_000 })).to.deep.equal({
      status: 'failed',
      nextAttemptAt: new Date(T0.getTime() + 120_000),
    });
    // Retry-After only lengthens the wait: 0, or less than the backoff, leaves the backoff.
    for (const retryAfterMs of [0, 1_000])
      expect(afterFailure({ ...base, now: T0, attempts: 3, retryAfterMs })).to.deep.equal({ status: 'failed', nextAttemptAt: new Date(T0.getTime() + 80_000) });
    const late = new Date(T0.getTime() + 71 * HOUR);
    expect(afterFailure({ ...base, now: late, attempts: 15 })).to.deep.equal({ status: 'failed', nextAttemptAt: new Date(T0.getTime() + 72 * HOUR) });
    expect(afterFailure({ ...base, now: new Date(T0.getTime() + 72 * HOUR), attempts: 16 })).to.deep.equal({ status: 'dead' });
  });

  it('a Retry-After past the longest backoff waits the longest backoff (6 h), no more', () => {
    const base = { firstAttemptAt: T0, retryWindowMs: 72 * HOUR, random: 0, now: T0, attempts: 1 };
    expect(afterFailure({ ...base, retryAfterMs: 24 * HOUR })).to.deep.equal({ status: 'failed', nextAttemptAt: new Date(T0.getTime() + 6 * HOUR) });
  });

  it('a Retry-After ending past the retry window makes the message dead, rather than retried sooner than asked', () => {
    const base = { firstAttemptAt: T0, retryWindowMs: 72 * HOUR, random: 0, attempts: 15 };
    const late = new Date(T0.getTime() + 71 * HOUR);
    expect(afterFailure({ ...base, now: late, retryAfterMs: 2 * HOUR })).to.deep.equal({ status: 'dead' });
    expect(afterFailure({ ...base, now: late, retryAfterMs: HOUR })).to.deep.equal({ status: 'failed', nextAttemptAt: new Date(T0.getTime() + 72 * HOUR) });
    expect(afterFailure({ ...base, now: late, retryAfterMs: 24 * HOUR })).to.deep.equal({ status: 'dead' });
  });

  it('a message is due when its time has come, or when it lies further ahead than any wait (the clock was stepped back)', () => {
    const at = (ms: number) => new Date(T0.getTime() + ms).toISOString();
    expect(isDue(at(0), at(0))).to.equal(true);
    expect(isDue(at(1_000), at(0))).to.equal(false);
    expect(isDue(at(6 * HOUR), at(0))).to.equal(false);
    // A clock a few seconds behind the one that scheduled the longest wait is not a clock stepped back.
    expect(isDue(at(6 * HOUR), at(-5_000))).to.equal(false);
    // Set 3 days ahead by a clock that was ahead: waiting would hold the endpoint's messages for 3 days.
    expect(isDue(at(72 * HOUR), at(0))).to.equal(true);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('30', T0)).to.equal(30_000);
    expect(parseRetryAfter(new Date(T0.getTime() + 90_000).toUTCString(), T0)).to.equal(90_000);
    expect(parseRetryAfter(null, T0)).to.equal(null);
    expect(parseRetryAfter('soon', T0)).to.equal(null);
  });
});
