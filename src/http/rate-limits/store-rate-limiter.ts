import { createRequire } from 'node:module';
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { Clock } from '../../ports/clock.js';
import type { RateLimitCounter, RateLimitStore } from '../../ports/rate-limit-store.js';

type StoreAbstractClass = typeof import('rate-limiter-flexible').RateLimiterStoreAbstract;

// rate-limiter-flexible exports its store base class only from its lib folder (CommonJS).
const RateLimiterStoreAbstract = createRequire(import.meta.url)('rate-limiter-flexible/lib/RateLimiterStoreAbstract.js') as StoreAbstractClass;

export interface StoreRateLimiterOptions {
  keyPrefix: string;
  points: number;
  /** Window length in seconds. */
  duration: number;
  store: RateLimitStore;
  clock: Clock;
}

/**
 * rate-limiter-flexible's limiter (consume, penalty, RateLimiterRes) on the project's
 * RateLimitStore port, with time from the injected Clock: the same limiter runs on the SQLite
 * and the MongoDB store, and tests move time by hand.
 */
export class StoreRateLimiter extends RateLimiterStoreAbstract {
  private readonly store: RateLimitStore;
  private readonly clock: Clock;

  constructor(options: StoreRateLimiterOptions) {
    super({ keyPrefix: options.keyPrefix, points: options.points, duration: options.duration, storeClient: options.store });
    this.store = options.store;
    this.clock = options.clock;
  }

  /** Called by the base class with what `_upsert` resolved. */
  _getRateLimiterRes(_rlKey: string, changedPoints: number, counter: RateLimitCounter): RateLimiterRes {
    const msBeforeNext = Math.max(counter.resetAtMs - this.clock.now().getTime(), 0);
    return new RateLimiterRes(Math.max(this.points - counter.points, 0), msBeforeNext, counter.points, counter.points === changedPoints);
  }

  /** The base class's only store write: add points to the key's current window. */
  _upsert(rlKey: string, points: number, msDuration: number): Promise<RateLimitCounter> {
    return this.store.hit(rlKey, points, msDuration, this.clock.now().getTime());
  }
}
