import fs from 'node:fs';
import { StoreUnavailableError } from '../../ports/event-store.js';
import type { SqliteConnection } from './sqlite-database.js';

/** Makes every commit made so far on a connection durable. */
export type SyncLog = () => Promise<void>;

/**
 * `fdatasync` of the connection's WAL file, on libuv's thread pool: the event loop goes on
 * meanwhile. A connection that commits with `synchronous = NORMAL` writes a commit's frames to
 * the WAL without syncing them; syncing the file afterwards makes every frame written before it
 * durable, as `synchronous = FULL` would have at the commit. An in-memory database has nothing
 * to sync.
 */
export function walSync(db: SqliteConnection): SyncLog {
  if (db.memory) return async () => {};
  let fd: number | null = null;
  return () =>
    new Promise<void>((resolve, reject) => {
      // Opened at the first sync: the WAL file exists once the connection has written.
      fd ??= fs.openSync(`${db.name}-wal`, 'r');
      fs.fdatasync(fd, (error) => (error ? reject(error) : resolve()));
    });
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
    private readonly sync: SyncLog,
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
      this.running ??= this.syncWhileWaiting().finally(() => {
        this.running = null;
      });
    });
  }

  /** Resolves when no sync is running (before the connection closes). */
  async idle(): Promise<void> {
    await this.running;
  }

  private async syncWhileWaiting(): Promise<void> {
    while (this.waiting.length > 0) {
      const waiting = this.waiting.splice(0);
      try {
        if (this.failed) throw this.failed;
        await this.sync();
      } catch (error) {
        this.failed ??= new StoreUnavailableError(`The disk failed to sync ${this.what}; restart the service`, { cause: error });
        for (const commit of waiting) commit.reject(this.failed);
        continue;
      }
      for (const commit of waiting) commit.resolve();
    }
  }
}
