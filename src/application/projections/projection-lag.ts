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
