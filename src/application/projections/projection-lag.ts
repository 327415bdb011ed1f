import type { EventStore } from '../../ports/event-store.js';
import type { ProjectionStatus, ReadConsistency } from '../../ports/read-consistency.js';

export interface ProjectionLag {
  status: ProjectionStatus;
  /** Events of the log after the read model's checkpoint, counted up to `maxLag + 1`. */
  behind: number;
  /** Within `maxLag` events of the log (READY_MAX_LAG). */
  caughtUp: boolean;
}

/**
 * How far each read model is behind the log, counted in events (positions are not counts on
 * every store), up to `maxLag + 1`. Projections of one runner share their checkpoint: the log
 * after it is read once for them all, and nothing is read for those at the head. The one measure
 * /readyz and the catch-up guard use.
 */
export async function projectionLags(
  eventStore: Pick<EventStore, 'readAll' | 'headPosition'>,
  consistency: ReadConsistency,
  maxLag: number,
  /** Which read models to measure (all by default); the others are left out of the answer. */
  measured: (status: ProjectionStatus) => boolean = () => true,
): Promise<ProjectionLag[]> {
  const head = await eventStore.headPosition();
  const counts = new Map<string, Promise<number>>();
  const behindAfter = (checkpoint: bigint | null) => {
    // At the head (or an empty log): nothing to read.
    if (head === null || (checkpoint !== null && checkpoint >= head)) return Promise.resolve(0);
    const key = String(checkpoint);
    let count = counts.get(key);
    if (!count) {
      count = eventStore.readAll({ after: checkpoint, limit: maxLag + 1 }).then((events) => events.length);
      counts.set(key, count);
    }
    return count;
  };
  return Promise.all(
    (await consistency.projections()).filter(measured).map(async (status) => {
      const behind = await behindAfter(status.checkpoint);
      return { status, behind, caughtUp: behind <= maxLag };
    }),
  );
}

/** How long a read model may stay behind the log without its checkpoint moving before /readyz calls it stalled. */
export const STALL_MS = 10_000;

/**
 * Read models behind the log whose checkpoints have not moved for STALL_MS, as seen by the
 * readiness checks that look (a load balancer's, every few seconds): no projector running on the
 * store (an API-only process whose projector stopped), or one hung. Such a process answers every
 * write 503 after waiting for the read models, so it is not ready, however small the lag.
 */
export class StallWatch {
  /** Per read model: the checkpoint last seen, and since when it has been seen behind the log there. */
  private readonly seen = new Map<string, { checkpoint: bigint | null; behindSince: number | null }>();

  stalled(lag: ProjectionLag, now: number): boolean {
    const { name, checkpoint } = lag.status;
    const last = this.seen.get(name);
    if (lag.behind === 0 || last === undefined || last.checkpoint !== checkpoint) {
      this.seen.set(name, { checkpoint, behindSince: lag.behind === 0 ? null : now });
      return false;
    }
    last.behindSince ??= now;
    return now - last.behindSince >= STALL_MS;
  }
}
