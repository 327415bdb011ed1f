/** A counter's state after a hit: points used in its current window and when that window ends. */
export interface RateLimitCounter {
  points: number;
  /** Epoch milliseconds at which the window ends and the counter starts again from zero. */
  resetAtMs: number;
}

/**
 * Fixed-window counters shared by every instance of a deployment (SPEC §13): the store of the
 * backend in use (a table in the embedded SQLite file, a MongoDB collection).
 */
export interface RateLimitStore {
  /**
   * Adds `points` to `key` atomically (concurrent hits from any process never lose a point):
   * when the key has no live window at `nowMs`, it starts one of `windowMs` with `points`. A
   * window is live when it ends after `nowMs` and no later than one `windowMs` (and
   * CLOCK_SLACK_MS) from it: one that ends later was started while the clock was ahead (a clock
   * stepped back), and would otherwise hold the key for as long as the clock was wrong.
   * Negative points (a refund) never take a counter below 0: a refund reaching a window that
   * has ended leaves the new one at 0 rather than giving it extra room.
   */
  hit(key: string, points: number, windowMs: number, nowMs: number): Promise<RateLimitCounter>;
  /** Forgets windows that ended before `nowMs` (housekeeping; never changes a live counter). */
  removeExpired(nowMs: number): Promise<number>;
  close(): Promise<void>;
}
