import type { EventStore } from '../../ports/event-store.js';
import { ReadModelsBehindError, type ReadConsistency } from '../../ports/read-consistency.js';
import { projectionLags } from './projection-lag.js';

/** A backlog smaller than this is ordinary load, never catching up (whatever READY_MAX_LAG says). */
export const CATCH_UP_MIN_LAG = 1_000;
/**
 * How long a verdict stands before the lags are counted again, caught up or behind: a command
 * refused this long after the read models caught up is the most /readyz and the guard can
 * disagree by. Counting while behind reads at most max(READY_MAX_LAG, CATCH_UP_MIN_LAG) + 1 events.
 */
export const VERDICT_MS = 250;

/**
 * Refuses commands while the read models are catching up with the log: a read model more than
 * READY_MAX_LAG events behind (so /readyz says 503 too), and at least CATCH_UP_MIN_LAG, as after a
 * restart with a backlog or a replay switched in.
 *
 * A command run then is kept, but its answer waits for the read models in vain (read-your-writes)
 * and ends in a 503 after the write, so a client retrying a grant or withdrawal without an
 * `operation_id` would apply it twice, and a new user would be given a program from the old list.
 * Refused before anything is written, a retry is always safe.
 *
 * A read model held at a failing batch is left out: it catches up only once an operator acts, and
 * refusing every command until then would stop the service for one read model (/readyz reports
 * it; commands then answer as before, 503 "the write is recorded" when they cannot be shown).
 * The verdict is shared for VERDICT_MS, so a request pays a comparison; counting
 * reads nothing when every read model stands at the head of the log, and at most
 * max(READY_MAX_LAG, CATCH_UP_MIN_LAG) + 1 events when one is behind.
 */
export class CatchUpGuard {
  private readonly maxLag: number;
  private verdict: { until: number; behind: boolean } | null = null;
  private counting: Promise<boolean> | null = null;

  constructor(
    private readonly eventStore: Pick<EventStore, 'readAll' | 'headPosition'>,
    private readonly consistency: ReadConsistency,
    readyMaxLag: number,
  ) {
    this.maxLag = Math.max(readyMaxLag, CATCH_UP_MIN_LAG);
  }

  /** Throws ReadModelsBehindError while the read models are catching up. */
  async check(): Promise<void> {
    // Real time, not the service's Clock: how fresh a measurement is, not a business date.
    const now = performance.now();
    const behind = this.verdict && now < this.verdict.until ? this.verdict.behind : await this.count();
    if (behind)
      throw new ReadModelsBehindError(
        `The service is catching up with its event log (read models over ${this.maxLag} events behind); nothing was done, retry later`,
      );
  }

  private count(): Promise<boolean> {
    // A held read model is not measured: its backlog (read again every 250 ms) would count for nothing.
    this.counting ??= projectionLags(this.eventStore, this.consistency, this.maxLag, (status) => status.failure === null)
      .then((lags) => {
        const behind = lags.some((lag) => !lag.caughtUp);
        this.verdict = { until: performance.now() + VERDICT_MS, behind };
        return behind;
      })
      .finally(() => {
        this.counting = null;
      });
    return this.counting;
  }
}
