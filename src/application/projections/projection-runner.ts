import { EventEmitter } from 'node:events';
import type { Projection } from '../../../projections/projection.js';
import { type RecordedEvent, StoreUnavailableError } from '../../ports/event-store.js';
import { CheckpointMovedError, type ProjectorBatch, type ReadStore } from '../../ports/read-store.js';
import type { Logger } from '../../ports/logger.js';
import type { ProjectionStatus, ReadConsistency } from '../../ports/read-consistency.js';
import type { EventLog, LoggedEvent } from '../event-log.js';
import { LogFollower } from '../log-follower.js';
import { foldBatch } from './fold-batch.js';
import { HeldProjectionsRecord } from './held-projections.js';
import { storedVersionOf } from './replay-gate.js';
import { ReadModelGate } from './read-model-gate.js';

const PAGE_SIZE = 500;
const RELOAD_WHEN_IDLE_MS = 5_000;

/**
 * Folds the global log, in commit order, into every projection's documents. Each batch's
 * documents and checkpoints are committed together. A projection whose `evolve` throws is
 * held at the failing event (logged, surfaced in status and recorded for the processes that do
 * not project) and retried with backoff; the others go on.
 */
export class ProjectionRunner extends LogFollower implements ReadConsistency {
  private readonly statuses = new Map<string, ProjectionStatus>();
  private readonly progress = new EventEmitter().setMaxListeners(0);
  private reloadedAt = Date.now();
  /** Read models a replay is switching in (MongoDB): nothing is folded into them until it is done. */
  private readonly switching = new Set<string>();
  /** The read models held here, recorded for the processes that do not project. */
  private readonly held: HeldProjectionsRecord;

  constructor(
    private readonly log: EventLog,
    private readonly readStore: ReadStore,
    private readonly definitions: Projection[],
    logger: Logger,
    /** Shared with the answers that read several documents (src/application/queries/user-queries.ts). */
    private readonly gate = new ReadModelGate(),
  ) {
    super(log.store, logger);
    this.held = new HeldProjectionsRecord(readStore);
  }

  async init(): Promise<void> {
    for (const projection of this.definitions) {
      for (const collection of projection.collections) await this.readStore.ensureIndexes(collection.name, collection.indexes);
    }
    await this.reloadCheckpoints();
  }

  private async reloadCheckpoints(): Promise<void> {
    for (const projection of this.definitions) {
      const checkpoint = await this.readStore.checkpoint(projection.name);
      if (checkpoint.switching && !this.switching.has(projection.name)) {
        this.logger.info({ projection: projection.name }, 'a replay is switching this read model in: projecting into it once the switch is done');
      }
      if (checkpoint.switching) this.switching.add(projection.name);
      else this.switching.delete(projection.name);
      const storedVersion = storedVersionOf(checkpoint, projection);
      const previous = this.statuses.get(projection.name);
      if (storedVersion !== projection.version && previous?.storedVersion !== storedVersion) {
        this.logger.warn(
          { projection: projection.name, storedVersion, version: projection.version },
          `read model was built by another version of its projection: run \`npm run replay -- --projection ${projection.name}\``,
        );
      }
      this.statuses.set(projection.name, {
        name: projection.name,
        version: projection.version,
        storedVersion,
        checkpoint: checkpoint.position,
        failure: previous?.failure ?? null,
      });
    }
  }

  status(): ProjectionStatus[] {
    return [...this.statuses.values()];
  }

  async projections(): Promise<ProjectionStatus[]> {
    return this.status();
  }

  /** The lowest checkpoint over all projections: every read model reflects the log up to here. */
  lowestCheckpoint(): bigint | null {
    return this.lowest(this.definitions);
  }

  /**
   * Resolves true once every projection (or `projection`) has passed `position`, false after
   * `timeoutMs`. Without a name, a read model held at a failing event or batch is not waited
   * for: it cannot move until fixed, so waiting would only delay every answer by `timeoutMs`
   * (the catch-up guard leaves it out too). Which read models are held is judged at each look.
   */
  async waitFor(position: bigint, timeoutMs: number, projection?: string): Promise<boolean> {
    const watched = () =>
      projection === undefined
        ? this.definitions.filter((definition) => this.statuses.get(definition.name)!.failure === null)
        : this.definitions.filter((definition) => definition.name === projection);
    const reached = () => {
      const group = watched();
      if (group.length === 0) return true;
      const lowest = this.lowest(group);
      return lowest !== null && lowest >= position;
    };
    if (reached()) return true;
    return new Promise((resolve) => {
      const timer = setTimeout(() => finish(false), timeoutMs);
      const onProgress = () => reached() && finish(true);
      const finish = (value: boolean) => {
        clearTimeout(timer);
        this.progress.off('progress', onProgress);
        resolve(value);
      };
      this.progress.on('progress', onProgress);
      this.nudge();
    });
  }

  protected override holding(): boolean {
    return [...this.statuses.values()].some((status) => status.failure !== null);
  }

  /**
   * Reads one page after the lowest checkpoint of the healthy projections and commits their
   * batches; a failed projection is retried on its own page so it cannot hold the others back.
   */
  async processPage(): Promise<boolean> {
    if (this.switching.size > 0 || Date.now() - this.reloadedAt > RELOAD_WHEN_IDLE_MS) {
      // Notice a replay that switched a read model in while this process had nothing to do, or
      // the end of a switch this process is waiting for.
      this.reloadedAt = Date.now();
      await this.reloadCheckpoints();
    }
    const active = this.definitions.filter((projection) => !this.switching.has(projection.name));
    const healthy = active.filter((projection) => this.statuses.get(projection.name)!.failure === null);
    const failed = active.filter((projection) => !healthy.includes(projection));
    let more = await this.processGroup(healthy);
    for (const projection of failed) more = (await this.processGroup([projection])) || more;
    await this.held.record(this.status());
    return more;
  }

  /** Returns whether more is waiting (LogPage#more), once the page is committed. */
  private async processGroup(group: Projection[]): Promise<boolean> {
    if (group.length === 0) return false;
    const types = [...new Set(group.flatMap((projection) => projection.eventTypes))];
    const lowest = this.lowest(group);
    const { events, through, more, unreadable } = await this.log.readPage(lowest, PAGE_SIZE, types);
    if (unreadable) {
      // Held at it: the projections that read its type. The others fold up to it with them now,
      // and read on without them from the next page (the held ones are read on their own).
      for (const projection of group) {
        if ((projection.eventTypes as readonly string[]).includes(unreadable.event.type))
          this.markFailed(this.statuses.get(projection.name)!, unreadable.event, unreadable);
      }
    }
    if (through === null || through === lowest) return false;
    const batches: ProjectorBatch[] = [];
    for (const projection of group) {
      const batch = await this.fold(projection, this.statuses.get(projection.name)!, events, through);
      if (batch) batches.push(batch);
    }
    const committed = await this.commit(batches);
    if (committed === null) return false;
    for (const batch of committed) this.statuses.get(batch.projector)!.checkpoint = batch.position;
    this.progress.emit('progress');
    return more;
  }

  /**
   * Commits the batches together. If that fails for a reason other than an unreachable store,
   * each batch is tried alone, so one projection whose documents the store refuses is held
   * (logged, surfaced) while the others go on. Returns the batches that landed, or null when
   * the checkpoints moved under this runner.
   */
  private async commit(batches: ProjectorBatch[]): Promise<ProjectorBatch[] | null> {
    if (batches.length === 0) return [];
    try {
      await this.gate.commit(() => this.readStore.commitBatches(batches));
      return batches;
    } catch (error) {
      if (error instanceof CheckpointMovedError) return this.checkpointMoved(error);
      if (error instanceof StoreUnavailableError) throw error;
      if (batches.length === 1) {
        this.markCommitFailed(batches[0]!, error);
        return [];
      }
    }
    const landed: ProjectorBatch[] = [];
    for (const batch of batches) {
      try {
        await this.gate.commit(() => this.readStore.commitBatches([batch]));
        landed.push(batch);
      } catch (error) {
        if (error instanceof CheckpointMovedError) return this.checkpointMoved(error);
        if (error instanceof StoreUnavailableError) throw error;
        this.markCommitFailed(batch, error);
      }
    }
    return landed;
  }

  private async checkpointMoved(error: CheckpointMovedError): Promise<null> {
    this.logger.warn({ projector: error.projector }, 'checkpoint moved under this projector (another projector or a replay); reloading');
    await this.reloadCheckpoints();
    return null;
  }

  private markCommitFailed(batch: ProjectorBatch, error: unknown): void {
    const status = this.statuses.get(batch.projector)!;
    this.logger.error(
      { projection: batch.projector, after: batch.after?.toString() ?? null, upTo: batch.position.toString(), err: error },
      "POISON BATCH: the read store refuses this projection's documents; it is held here until fixed",
    );
    status.failure = {
      position: batch.position.toString(),
      eventId: `batch after ${batch.after?.toString() ?? 'start'}`,
      error: error instanceof Error ? error.message : String(error),
    };
  }

  private lowest(group: Projection[]): bigint | null {
    let lowest: bigint | null = null;
    for (const [index, projection] of group.entries()) {
      const checkpoint = this.statuses.get(projection.name)!.checkpoint;
      if (checkpoint === null) return null;
      if (index === 0 || checkpoint < lowest!) lowest = checkpoint;
    }
    return lowest;
  }

  /** The projection's batch of the page read through `through`; null when its checkpoint does not move. */
  private async fold(projection: Projection, status: ProjectionStatus, events: LoggedEvent[], through: bigint): Promise<ProjectorBatch | null> {
    const folded = await foldBatch(this.readStore, projection, events, status.checkpoint);
    if (folded.failure) this.markFailed(status, folded.failure.event, folded.failure.error);
    // Folded to the end of the page: the checkpoint moves over the events of other types after it too.
    const position = folded.failure ? folded.position : through;
    if (position === null || (status.checkpoint !== null && position <= status.checkpoint)) return null;
    if (status.failure && position >= BigInt(status.failure.position)) status.failure = null;
    return { projector: projection.name, version: status.storedVersion, changes: folded.changes, position, after: status.checkpoint };
  }

  private markFailed(status: ProjectionStatus, event: Pick<RecordedEvent, 'id' | 'position' | 'type'>, error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    if (status.failure?.eventId !== event.id) {
      this.logger.error(
        { projection: status.name, eventId: event.id, position: event.position.toString(), type: event.type, err: error },
        'POISON EVENT: projection cannot apply this event; it is held here until the projection is fixed',
      );
    }
    status.failure = { position: event.position.toString(), eventId: event.id, error: message };
  }
}
