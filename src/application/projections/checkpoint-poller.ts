import { setTimeout as sleep } from 'node:timers/promises';
import type { Projection } from '../../../projections/projection.js';
import type { ProjectionStatus, ReadConsistency } from '../../ports/read-consistency.js';
import { heldProjections } from './held-projections.js';
import { storedVersionOf } from './replay-gate.js';
import type { ReadStore } from '../../ports/read-store.js';

const POLL_MS = 5;

interface Waiter {
  position: bigint;
  projection: string | undefined;
  settle(reached: boolean | Error): void;
}

/**
 * Read consistency for an API instance whose projector runs in another process: follows the
 * checkpoints the projector commits to the read store, and the read models it holds at a
 * failing event (src/application/projections/held-projections.ts). The requests waiting at one time share
 * one poll (the checkpoints read every 5 ms while anyone waits), so a busy API instance reads
 * them as often as an idle one, not once per waiting request.
 */
export class CheckpointPoller implements ReadConsistency {
  private readonly waiters = new Set<Waiter>();
  private polling = false;

  constructor(
    private readonly readStore: ReadStore,
    private readonly definitions: Projection[],
    /** Waits between polls (tests step it by hand). */
    private readonly pause: () => Promise<unknown> = () => sleep(POLL_MS),
  ) {}

  async projections(): Promise<ProjectionStatus[]> {
    const checkpoints = await Promise.all(this.definitions.map((projection) => this.readStore.checkpoint(projection.name)));
    const held = await heldProjections(this.readStore, new Map(checkpoints.map((checkpoint) => [checkpoint.projector, checkpoint.position])));
    return this.definitions.map((projection, index) => ({
      name: projection.name,
      version: projection.version,
      storedVersion: storedVersionOf(checkpoints[index]!, projection),
      checkpoint: checkpoints[index]!.position,
      failure: held.get(projection.name) ?? null,
    }));
  }

  async waitFor(position: bigint, timeoutMs: number, projection?: string): Promise<boolean> {
    if (reached(await this.projections(), position, projection)) return true;
    return new Promise<boolean>((resolve, reject) => {
      const timer = setTimeout(() => waiter.settle(false), timeoutMs);
      const waiter: Waiter = {
        position,
        projection,
        settle: (outcome) => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          if (outcome instanceof Error) reject(outcome);
          else resolve(outcome);
        },
      };
      this.waiters.add(waiter);
      void this.poll();
    });
  }

  /** One loop for all waiters: reads the checkpoints, settles those reached, until none waits. */
  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      while (this.waiters.size > 0) {
        await this.pause();
        if (this.waiters.size === 0) break; // the last ones timed out meanwhile
        let statuses: ProjectionStatus[];
        try {
          statuses = await this.projections();
        } catch (error) {
          // The store is unreachable: every waiting request learns it, as its own read would.
          for (const waiter of [...this.waiters]) waiter.settle(error instanceof Error ? error : new Error(String(error)));
          continue;
        }
        for (const waiter of [...this.waiters]) if (reached(statuses, waiter.position, waiter.projection)) waiter.settle(true);
      }
    } finally {
      this.polling = false;
    }
  }
}

/**
 * Whether every projection (or `projection`) has passed `position`. Without a name, a read model
 * its projector holds at a failing event or batch is not waited for, as in the projector's own
 * process (ProjectionRunner#waitFor): it cannot move until fixed.
 */
function reached(statuses: ProjectionStatus[], position: bigint, projection: string | undefined): boolean {
  return statuses
    .filter((status) => (projection === undefined ? status.failure === null : status.name === projection))
    .every((status) => status.checkpoint !== null && status.checkpoint >= position);
}
