import { type ProjectionStatus, type ReadConsistency, ReadModelsBehindError } from '../../ports/read-consistency.js';
import { VERDICT_MS } from './catch-up-guard.js';

/** A read model built by another version of its projection: this version cannot read it until `npm run replay` rebuilds it. */
export function needsReplay(status: ProjectionStatus): boolean {
  return status.storedVersion !== status.version;
}

/**
 * Refuses requests while a read model was built by another version of its projection, as right
 * after an upgrade and before `npm run replay` has switched the rebuilt one in. This version
 * cannot read such a read model: an answer from it would be wrong or fail, and a command's answer
 * (read-your-writes) would fail after its write, so a client retrying it would apply it twice.
 * Refused before anything is written, with a message that says what to run. The verdict is
 * shared for VERDICT_MS; the statuses are the runner's own (no read), or the checkpoints a
 * separate projector wrote (one read per verdict).
 */
export class ReplayGate {
  private verdict: { until: number; stale: string[] } | null = null;

  constructor(private readonly consistency: Pick<ReadConsistency, 'projections'>) {}

  /** Throws ReadModelsBehindError while a read model needs a replay. */
  async check(): Promise<void> {
    // Real time, not the service's Clock: how fresh a measurement is, not a business date.
    const now = performance.now();
    if (this.verdict === null || now >= this.verdict.until) {
      const stale = (await this.consistency.projections()).filter(needsReplay).map((status) => status.name);
      this.verdict = { until: performance.now() + VERDICT_MS, stale };
    }
    const { stale } = this.verdict;
    if (stale.length > 0)
      throw new ReadModelsBehindError(
        `Read models built by another version of the service need a replay (${stale.join(', ')}): run \`npm run replay\`; nothing was done, retry once it has switched them in`,
      );
  }
}
