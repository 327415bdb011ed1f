import path from 'node:path';
import Database from 'better-sqlite3';
import { privateFile } from '../../private-files.js';
import { StoreUnavailableError } from '../../ports/event-store.js';

export type SqliteConnection = Database.Database;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  position    INTEGER PRIMARY KEY AUTOINCREMENT,
  id          TEXT    NOT NULL UNIQUE,
  stream      TEXT    NOT NULL,
  revision    INTEGER NOT NULL,
  type        TEXT    NOT NULL,
  data        TEXT    NOT NULL,
  metadata    TEXT    NOT NULL,
  recorded_at TEXT    NOT NULL,
  UNIQUE (stream, revision)
);
CREATE INDEX IF NOT EXISTS events_by_type ON events (type, position);
-- Read-model documents: one table per collection (rm_<name>), created by SqliteReadStore.
CREATE TABLE IF NOT EXISTS checkpoints (
  projector TEXT PRIMARY KEY,
  position  INTEGER,
  version   INTEGER NOT NULL
);
`;

/** The embedded database's file name inside DATA_DIR. */
export const DATABASE_FILE = 'referrals.db';

/** Where the embedded database of `dataDir` lives. */
export function databasePath(dataDir: string): string {
  return path.resolve(dataDir, DATABASE_FILE);
}

/** Opens (creating when needed) the single embedded database file under `dataDir`. */
export function openSqlite(dataDir: string, fileName = DATABASE_FILE): SqliteConnection {
  const db = new Database(privateFile(dataDir, fileName));
  db.pragma('journal_mode = WAL');
  // Commits do not wait for the disk: the event store syncs the WAL itself, off the event loop,
  // before it acknowledges an append (src/adapters/sqlite/sqlite-event-store.ts). Everything else
  // in this file (read models, checkpoints, snapshots) is derived from the log: a power cut takes
  // it back to an earlier checkpoint, from which it catches up.
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  // Erasure (SPEC §13): content SQLite frees (an updated read-model row, a deleted document) is
  // overwritten with zeros instead of lingering in free space.
  db.pragma('secure_delete = ON');
  db.exec(SCHEMA);
  return db;
}

/**
 * A bound parameter the query planner does not look at: write it in place of `?` where a
 * statement runs often. SQLite as bundled with better-sqlite3 (3.54, built with STAT4) plans a
 * statement again on every run when a bound value could change its plan — any `LIMIT ?`, and an
 * equality on an index column that ORDER BY, MIN or MAX also use (`stream = ? … ORDER BY
 * revision`) — and planning again costs 5 to 8 times the statement itself. A scalar subquery
 * hands the same value to the same plan (the index is still used; no affinity is added, so
 * comparisons behave exactly as with `?`), and the statement is planned once.
 * test/unit/adapters/sqlite-planning.test.ts shows the plans.
 */
export const STABLE_PARAM = '(SELECT ?)';

/** Runs `work` in a `BEGIN IMMEDIATE` transaction (takes the write lock up front). */
export function writeTransaction<T>(db: SqliteConnection, work: () => T): T {
  return guardSqlite(() => db.transaction(work).immediate());
}

/**
 * Runs `work`, which makes `reads` look-ups, in one read transaction when there are several.
 * Each read on its own opens and closes a transaction: on a WAL file that is a lock on the -shm
 * file and a look at the WAL each time, several times the cost of a point look-up itself.
 * Together they share one (and see one snapshot of the file).
 */
export function readTogether<T>(db: SqliteConnection, reads: number, work: () => T): T {
  if (reads < 2 || db.inTransaction) return guardSqlite(work);
  // One transaction function per connection: better-sqlite3 builds a new one at each
  // db.transaction() call, which costs about as much as the lock it saves.
  let inReadTransaction = readTransactions.get(db);
  if (!inReadTransaction) {
    inReadTransaction = db.transaction((run: () => unknown) => run());
    readTransactions.set(db, inReadTransaction);
  }
  const run = inReadTransaction;
  return guardSqlite(() => run.deferred(work) as T);
}

const readTransactions = new WeakMap<SqliteConnection, Database.Transaction<(run: () => unknown) => unknown>>();

const TRANSIENT_CODES = new Set(['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_IOERR', 'SQLITE_CANTOPEN', 'SQLITE_FULL', 'SQLITE_READONLY']);

/** Maps storage-level failures (locked, I/O, closed) to StoreUnavailableError; lets others through. */
export function guardSqlite<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    const code = (error as { code?: string }).code ?? '';
    const baseCode = code.split('_').slice(0, 2).join('_');
    if (TRANSIENT_CODES.has(baseCode) || (error instanceof TypeError && /database connection is not open/.test(error.message))) {
      throw new StoreUnavailableError(`SQLite unavailable: ${(error as Error).message}`, { cause: error });
    }
    throw error;
  }
}

/**
 * Prepared statements by SQL text: queries built from a few shapes (filters, orderings) are
 * compiled once instead of on every call.
 */
export class StatementCache {
  private readonly statements = new Map<string, Database.Statement>();

  constructor(private readonly db: SqliteConnection) {}

  get<P extends unknown[], R>(sql: string): Database.Statement<P, R> {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement as unknown as Database.Statement<P, R>;
  }
}
