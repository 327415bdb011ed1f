import type { Projection } from '../../../projections/projection.js';
import type { ProjectionStatus, ReadConsistency } from '../../ports/read-consistency.js';
import type { ReadStore } from '../../ports/read-store.js';

const POLL_MS = 20;

/**
 * Read consistency for an API instance whose projector runs in another process: follows the
 * checkpoints the projector commits to the read store.
 */
export class CheckpointPoller implements ReadConsistency {
  constructor(
    private readonly readStore: ReadStore,
    private readonly definitions: Projection[],
  ) {}

  async projections(): Promise<ProjectionStatus[]> {
    return Promise.all(
      this.definitions.map(async (projection) => {
        const checkpoint = await this.readStore.checkpoint(projection.name);
        return {
          name: projection.name,
          version: projection.version,
          storedVersion: checkpoint.position === null ? projection.version : checkpoint.version,
          checkpoint: checkpoint.position,
          failure: null,
        };
      }),
    );
  }

  async waitFor(position: bigint, timeoutMs: number, projection?: string): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const statuses = (await this.projections()).filter((status) => projection === undefined || status.name === projection);
      if (statuses.every((status) => status.checkpoint !== null && status.checkpoint >= position)) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }
}
