import type { Doc, DocumentRef, Projection } from '../../../projections/projection.js';
import type { DocumentChange, ReadStore } from '../../ports/read-store.js';
import type { EventLog } from '../event-log.js';

const PAGE_SIZE = 1_000;
const REBUILT = '__rebuild';

export function rebuiltCollection(collection: string): string {
  return `${collection}${REBUILT}`;
}

export function replayCheckpoint(projection: string): string {
  return `replay:${projection}`;
}

export interface ReplayProgress {
  projection: string;
  /** Position reached; the run ends when it reaches `head` (re-read while catching up). */
  position: bigint | null;
  head: bigint | null;
  events: number;
}

export interface ReplayOptions {
  onProgress?: (progress: ReplayProgress) => void;
  /** Stop after this many pages without switching over (tests of resumption). */
  maxPages?: number;
  pageSize?: number;
}

/**
 * Rebuilds one read model from position 0 into fresh collections while the service keeps
 * serving (and updating) the live ones, then swaps the rebuilt ones in. Resumable: the
 * rebuild keeps its own checkpoint, so a second run continues where the first stopped. After
 * the swap, the live projector finds its checkpoint moved, reloads, and continues from the
 * replay's position.
 */
export async function replayProjection(log: EventLog, readStore: ReadStore, projection: Projection, options: ReplayOptions = {}): Promise<'switched' | 'interrupted'> {
  const checkpointName = replayCheckpoint(projection.name);
  const collections = projection.collections.map((collection) => collection.name);
  for (const collection of projection.collections) {
    // Indexes belong to collection names: the rebuilt one needs them now, the live one once swapped in.
    await readStore.ensureIndexes(rebuiltCollection(collection.name), collection.indexes);
    await readStore.ensureIndexes(collection.name, collection.indexes);
  }
  let position = (await readStore.checkpoint(checkpointName)).position;
  if (position === null) await readStore.reset(checkpointName, collections.map(rebuiltCollection));
  const handled = new Set<string>(projection.eventTypes);
  let events = 0;
  for (let pages = 0; ; pages += 1) {
    if (options.maxPages !== undefined && pages >= options.maxPages) return 'interrupted';
    const head = await log.store.headPosition();
    const page = await log.readAll(position, options.pageSize ?? PAGE_SIZE);
    if (page.length === 0) break;
    const docs = new Map<string, { ref: DocumentRef; doc: Doc | null }>();
    for (const event of page) {
      if (!handled.has(event.type)) continue;
      for (const ref of projection.targets(event)) {
        const rebuilt = { collection: rebuiltCollection(ref.collection), id: ref.id };
        const key = `${rebuilt.collection}\u0000${rebuilt.id}`;
        const current = docs.has(key) ? docs.get(key)!.doc : await readStore.get<Doc>(rebuilt.collection, rebuilt.id);
        docs.set(key, { ref: rebuilt, doc: projection.evolve(ref, current, event) });
      }
    }
    const changes: DocumentChange[] = [...docs.values()].map(({ ref, doc }) => (doc === null ? { op: 'delete', ...ref } : { op: 'put', ...ref, doc }));
    const last = page[page.length - 1]!.position;
    await readStore.commitBatches([{ projector: checkpointName, version: projection.version, changes, position: last, after: position }]);
    position = last;
    events += page.length;
    options.onProgress?.({ projection: projection.name, position, head, events });
  }
  if (position === null) {
    // An empty log: record an empty rebuild so the swap has a checkpoint to move.
    await readStore.commitBatches([{ projector: checkpointName, version: projection.version, changes: [], position: 0n, after: null }]);
  }
  await readStore.swapIn(projection.name, checkpointName, projection.version, collections.map((collection) => [collection, rebuiltCollection(collection)]));
  return 'switched';
}
