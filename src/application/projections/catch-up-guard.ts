import type { EventStore } from '../../ports/event-store.js';
import { ReadModelsBehindError, type ReadConsistency } from '../../ports/read-consistency.js';
import { projectionLags } from './projection-lag.js';

/** How long a verdict stands before the lags are counted again. */
const VERDICT_MS = 250;

/**
 * Refuses commands while the read models are catching up with the log: more than READY_MAX_LAG
 * events behind, as /readyz counts it (after a restart with a backlog, or a replay switched in).
 *
 * A command run then is kept, but its answer waits for the read models in vain (read-your-writes)
 * and ends in a 503 after the write, so a client retrying a grant or withdrawal without an
 * `operation_id` would apply it twice, and a new user would be given a program from the old list.
 * Refused before anything is written, a retry is always safe. The verdict is shared for 250 ms,
 * so a request pays a comparison, and counting the lags (at most READY_MAX_LAG + 1 events read)
 * happens at most four times a second, only while requests come.
 */
export class CatchUpGuard {
  private verdict: { at: number; behind: boolean } | null = null;
  private counting: Promise<boolean> | null = null;

  constructor(
    private readonly eventStore: Pick<EventStore, 'readAll'>,
    private readonly consistency: ReadConsistency,
    private readonly maxLag: number,
  ) {}

  /** Throws ReadModelsBehindError while the read models are catching up. */
  async check(): Promise<void> {
    // Real time, not the service's Clock: how fresh a measurement is, not a business date.
    const now = performance.now();
    const behind = this.verdict && now - this.verdict.at < VERDICT_MS ? this.verdict.behind : await this.count(now);
    if (behind)
      throw new ReadModelsBehindError(
        `The service is catching up with its event log (read models over ${this.maxLag} events behind); nothing was done, retry later`,
      );
  }

  private count(now: number): Promise<boolean> {
    this.counting ??= projectionLags(this.eventStore, this.consistency, this.maxLag)
      .then((lags) => {
        const behind = lags.some((lag) => !lag.caughtUp);
        this.verdict = { at: now, behind };
        return behind;
      })
      .finally(() => {
        this.counting = null;
      });
    return this.counting;
  }
}
