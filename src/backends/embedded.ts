import { openSqlite } from '../adapters/sqlite/sqlite-database.js';
import { SqliteEventStore } from '../adapters/sqlite/sqlite-event-store.js';
import { SqliteReadStore } from '../adapters/sqlite/sqlite-read-store.js';
import { SqliteWebhookOutbox } from '../adapters/sqlite/sqlite-webhook-outbox.js';
import type { Backend } from './backend.js';

/** Events and read models in one SQLite file under `dataDir` (WAL, synchronous=FULL). */
export function openEmbeddedBackend(dataDir: string): Backend {
  const db = openSqlite(dataDir);
  const eventStore = new SqliteEventStore(db);
  const readStore = new SqliteReadStore(db);
  // The outbox has its own connection without an fsync per commit (synchronous=NORMAL, WAL): a
  // crash may forget the last attempts or feed pages, which are then sent or fed again — what
  // at-least-once allows — and never the events themselves.
  const outboxDb = openSqlite(dataDir);
  outboxDb.pragma('synchronous = NORMAL');
  return {
    name: 'embedded',
    eventStore,
    readStore,
    webhookOutbox: new SqliteWebhookOutbox(outboxDb),
    exclusively: (work) => work,
    async close() {
      await eventStore.close();
      await readStore.close();
      outboxDb.close();
      db.close();
    },
  };
}
