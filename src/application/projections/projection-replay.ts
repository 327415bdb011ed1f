import type { Projection } from '../../../projections/projection.js';
import type { ProjectorBatch, ReadStore } from '../../ports/read-store.js';
import type { EventLog } from '../event-log.js';
import { foldBatch } from './fold-batch.js';

const PAGE_SIZE = 1_000;
const REBUILT = '__rebuild';

export function rebuiltCollection(collection: string): string {
  return `${collection}${REBUILT}`;
}

export function replayCheckpoint(projection: string): string {
  return `replay:${projection}`;
}

export interface ReplayProgress {
  /** Position reached; the run ends when it reaches the head (re-read while catching up). */
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

export class ReplayFailedError extends Error {
  constructor(projection: string, eventId: string, cause: unknown) {
    super(`Replay of ${projection} cannot apply event ${eventId}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'ReplayFailedError';
  }
}

/**
 * Rebuilds read models from position 0 into fresh collections in one pass over the log, while
 * the service keeps serving (and updating) the live ones, then swaps the rebuilt ones in.
 * Resumable: each rebuild keeps its own checkpoint, so a second run continues where the first
 * stopped. After the swap, the live projector finds its checkpoint moved, reloads, and
 * continues from the replay's position.
 */
export async function replayProjections(
  log: EventLog,
  readStore: ReadStore,
  projections: Projection[],
  options: ReplayOptions = {},
): Promise<'switched' | 'interrupted'> {
  const checkpoints = new Map<string, bigint | null>();
  for (const projection of projections) {
    for (const collection of projection.collections) {
      // Indexes belong to collection names: the rebuilt one needs them now, the live one once swapped in.
      await readStore.ensureIndexes(rebuiltCollection(collection.name), collection.indexes);
      await readStore.ensureIndexes(collection.name, collection.indexes);
    }
    const checkpoint = (await readStore.checkpoint(replayCheckpoint(projection.name))).position;
    if (checkpoint === null) await readStore.reset(replayCheckpoint(projection.name), projection.collections.map((collection) => rebuiltCollection(collection.name)));
    checkpoints.set(projection.name, checkpoint);
  }
  const lowest = () => {
    const positions = [...checkpoints.values()];
    return positions.includes(null) ? null : positions.reduce((a, b) => (a! < b! ? a : b), positions[0] ?? null);
  };
  let events = 0;
  for (let pages = 0; ; pages += 1) {
    if (options.maxPages !== undefined && pages >= options.maxPages) return 'interrupted';
    const head = await log.store.headPosition();
    const page = await log.readAll(lowest(), options.pageSize ?? PAGE_SIZE);
    if (page.length === 0) break;
    const batches: ProjectorBatch[] = [];
    for (const projection of projections) {
      const after = checkpoints.get(projection.name)!;
      const folded = await foldBatch(readStore, projection, page, after, rebuiltCollection);
      if (folded.failure) throw new ReplayFailedError(projection.name, folded.failure.event.id, folded.failure.error);
      if (folded.position === null) continue;
      batches.push({ projector: replayCheckpoint(projection.name), version: projection.version, changes: folded.changes, position: folded.position, after });
    }
    if (batches.length > 0) await readStore.commitBatches(batches);
    for (const batch of batches) checkpoints.set(batch.projector.slice('replay:'.length), batch.position);
    events += page.length;
    options.onProgress?.({ position: page[page.length - 1]!.position, head, events });
  }
  for (const projection of projections) {
    if (checkpoints.get(projection.name) === null) {
      // An empty log: record an empty rebuild so the swap has a checkpoint to move.
      await readStore.commitBatches([{ projector: replayCheckpoint(projection.name), version: projection.version, changes: [], position: 0n, after: null }]);
    }
    const collections = projection.collections.map((collection): [string, string] => [collection.name, rebuiltCollection(collection.name)]);
    await readStore.swapIn(projection.name, replayCheckpoint(projection.name), projection.version, collections);
  }
  return 'switched';
}
