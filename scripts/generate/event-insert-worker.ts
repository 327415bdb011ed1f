/**
 * The generator's event writer, on a thread of its own (see BulkAppender): it inserts the rows
 * the generator sends, in the order sent, into one open transaction on its own connection to
 * the log, and commits or rolls it back when told to. The generator goes on deciding the next
 * events meanwhile, so the two cores of a small machine share the work.
 *
 * Messages in: `rows` (an array of [position, id, stream, revision, type, data, metadata,
 * recorded_at]), `commit`, `rollback`, `close`. Out: one answer to each `commit`, `rollback` and
 * `close`: `{ ok: true }`, or, to a `commit`, `{ ok: false, error }` when a row or the commit
 * failed (the transaction is then rolled back, and rows sent after the failure are dropped).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openSqlite } from '../../src/adapters/sqlite/sqlite-database.js';

export type EventRow = [position: number, id: string, stream: string, revision: number, type: string, data: string, metadata: string, recordedAt: string];
export type WorkerMessage = { kind: 'rows'; rows: EventRow[] } | { kind: 'commit' } | { kind: 'rollback' } | { kind: 'close' };
export type WorkerAnswer = { ok: true } | { ok: false; error: string };

const port = parentPort;
if (port === null) throw new Error('event-insert-worker runs as a worker thread');
const { dataDir, fileName } = workerData as { dataDir: string; fileName: string };
const db = openSqlite(dataDir, fileName);
// A large page cache keeps the indexes of a long log in memory.
db.pragma('cache_size = -65536');
const insert = db.prepare('INSERT INTO events (position, id, stream, revision, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
/** The first failure of the open transaction (already rolled back), reported at its commit. */
let failure: Error | null = null;

function rollback(): void {
  if (db.inTransaction) db.exec('ROLLBACK');
}

function insertRows(rows: EventRow[]): void {
  if (failure !== null) return;
  try {
    if (!db.inTransaction) db.exec('BEGIN IMMEDIATE');
    for (const row of rows) insert.run(...row);
  } catch (error) {
    failure = error as Error;
    rollback();
  }
}

function commit(): WorkerAnswer {
  try {
    if (failure !== null) throw failure;
    if (db.inTransaction) db.exec('COMMIT');
    return { ok: true };
  } catch (error) {
    rollback();
    return { ok: false, error: (error as Error).message };
  } finally {
    failure = null;
  }
}

port.on('message', (message: WorkerMessage) => {
  switch (message.kind) {
    case 'rows':
      insertRows(message.rows);
      return;
    case 'commit':
      port.postMessage(commit());
      return;
    case 'rollback':
      rollback();
      failure = null;
      port.postMessage({ ok: true } satisfies WorkerAnswer);
      return;
    case 'close':
      rollback();
      db.close();
      port.postMessage({ ok: true } satisfies WorkerAnswer);
      port.close();
      return;
  }
});
