import Database from 'better-sqlite3';
import { databasePath, openSqlite } from '../adapters/sqlite/sqlite-database.js';
import { SqliteEventStore } from '../adapters/sqlite/sqlite-event-store.js';
import { SqliteRateLimitStore } from '../adapters/sqlite/sqlite-rate-limit-store.js';
import { SqliteReadStore } from '../adapters/sqlite/sqlite-read-store.js';
import type { Backend } from './backend.js';

/**
 * Rate-limit counters get their own connection to the same file with `synchronous = NORMAL`
 * (a counter lost to a power cut is harmless; a hit then costs no fsync), so the events keep
 * `synchronous = FULL` while every service on the file shares the limits.
 */
function openRateLimitConnection(dataDir: string): Database.Database {
  const db = new Database(databasePath(dataDir));
  db.pragma('busy_timeout = 5000');
  db.pragma('synchronous = NORMAL');
  return db;
}

/** Events, read models and rate-limit counters in one SQLite file under `dataDir` (WAL). */
export function openEmbeddedBackend(dataDir: string): Backend {
  const db = openSqlite(dataDir);
  const limitsDb = openRateLimitConnection(dataDir);
  const eventStore = new SqliteEventStore(db);
  const readStore = new SqliteReadStore(db);
  const rateLimits = new SqliteRateLimitStore(limitsDb);
  return {
    name: 'embedded',
    eventStore,
    readStore,
    rateLimits,
    exclusively: (work) => work,
    async close() {
      await eventStore.close();
      await readStore.close();
      await rateLimits.close();
      limitsDb.close();
      db.close();
    },
  };
}
