import type { EventStore } from '../ports/event-store.js';
import type { ReadStore } from '../ports/read-store.js';

/** A pair of stores behind the ports: embedded (SQLite) or external (EventStoreDB + MongoDB). */
export interface Backend {
  name: 'embedded' | 'external';
  eventStore: EventStore;
  readStore: ReadStore;
  close(): Promise<void>;
}
