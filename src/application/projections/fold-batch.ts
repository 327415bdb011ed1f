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
 * document once. Stops at the first event `evolve` cannot apply.
 */
export async function foldBatch(readStore: ReadStore, projection: Projection, events: LoggedEvent[], checkpoint: bigint | null): Promise<FoldedBatch> {
  const handled = new Set<string>(projection.eventTypes);
  const docs = new Map<string, { ref: DocumentRef; doc: Doc | null }>();
  let position: bigint | null = null;
  let failure: FoldedBatch['failure'] = null;
  for (const event of events) {
    if (checkpoint !== null && event.position <= checkpoint) continue;
    if (handled.has(event.type)) {
      try {
        // An event lands in all its documents or, if evolve throws, in none.
        const updates: [string, { ref: DocumentRef; doc: Doc | null }][] = [];
        for (const ref of projection.targets(event)) {
          const key = `${ref.collection}\u0000${ref.id}`;
          const current = docs.has(key) ? docs.get(key)!.doc : await readStore.get<Doc>(ref.collection, ref.id);
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
