import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { StoreUnavailableError } from '../../ports/event-store.js';
import { guardSqlite, type SqliteConnection } from './sqlite-database.js';

/** Makes every commit made so far on a connection durable. */
export interface LogSyncer {
  sync(): Promise<void>;
  /** Releases what the syncer holds (its file descriptor). */
  close(): void;
}

/** Which file a path names: its device and inode. */
interface FileId {
  dev: number;
  ino: number;
}

function idOf(stats: fs.Stats): FileId {
  return { dev: stats.dev, ino: stats.ino };
}

/**
 * The file at `file` now: null when there is none, 'unknown' when it cannot be looked up (an I/O
 * error, a stale NFS handle). Synchronous on purpose: SQLite reads and writes these same files on
 * the event loop anyway, a stat of them is a look-up of a cached inode (about 4 µs), and the same
 * stat sent to libuv's thread pool costs about 50 µs of CPU on its way there and back, twice per
 * sync, on the cores the service shares with its threads.
 */
function fileAt(file: string): FileId | null | 'unknown' {
  try {
    return idOf(fs.statSync(file));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? null : 'unknown';
  }
}

/** Whether the path is known to name another file than the one opened (a failed look-up proves nothing). */
function replaced(now: FileId | null | 'unknown', opened: FileId): boolean {
  if (now === 'unknown') return false;
  return now === null || now.dev !== opened.dev || now.ino !== opened.ino;
}

/** The database file a connection opened and its WAL, to be told apart from what their names name later. */
export interface OpenedFiles {
  name: string;
  database: FileId;
  wal: FileId | null;
}

export function openedFiles(db: SqliteConnection): OpenedFiles {
  const wal = fileAt(`${db.name}-wal`);
  return { name: db.name, database: idOf(fs.statSync(db.name)), wal: wal === 'unknown' ? null : wal };
}

/**
 * After its connection closed: a WAL left under the name of a database file that was replaced
 * while the service had it open (a backup moved over it) holds pages of the file no name names
 * any more. SQLite would replay them into the new file at the next start, damaging it (a read
 * could answer another user's document), so it goes, with its -shm. A WAL that is not the one
 * opened (an operator put a database back with its own WAL) stays. Whether one was removed.
 */
export function removeWalOfReplacedFile(opened: OpenedFiles): boolean {
  if (opened.wal === null) return false;
  const database = fileAt(opened.name);
  const wal = fileAt(`${opened.name}-wal`);
  if (database === 'unknown' || wal === 'unknown' || wal === null || !replaced(database, opened.database) || replaced(wal, opened.wal)) return false;
  fs.rmSync(`${opened.name}-wal`, { force: true });
  fs.rmSync(`${opened.name}-shm`, { force: true });
  return true;
}

/**
 * A database file, or its WAL, removed or replaced while the service has it open (an operator's
 * `rm`, a backup moved over it). SQLite goes on writing into the file it opened, which no path
 * names any more: what it writes from then on is gone at the next start.
 */
class DatabaseFileReplacedError extends Error {
  constructor(file: string) {
    super(
      `${file} (or its -wal) was removed or replaced while the service had it open: no write is acknowledged from now on (what was ` +
        'written since went into the file no path names any more). Stop the service, put the files back (or restore one backup: npm run restore-backup), then start it again',
    );
    this.name = 'DatabaseFileReplacedError';
  }
}

/**
 * `fdatasync` of the connection's WAL file, on libuv's thread pool: the event loop goes on
 * meanwhile. A connection that commits with `synchronous = NORMAL` writes a commit's frames to
 * the WAL without syncing them; syncing the file afterwards makes every frame written before it
 * durable, as `synchronous = FULL` would have at the commit. The file is opened once, when the
 * syncer is made (the stores have written their schema by then, so the WAL exists). After each
 * sync the database file and the WAL are looked up by path: when either is no longer the file
 * opened, the sync fails (`DatabaseFileReplacedError`), so what was written to a file that is gone
 * is never acknowledged. An in-memory database has nothing to sync.
 */
export function walSyncer(db: SqliteConnection): LogSyncer {
  if (db.memory) return { sync: async () => {}, close: () => {} };
  const fd = fs.openSync(`${db.name}-wal`, fs.constants.O_RDWR | fs.constants.O_CREAT);
  const opened = { database: idOf(fs.statSync(db.name)), wal: idOf(fs.fstatSync(fd)) };
  let closed = false;
  return {
    sync: async () => {
      await new Promise<void>((resolve, reject) => fs.fdatasync(fd, (error) => (error ? reject(error) : resolve())));
      if (replaced(fileAt(db.name), opened.database) || replaced(fileAt(`${db.name}-wal`), opened.wal)) throw new DatabaseFileReplacedError(db.name);
    },
    close: () => {
      if (!closed) fs.closeSync(fd);
      closed = true;
    },
  };
}

/**
 * The syncs of one connection, shared by the commits that wait for them: at most one runs at a
 * time, and the commits made while it runs share the next one. Once a sync has failed, what the
 * disk holds is unknown: every wait fails from then on (StoreUnavailableError), and the stores
 * refuse to write (`failure`) until the service is restarted.
 */
export class SharedSyncs {
  private waiting: { resolve(): void; reject(error: unknown): void }[] = [];
  private running: Promise<void> | null = null;
  private failed: StoreUnavailableError | null = null;

  constructor(
    private readonly syncer: LogSyncer,
    /** What is synced, for the error message ("the event log"). */
    private readonly what: string,
  ) {}

  /** The failure of an earlier sync, if one failed. */
  get failure(): StoreUnavailableError | null {
    return this.failed;
  }

  /** Resolves once every commit made before this call is durable: at the end of a sync that starts after it. */
  afterCommit(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      if (!this.running) this.run();
    });
  }

  /** Waits for the syncs under way, then releases the syncer (before the connection closes). */
  async close(): Promise<void> {
    while (this.running) await this.running;
    this.syncer.close();
  }

  private run(): void {
    this.running = this.syncWhileWaiting().finally(() => {
      this.running = null;
      // A commit that asked between the loop's end and this line.
      if (this.waiting.length > 0) this.run();
    });
  }

  private async syncWhileWaiting(): Promise<void> {
    while (this.waiting.length > 0) {
      const waiting = this.waiting.splice(0);
      try {
        if (this.failed) throw this.failed;
        await this.syncer.sync();
      } catch (error) {
        const reason = error instanceof DatabaseFileReplacedError ? error.message : `The disk failed to sync ${this.what}; restart the service`;
        this.failed ??= new StoreUnavailableError(reason, { cause: error });
        for (const commit of waiting) commit.reject(this.failed);
        continue;
      }
      for (const commit of waiting) commit.resolve();
    }
  }
}

/**
 * Copies the whole WAL of each file into its database and empties the WAL file (after an
 * erasure: no older page image may linger in it), within one 2 s for all; resolves to those whose
 * WAL stayed busy. A WAL cannot be emptied while another connection reads from it (an online
 * backup, a long export) or checkpoints it (the background thread,
 * src/adapters/sqlite/wal-checkpointer.ts): SQLite then answers busy. Each attempt answers at
 * once (busy timeout 0: with the connection's own 5 s timeout, every attempt held the event
 * loop, and so every request, while a reader stayed); `DeferredWalPurges` takes the busy ones
 * from there.
 */
export async function truncateWals(dbs: readonly SqliteConnection[]): Promise<SqliteConnection[]> {
  let busy = [...dbs];
  for (let attempt = 0; attempt < 100 && busy.length > 0; attempt += 1) {
    if (attempt > 0) await sleep(20);
    busy = busy.filter((db) => !truncateNow(db));
  }
  return busy;
}

/** One attempt at emptying the WAL, without waiting for other connections: true when it is empty. */
export function truncateNow(db: SqliteConnection): boolean {
  return guardSqlite(() => {
    const timeout = db.pragma('busy_timeout', { simple: true }) as number;
    db.pragma('busy_timeout = 0');
    try {
      const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
      return result?.busy === 0;
    } finally {
      db.pragma(`busy_timeout = ${timeout}`);
    }
  });
}

/**
 * WALs an erasure could not empty at once (a reader held them past `truncateWals`' 2 s): each is
 * tried again every second, without waiting, until it is emptied, so the erased pages go as soon
 * as the reader lets go rather than whenever later writes overwrite them.
 */
export class DeferredWalPurges {
  private readonly waiting = new Set<SqliteConnection>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(private readonly intervalMs = 1_000) {}

  add(db: SqliteConnection): void {
    // Stopped: the connections are closing (an erasure finishing during shutdown).
    if (this.stopped) return;
    this.waiting.add(db);
    this.timer ??= setInterval(() => this.retry(), this.intervalMs).unref();
  }

  /** Tries once now; a WAL that could not be emptied (busy, or the store failing) waits for the next rounds. */
  addUnlessEmptied(db: SqliteConnection): void {
    let emptied = false;
    try {
      emptied = truncateNow(db);
    } catch {
      // Tried again with the others.
    }
    if (!emptied) this.add(db);
  }

  /** Connections whose WAL still waits to be emptied. */
  get pending(): number {
    return this.waiting.size;
  }

  private retry(): void {
    for (const db of this.waiting) {
      try {
        if (truncateNow(db)) this.waiting.delete(db);
      } catch {
        // The store is failing now; the next round tries again.
      }
    }
    if (this.waiting.size === 0) this.pause();
  }

  /** Stops trying, for good (before the connections close). */
  stop(): void {
    this.stopped = true;
    this.pause();
  }

  private pause(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
