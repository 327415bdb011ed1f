import type { LoggedEvent } from '../src/application/event-log.js';
import type { EventType } from '../src/domain/events/index.js';
import type { IndexSpec } from '../src/ports/read-store.js';

export type Doc = Record<string, unknown>;

export interface DocumentRef {
  collection: string;
  id: string;
}

/**
 * A read model: which documents an event touches and how each one changes. Pure — no I/O.
 * Bump `version` whenever `evolve` changes what it writes; the service then asks for a replay.
 */
export interface Projection {
  name: string;
  version: number;
  collections: { name: string; indexes: IndexSpec[] }[];
  eventTypes: readonly EventType[];
  targets(event: LoggedEvent): DocumentRef[];
  /** The new document; null deletes it. */
  evolve(ref: DocumentRef, doc: Doc | null, event: LoggedEvent): Doc | null;
}
