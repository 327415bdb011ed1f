import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/** How often the background thread checkpoints each registered database. */
const EVERY_MS = 100;

/**
 * The background thread: a connection of its own to each registered file, and a PASSIVE
 * checkpoint of each every EVERY_MS (it never waits for readers or writers; a checkpoint that
 * meets another one is simply tried again next time). A checkpoint syncs the WAL before copying
 * it into the database and the database after (any `synchronous` level above OFF does; this
 * build's default in WAL mode is NORMAL). A file it cannot open is reported, not fatal. Plain
 * CommonJS evaluated by the worker, so it runs the same from the built service and from the
 * TypeScript tests.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const open = new Map();
parentPort.on('message', (message) => {
  if (message.add) {
    try {
      open.set(message.add.id, new Database(message.add.file, { fileMustExist: true }));
    } catch (error) {
      parentPort.postMessage({ failed: message.add.id, message: String(error.message) });
    }
  } else if (message.remove) {
    open.get(message.remove)?.close();
    open.delete(message.remove);
    parentPort.postMessage({ removed: message.remove });
  }
});
setInterval(() => {
  for (const [id, db] of open) {
    try {
      db.pragma('wal_checkpoint(PASSIVE)');
    } catch (error) {
      if (!/SQLITE_BUSY|SQLITE_LOCKED/.test(String(error.code))) parentPort.postMessage({ failed: id, message: String(error.message) });
    }
  }
}, workerData.everyMs);
`;

/** What the main thread keeps of a registered connection. */
interface Registered {
  file: string;
  onFailure: (file: string, message: string) => void;
  /** Set while it is being released: called when the thread has closed its connection (or is gone). */
  removed?: () => void;
}

/**
 * Checkpoints the embedded databases' WALs on a background thread, one per process. SQLite
 * otherwise checkpoints inside the commit that fills the WAL past 1,000 pages: that commit
 * then copies the pages into the database and syncs both files while the event loop waits,
 * every few hundred commands. A registered connection stops checkpointing by itself
 * (`wal_autocheckpoint = 0`); releasing it hands the checkpoints back (before it closes, so its
 * close is the last connection's and removes the WAL). The thread stops with the last release;
 * if it dies, a new one takes over every registered file.
 */
class WalCheckpointer {
  private worker: Worker | null = null;
  private readonly registered = new Map<number, Registered>();
  private nextId = 1;

  register(db: Database.Database, onFailure: Registered['onFailure']): () => Promise<void> {
    if (db.memory) return async () => {};
    const id = this.nextId++;
    db.pragma('wal_autocheckpoint = 0');
    this.registered.set(id, { file: db.name, onFailure });
    this.started().postMessage({ add: { id, file: db.name } });
    let released: Promise<void> | null = null;
    return () => {
      released ??= this.release(id, db);
      return released;
    };
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, everyMs: EVERY_MS } });
    // Never what keeps the process alive.
    worker.unref();
    worker.on('message', (message: { removed?: number; failed?: number; message?: string }) => {
      if (message.removed !== undefined) this.registered.get(message.removed)?.removed?.();
      const failed = message.failed === undefined ? undefined : this.registered.get(message.failed);
      failed?.onFailure(failed.file, message.message ?? '');
    });
    worker.on('error', (error) => {
      for (const { file, onFailure } of this.registered.values()) onFailure(file, error.message);
    });
    worker.on('exit', () => {
      if (this.worker !== worker) return; // stopped on purpose
      this.worker = null;
      // It died: what was being released is released; a new thread takes over the rest.
      const remaining = [...this.registered].filter(([, registered]) => !registered.removed);
      for (const [, registered] of this.registered) registered.removed?.();
      if (remaining.length > 0) {
        const next = this.started();
        for (const [id, { file }] of remaining) next.postMessage({ add: { id, file } });
      }
    });
    this.worker = worker;
    return worker;
  }

  private async release(id: number, db: Database.Database): Promise<void> {
    const registered = this.registered.get(id)!;
    const worker = this.worker;
    if (worker) {
      await new Promise<void>((resolve) => {
        registered.removed = resolve;
        worker.postMessage({ remove: id });
      });
    }
    this.registered.delete(id);
    if (db.open) db.pragma('wal_autocheckpoint = 1000');
    if (this.registered.size === 0 && this.worker) {
      const stopping = this.worker;
      this.worker = null;
      await stopping.terminate();
    }
  }

  /** The background thread, when it runs. */
  get thread(): Worker | null {
    return this.worker;
  }
}

const checkpointer = new WalCheckpointer();

/**
 * Checkpoints `db`'s WAL on the process's background thread from now on; the returned function
 * stops that (call it before closing `db`). A checkpoint that fails is reported to `onFailure`
 * and tried again at the next turn.
 */
export function checkpointInBackground(db: Database.Database, onFailure: Registered['onFailure'] = () => {}): () => Promise<void> {
  return checkpointer.register(db, onFailure);
}

/** The background checkpoint thread when it runs (tests). */
export function checkpointThread(): Worker | null {
  return checkpointer.thread;
}
