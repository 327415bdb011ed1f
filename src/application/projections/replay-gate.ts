import { type ProjectionStatus, type ReadConsistency, ReadModelsBehindError } from '../../ports/read-consistency.js';
import { VERDICT_MS } from './catch-up-guard.js';

/** A read model built by another version of its projection: this version cannot read it until `npm run replay` rebuilds it. */
export function needsReplay(status: Pick<ProjectionStatus, 'version' | 'storedVersion'>): boolean {
  return status.storedVersion !== status.version;
}

/** The version a stored read model was built with: a read model never written (no checkpoint position) is the current one's. */
export function storedVersionOf(checkpoint: { position: bigint | null; version: number }, projection: { version: number }): number {
  return checkpoint.position === null ? projection.version : checkpoint.version;
}

/**
 * Refuses requests while a read model was built by another version of its projection, as right
 * after an upgrade and before `npm run replay` has switched the rebuilt one in. This version
 * cannot read such a read model: an answer from it would be wrong or fail, and a command's answer
 * (read-your-writes) would fail after its write, so a client retrying it would apply it twice.
 * Refused before anything is written, with a message that says what to run. The verdict is
 * shared for VERDICT_MS, and one read of the statuses serves every request waiting for it: the
 * runner's own (no read), or the checkpoints a separate projector wrote.
 */
export class ReplayGate {
  private verdict: { until: number; stale: string[] } | null = null;
  /** The statuses being read, shared by the requests that find the verdict stale meanwhile. */
  private reading: Promise<string[]> | null = null;

  constructor(private readonly consistency: Pick<ReadConsistency, 'projections'>) {}

  /** Throws ReadModelsBehindError while a read model needs a replay. */
  async check(): Promise<void> {
    // Real time, not the service's Clock: how fresh a measurement is, not a business date.
    const stale = this.verdict !== null && performance.now() < this.verdict.until ? this.verdict.stale : await this.read();
    if (stale.length > 0)
      throw new ReadModelsBehindError(
        `Read models built by another version of the service need a replay (${stale.join(', ')}): run \`npm run replay\`; nothing was done, retry once it has switched them in`,
      );
  }

  private read(): Promise<string[]> {
    this.reading ??= this.consistency
      .projections()
      .then((statuses) => {
        const stale = statuses.filter(needsReplay).map((status) => status.name);
        this.verdict = { until: performance.now() + VERDICT_MS, stale };
        return stale;
      })
      .finally(() => {
        this.reading = null;
      });
    return this.reading;
  }
}
