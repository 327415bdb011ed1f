/**
 * The generator's event writer, on a thread of its own (see BulkAppender): it inserts the rows
 * the generator sends, in the order sent, into one open transaction on its own connection to
 * the log, and commits or rolls it back when told to. The generator goes on deciding the next
 * events meanwhile, so the two cores of a small machine share the work.
 *
 * Messages in: `rows` (an array of [position, id, stream, revision, type, data, metadata,
 * recorded_at]), `commit`, `rollback`, `close`. Out: one answer to each `commit`, `rollback` and
 * `close`: `{ ok: true }`, or `{ ok: false, error }` when a row or the commit failed (the
 * transaction is then rolled back, and rows sent after the failure are dropped until the answer).
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
db.pragma('cache_size = -65536');
db.pragma('synchronous = NORMAL');
const insert = db.prepare('INSERT INTO events (position, id, stream, revision, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
let failure: Error | null = null;

function answer(message: WorkerAnswer): void {
  port?.postMessage(message);
}

port.on('message', (message: WorkerMessage) => {
  try {
    if (message.kind === 'rows') {
      if (failure !== null) return;
      if (!db.inTransaction) db.exec('BEGIN IMMEDIATE');
      for (const row of message.rows) insert.run(...row);
      return;
    }
    if (message.kind === 'close') {
      if (db.inTransaction) db.exec('ROLLBACK');
      db.close();
      answer({ ok: true });
      port.close();
      return;
    }
    if (failure !== null) throw failure;
    if (db.inTransaction) db.exec(message.kind === 'commit' ? 'COMMIT' : 'ROLLBACK');
    answer({ ok: true });
  } catch (error) {
    if (message.kind === 'rows') failure = error as Error;
    else {
      failure = null;
      answer({ ok: false, error: (error as Error).message });
    }
    if (db.open && db.inTransaction) db.exec('ROLLBACK');
  }
});
