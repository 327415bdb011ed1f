import type { Doc, DocumentRef, Projection } from '../../../projections/projection.js';
import type { DocumentChange, ReadStore } from '../../ports/read-store.js';
import type { LoggedEvent } from '../event-log.js';

export interface FoldedBatch {
  changes: DocumentChange[];
  /** Position of the last event folded (null: none after the checkpoint). */
  position: bigint | null;
  /** The event `evolve` threw on; folding stopped before it. */
  failure: { event: LoggedEvent; error: unknown } | null;
}

/**
 * Folds the events after `checkpoint` into a projection's documents, loading each touched
 * document once: all of them up front, one `getMany` per collection (one read transaction on
 * SQLite, one round trip on MongoDB), rather than one read each. Stops at the first event
 * `evolve` (or `targets`) cannot apply.
 */
export async function foldBatch(readStore: ReadStore, projection: Projection, events: LoggedEvent[], checkpoint: bigint | null): Promise<FoldedBatch> {
  const handled = new Set<string>(projection.eventTypes);
  const unfolded = checkpoint === null ? events : events.filter((event) => event.position > checkpoint);
  const stored = await storedDocuments(
    readStore,
    projection,
    unfolded.filter((event) => handled.has(event.type)),
  );
  const docs = new Map<string, { ref: DocumentRef; doc: Doc | null }>();
  let position: bigint | null = null;
  let failure: FoldedBatch['failure'] = null;
  for (const event of unfolded) {
    if (handled.has(event.type)) {
      try {
        // An event lands in all its documents or, if evolve throws, in none.
        const updates: [string, { ref: DocumentRef; doc: Doc | null }][] = [];
        for (const ref of projection.targets(event)) {
          const key = keyOf(ref);
          const current = docs.has(key) ? docs.get(key)!.doc : (stored.get(key) ?? null);
          updates.push([key, { ref, doc: projection.evolve(ref, current, event) }]);
        }
        for (const [key, update] of updates) docs.set(key, update);
      } catch (error) {
        failure = { event, error };
        break;
      }
    }
    position = event.position;
  }
  const changes: DocumentChange[] = [...docs.values()].map(({ ref, doc }) => (doc === null ? { op: 'delete', ...ref } : { op: 'put', ...ref, doc }));
  return { changes, position, failure };
}

function keyOf(ref: DocumentRef): string {
  return `${ref.collection}\u0000${ref.id}`;
}

/** The stored documents the events name, by key; up to the first event whose targets throw (the fold stops there). */
async function storedDocuments(readStore: ReadStore, projection: Projection, events: LoggedEvent[]): Promise<Map<string, Doc>> {
  const idsByCollection = new Map<string, string[]>();
  for (const event of events) {
    let refs: DocumentRef[];
    try {
      refs = projection.targets(event);
    } catch {
      break;
    }
    for (const ref of refs) {
      const ids = idsByCollection.get(ref.collection);
      if (ids) ids.push(ref.id);
      else idsByCollection.set(ref.collection, [ref.id]);
    }
  }
  const stored = new Map<string, Doc>();
  for (const [collection, ids] of idsByCollection) {
    for (const [id, doc] of await readStore.getMany<Doc>(collection, ids)) stored.set(keyOf({ collection, id }), doc);
  }
  return stored;
}
