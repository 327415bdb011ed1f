import type { ProjectionStatus } from '../../ports/read-consistency.js';
import type { ReadStore } from '../../ports/read-store.js';

/**
 * Where the projector records the read models it holds at a failing event or batch, so that the
 * processes that do not run it (an API process of a split deployment, a standby on the embedded
 * backend) can tell a held read model from a slow one, as the projector's own process does:
 * `/readyz` names it there too, and read-your-writes does not wait for it.
 */
export const HELD_PROJECTIONS = 'held_projections';

type Failure = NonNullable<ProjectionStatus['failure']>;

interface HeldDocument extends Record<string, unknown> {
  projection: string;
  failure: Failure | null;
}

/** The projector's side: writes each projection's failure when it changes (held, moved on), not on every page. */
export class HeldProjectionsRecord {
  /** What was last written, by projection: the failure's event and position, or null. */
  private readonly written = new Map<string, string | null>();

  constructor(private readonly readStore: ReadStore) {}

  async record(statuses: readonly ProjectionStatus[]): Promise<void> {
    for (const { name, failure } of statuses) {
      const key = failure ? `${failure.eventId}@${failure.position}` : null;
      if (this.written.has(name) && this.written.get(name) === key) continue;
      await this.readStore.putAux(HELD_PROJECTIONS, name, { projection: name, failure } satisfies HeldDocument);
      this.written.set(name, key);
    }
  }
}

/**
 * The other processes' side: the failure each projection was last held at, by name. A failure
 * its checkpoint has passed is over (the projector moved on, or a replay rebuilt the read model
 * past it) and is left out, whatever the record says.
 */
export async function heldProjections(readStore: ReadStore, checkpoints: ReadonlyMap<string, bigint | null>): Promise<Map<string, Failure>> {
  const held = new Map<string, Failure>();
  for (const { projection, failure } of await readStore.find<HeldDocument>(HELD_PROJECTIONS)) {
    if (failure === null || !checkpoints.has(projection)) continue;
    const checkpoint = checkpoints.get(projection) ?? null;
    if (checkpoint === null || checkpoint < BigInt(failure.position)) held.set(projection, failure);
  }
  return held;
}
