import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/** How often the background thread checkpoints each registered database. */
const EVERY_MS = 100;
/**
 * WAL frames (pages) beyond which the thread makes the WAL start over. Under steady writes a
 * PASSIVE checkpoint stays a few hundred frames behind, and SQLite only starts the WAL over
 * when a writer finds it wholly copied: without this, the file grows for as long as the load
 * lasts. 4,096 frames of 4 KiB: 16 MiB, which is also the size the file is cut back to when it
 * starts over (`journal_size_limit`).
 */
const RESTART_FRAMES = 4_096;

/**
 * The background thread: a connection of its own to each registered file, and every EVERY_MS a
 * PASSIVE checkpoint of each, which never waits for readers or writers (one that meets another
 * checkpoint is tried again next time). When the WAL holds more than RESTART_FRAMES frames, a
 * RESTART checkpoint follows: it copies the few frames left while holding off writers (the
 * service's next write waits that long, a few milliseconds, through its busy timeout) and waits
 * for readers to leave the WAL, so the next write starts the WAL over. Each checkpoint syncs the
 * WAL before copying it into the database and the database after (any `synchronous` level above
 * OFF does; this build's default in WAL mode is NORMAL). A file it cannot open is reported, not
 * fatal. A checkpoint that fails (a full disk) is reported when it starts failing and once a
 * minute after, tried again ever more slowly (up to every 5 s), and its recovery is reported. Plain CommonJS evaluated by the worker, so it runs the same from the built service and
 * from the TypeScript tests.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const open = new Map();
parentPort.on('message', (message) => {
  if (message.add) {
    try {
      const db = new Database(message.add.file, { fileMustExist: true });
      db.pragma('busy_timeout = 200');
      open.set(message.add.id, { db, restartFrames: message.add.restartFrames, failing: false, reportedAt: 0, delay: 0, nextTry: 0 });
    } catch (error) {
      parentPort.postMessage({ failed: message.add.id, message: String(error.message) });
    }
  } else if (message.remove) {
    open.get(message.remove)?.db.close();
    open.delete(message.remove);
    parentPort.postMessage({ removed: message.remove });
  }
});
setInterval(() => {
  const now = Date.now();
  for (const [id, entry] of open) {
    if (entry.failing && now < entry.nextTry) continue;
    try {
      const [passive] = entry.db.pragma('wal_checkpoint(PASSIVE)');
      if (passive.log > entry.restartFrames) entry.db.pragma('wal_checkpoint(RESTART)');
      if (entry.failing) parentPort.postMessage({ recovered: id });
      entry.failing = false;
    } catch (error) {
      if (/SQLITE_BUSY|SQLITE_LOCKED/.test(String(error.code))) continue;
      // Reported when it starts failing, then once a minute while it goes on; tried again ever
      // more slowly, up to every 5 s (a full disk is not freed in 100 ms).
      if (!entry.failing || now - entry.reportedAt >= 60000) {
        parentPort.postMessage({ failed: id, message: String(error.message) });
        entry.reportedAt = now;
      }
      entry.delay = entry.failing ? Math.min(5000, entry.delay * 2) : workerData.everyMs;
      entry.failing = true;
      entry.nextTry = now + entry.delay;
    }
  }
}, workerData.everyMs);
`;

/** What the main thread keeps of a registered connection. */
interface Registered {
  file: string;
  restartFrames: number;
  onFailure: (file: string, message: string) => void;
  /** A checkpoint worked again after failures. */
  onRecovery?: (file: string) => void;
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
  /** Releases waiting for the thread's answer (it is kept referenced meanwhile). */
  private releasing = 0;
  private nextId = 1;

  register(db: Database.Database, reports: Pick<Registered, 'onFailure' | 'onRecovery'>, restartFrames: number): () => Promise<void> {
    if (db.memory) return async () => {};
    const id = this.nextId++;
    db.pragma('wal_autocheckpoint = 0');
    db.pragma(`journal_size_limit = ${restartFrames * Number(db.pragma('page_size', { simple: true }))}`);
    this.registered.set(id, { file: db.name, ...reports, restartFrames });
    this.started().postMessage({ add: { id, file: db.name, restartFrames } });
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
    worker.on('message', (message: { removed?: number; failed?: number; recovered?: number; message?: string }) => {
      if (message.removed !== undefined) this.registered.get(message.removed)?.removed?.();
      const recovered = message.recovered === undefined ? undefined : this.registered.get(message.recovered);
      recovered?.onRecovery?.(recovered.file);
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
        for (const [id, { file, restartFrames }] of remaining) next.postMessage({ add: { id, file, restartFrames } });
      }
    });
    this.worker = worker;
    return worker;
  }

  private async release(id: number, db: Database.Database): Promise<void> {
    const registered = this.registered.get(id)!;
    const worker = this.worker;
    if (worker) {
      // The thread is unref'd: while a release waits for its answer, the process must not end
      // under it (a stop would never settle, and the connection would not be handed back).
      this.releasing += 1;
      worker.ref();
      try {
        await new Promise<void>((resolve) => {
          registered.removed = resolve;
          worker.postMessage({ remove: id });
        });
      } finally {
        this.releasing -= 1;
        if (this.releasing === 0) worker.unref();
      }
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
 * (when it starts failing, then once a minute) and tried again, ever more slowly; `onRecovery`
 * hears when one works again. `restartFrames`: the WAL size, in pages, beyond which it is made
 * to start over (tests use small ones).
 */
export function checkpointInBackground(
  db: Database.Database,
  {
    onFailure = () => {},
    onRecovery,
    restartFrames = RESTART_FRAMES,
  }: { onFailure?: Registered['onFailure']; onRecovery?: Registered['onRecovery']; restartFrames?: number } = {},
): () => Promise<void> {
  return checkpointer.register(db, { onFailure, onRecovery }, restartFrames);
}

/** The background checkpoint thread when it runs (tests). */
export function checkpointThread(): Worker | null {
  return checkpointer.thread;
}
