import type { Doc, DocumentRef, Projection } from '../../../projections/projection.js';
import type { DomainEvent } from '../../domain/events/index.js';
import type { RecordedEvent } from '../../ports/event-store.js';
import type { DocumentChange, ProjectorBatch, ReadStore } from '../../ports/read-store.js';
import type { EventLog, LoggedEvent } from '../event-log.js';
import { upcastRecord } from '../upcasters.js';
import { SeenKeys } from './seen-keys.js';

const PAGE_SIZE = 2_000;
/** Changed documents held in memory before they are written in one transaction. */
const FLUSH_DOCUMENTS = 20_000;
const REBUILT = '__rebuild';

function rebuiltCollection(collection: string): string {
  return `${collection}${REBUILT}`;
}

function replayCheckpoint(projection: string): string {
  return `replay:${projection}`;
}

/** Each live collection of the projection with the collection it is rebuilt in. */
function swapped(projection: Projection): [live: string, rebuilt: string][] {
  return projection.collections.map((collection) => [collection.name, rebuiltCollection(collection.name)]);
}

interface ReplayProgress {
  /** Position reached; the run ends when it reaches the head (re-read while catching up). */
  position: bigint | null;
  head: bigint | null;
  events: number;
}

export interface ReplayOptions {
  onProgress?: (progress: ReplayProgress) => void;
  /** Called for a read model whose switch an interrupted run began (MongoDB), once this run has finished it. */
  onSwitchFinished?: (projection: string) => void;
  /** Called before the first page with the read models that continue an interrupted rebuild, and the position each continues after. */
  onResume?: (resumed: { projection: string; after: bigint }[]) => void;
  /** Stop after this many pages without switching over (tests of resumption). */
  maxPages?: number;
  pageSize?: number;
  /** Write the folded documents once this many have changed (and at the end of each run). */
  flushDocuments?: number;
}

class ReplayFailedError extends Error {
  constructor(projection: string, eventId: string, cause: unknown) {
    super(`Replay of ${projection} cannot apply event ${eventId}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'ReplayFailedError';
  }
}

/**
 * A stored event as projections see it, without validating its data again: every event was
 * checked against its schema when it was appended (the event schemas only check: no defaults,
 * no transforms; a field added later is filled by an upcaster), so a replay only lifts old
 * versions. Validating 1M events again would cost more than reading them.
 */
export function replayedEvent(record: RecordedEvent): LoggedEvent {
  // The record is the replay's own copy: lifted in place rather than copied.
  record.data = upcastRecord(record);
  return record as unknown as LoggedEvent & DomainEvent;
}

/** A document as the fold holds it (null: deleted). */
type Held = { doc: Doc | null };

/** One collection being rebuilt: the documents folded since the last flush, and those it wrote. */
interface RebuiltCollection {
  /** The rebuilt collection's name, which the flush writes to. */
  readonly name: string;
  /** Documents folded since the last flush, by id. */
  changed: Map<string, Held>;
  /**
   * The documents the last flush wrote, kept until the next one: a document that events keep
   * touching (a user's, a code's) is read back from memory rather than from the store.
   */
  flushed: Map<string, Held>;
}

/** One projection being rebuilt: its checkpoint, and the changed documents not written yet. */
class Rebuild {
  /** By live collection name, as events name their documents. */
  readonly collections = new Map<string, RebuiltCollection>();
  /** Documents flushed by this run (`collection\u0000id`); null when it resumed a rebuild. */
  written: SeenKeys | null = null;
  /** Last event folded (the checkpoint once flushed). */
  position: bigint | null;

  constructor(
    readonly projection: Projection,
    /** The stored replay checkpoint: where this run continues from. */
    public checkpoint: bigint | null,
  ) {
    this.position = checkpoint;
    for (const { name } of projection.collections) this.collections.set(name, { name: rebuiltCollection(name), changed: new Map(), flushed: new Map() });
  }
}

/**
 * Folds the log into every rebuild in memory: each document is read from the rebuilt
 * collection at most once between flushes (not at all when the last flush wrote it), changed
 * in memory by every event that touches it, and written once per flush, with the checkpoints,
 * in one large transaction. Memory stays bounded by twice the flush size (the documents being
 * folded and those the last flush wrote), whatever the length of the log.
 *
 * A rebuild that started from an empty collection remembers which documents it has written
 * (in a fixed-size SeenKeys), so a document it never wrote is known to be missing without
 * asking the store: most events (a new ledger row, a new entry, a new user) cost no read.
 */
class ReplayFold {
  private pendingDocuments = 0;
  /** The rebuilds that handle each event type. */
  private readonly byType = new Map<string, Rebuild[]>();

  constructor(
    private readonly readStore: ReadStore,
    readonly rebuilds: Rebuild[],
    private readonly flushDocuments: number,
  ) {
    // One set for all rebuilds: its keys name the (rebuilt) collection.
    const written = rebuilds.every((rebuild) => rebuild.checkpoint === null) ? new SeenKeys() : null;
    for (const rebuild of rebuilds) {
      rebuild.written = written;
      for (const type of rebuild.projection.eventTypes) this.byType.set(type, [...(this.byType.get(type) ?? []), rebuild]);
    }
  }

  async apply(events: readonly LoggedEvent[]): Promise<void> {
    for (const event of events) {
      for (const rebuild of this.byType.get(event.type) ?? []) {
        // Folded before the interruption: a read model that counts (claim_stats) would count it twice.
        if (rebuild.checkpoint !== null && event.position <= rebuild.checkpoint) continue;
        const { projection } = rebuild;
        const refs = projection.targets(event);
        if (refs.length === 1) {
          // The common case, without the bookkeeping of several documents.
          const ref = refs[0]!;
          const collection = this.collection(rebuild, ref.collection);
          const held = collection.changed.get(ref.id);
          const current = held !== undefined ? held.doc : await this.load(rebuild, collection, ref.id);
          const doc = this.evolve(projection, ref, current, event);
          if (held !== undefined) held.doc = doc;
          else {
            collection.changed.set(ref.id, { doc });
            this.pendingDocuments += 1;
          }
          continue;
        }
        // An event lands in all its documents or, if evolve throws, in none.
        const updates: [Map<string, Held>, string, Doc | null][] = [];
        for (const ref of refs) {
          const collection = this.collection(rebuild, ref.collection);
          const held = collection.changed.get(ref.id);
          const current = held !== undefined ? held.doc : await this.load(rebuild, collection, ref.id);
          updates.push([collection.changed, ref.id, this.evolve(projection, ref, current, event)]);
        }
        for (const [documents, id, doc] of updates) {
          const held = documents.get(id);
          if (held !== undefined) held.doc = doc;
          else {
            documents.set(id, { doc });
            this.pendingDocuments += 1;
          }
        }
      }
    }
    const last = events[events.length - 1];
    if (last) for (const rebuild of this.rebuilds) if (rebuild.checkpoint === null || last.position > rebuild.checkpoint) rebuild.position = last.position;
    if (this.pendingDocuments >= this.flushDocuments) await this.flush();
  }

  private collection(rebuild: Rebuild, name: string): RebuiltCollection {
    const collection = rebuild.collections.get(name);
    if (!collection) throw new ReplayFailedError(rebuild.projection.name, '-', new Error(`collection ${name} is not declared by the projection`));
    return collection;
  }

  /**
   * A document not changed since the last flush: as that flush wrote it, or as stored, unless
   * this run knows it never wrote it (a fresh rebuild starts empty).
   */
  private async load(rebuild: Rebuild, collection: RebuiltCollection, id: string): Promise<Doc | null> {
    const flushed = collection.flushed.get(id);
    if (flushed !== undefined) return flushed.doc;
    if (rebuild.written !== null && !rebuild.written.mightHave(`${collection.name}\u0000${id}`)) return null;
    return this.readStore.get<Doc>(collection.name, id);
  }

  private evolve(projection: Projection, ref: DocumentRef, current: Doc | null, event: LoggedEvent): Doc | null {
    try {
      return projection.evolve(ref, current, event);
    } catch (error) {
      throw new ReplayFailedError(projection.name, event.id, error);
    }
  }

  /** Writes every changed document and each rebuild's checkpoint in one commit. */
  async flush(): Promise<void> {
    const batches: ProjectorBatch[] = [];
    for (const rebuild of this.rebuilds) {
      if (rebuild.position === null || rebuild.position === rebuild.checkpoint) continue;
      const changes: DocumentChange[] = [];
      for (const { name: collection, changed } of rebuild.collections.values()) {
        const written = rebuild.written;
        // In key order: stores write sorted keys into their B-trees far faster than random ones.
        for (const id of [...changed.keys()].sort()) {
          const { doc } = changed.get(id)!;
          if (doc !== null) {
            changes.push({ op: 'put', collection, id, doc });
            written?.add(`${collection}\u0000${id}`);
          } else if (written === null || written.mightHave(`${collection}\u0000${id}`)) {
            // A document created and deleted again before any flush never reaches the store.
            changes.push({ op: 'delete', collection, id });
          }
        }
      }
      batches.push({
        projector: replayCheckpoint(rebuild.projection.name),
        version: rebuild.projection.version,
        changes,
        position: rebuild.position,
        after: rebuild.checkpoint,
      });
    }
    if (batches.length > 0) await this.readStore.commitBatches(batches);
    for (const rebuild of this.rebuilds) {
      rebuild.checkpoint = rebuild.position;
      for (const collection of rebuild.collections.values()) {
        collection.flushed = collection.changed;
        collection.changed = new Map();
      }
    }
    this.pendingDocuments = 0;
  }

  lowestCheckpoint(): bigint | null {
    let lowest: bigint | null = null;
    for (const [index, rebuild] of this.rebuilds.entries()) {
      if (rebuild.position === null) return null;
      if (index === 0 || rebuild.position < lowest!) lowest = rebuild.position;
    }
    return lowest;
  }
}

/**
 * Rebuilds read models from position 0 into fresh collections in one pass over the log, while
 * the service keeps serving (and updating) the live ones, then swaps the rebuilt ones in.
 * Resumable: each rebuild keeps its own checkpoint, written with its documents at every flush,
 * so a second run continues where the first stopped. After the swap, the live projector finds
 * its checkpoint moved, reloads, and continues from the replay's position.
 */
export async function replayProjections(
  log: EventLog,
  readStore: ReadStore,
  projections: Projection[],
  options: ReplayOptions = {},
): Promise<'switched' | 'interrupted'> {
  const rebuilds: Rebuild[] = [];
  for (const projection of projections) {
    // The live collections' indexes (they serve the rebuilt documents once swapped in; the
    // rebuild itself reads documents by id only, so it writes without index upkeep).
    for (const collection of projection.collections) await readStore.ensureIndexes(collection.name, collection.indexes);
    let stored = await readStore.checkpoint(replayCheckpoint(projection.name));
    if (stored.switching) {
      // An earlier run was interrupted while switching this read model in (MongoDB): what it
      // rebuilt is partly live already, so it is finished before anything else.
      await readStore.swapIn(projection.name, replayCheckpoint(projection.name), stored.version, swapped(projection));
      options.onSwitchFinished?.(projection.name);
      if (stored.version === projection.version) continue;
      stored = { projector: stored.projector, position: null, version: 0 };
    }
    // A rebuild begun by another version of the projection is of no use to this one: start over.
    const checkpoint = stored.version === projection.version ? stored.position : null;
    if (checkpoint === null)
      await readStore.reset(
        replayCheckpoint(projection.name),
        projection.collections.map((collection) => rebuiltCollection(collection.name)),
      );
    rebuilds.push(new Rebuild(projection, checkpoint));
  }
  if (rebuilds.length === 0) return 'switched';
  const resumed = rebuilds.flatMap(({ projection, checkpoint }) => (checkpoint === null ? [] : [{ projection: projection.name, after: checkpoint }]));
  if (resumed.length > 0) options.onResume?.(resumed);
  const fold = new ReplayFold(readStore, rebuilds, options.flushDocuments ?? FLUSH_DOCUMENTS);
  let events = 0;
  for (let pages = 0; ; pages += 1) {
    if (options.maxPages !== undefined && pages >= options.maxPages) {
      await fold.flush();
      return 'interrupted';
    }
    const head = await log.store.headPosition();
    const page = (await log.store.readAll({ after: fold.lowestCheckpoint(), limit: options.pageSize ?? PAGE_SIZE })).map(replayedEvent);
    if (page.length === 0) break;
    await fold.apply(page);
    events += page.length;
    options.onProgress?.({ position: page[page.length - 1]!.position, head, events });
  }
  await fold.flush();
  for (const rebuild of rebuilds) {
    const { projection } = rebuild;
    if (rebuild.checkpoint === null) {
      // An empty log: record an empty rebuild so the swap has a checkpoint to move.
      await readStore.commitBatches([{ projector: replayCheckpoint(projection.name), version: projection.version, changes: [], position: 0n, after: null }]);
    }
    await readStore.swapIn(projection.name, replayCheckpoint(projection.name), projection.version, swapped(projection));
  }
  return 'switched';
}
