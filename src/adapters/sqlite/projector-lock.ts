import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { privateDataDir } from '../../private-files.js';

/** The file whose lock marks the process projecting a DATA_DIR. */
export const PROJECTOR_LOCK_FILE = 'projector.lock';

/**
 * How long a standby leaves a missing lock file to its holder, which makes a new one within a
 * second (src/backends/embedded.ts), before it makes one itself: the holder is gone too.
 */
const MISSING_FILE_GRACE_MS = 3_000;

/**
 * The projector's place on one embedded DATA_DIR: at most one process (or one service in a
 * process) holds it. Held as an open exclusive transaction on a SQLite file of its own, so the
 * operating system frees it the moment the holder dies, SIGKILL included: no expiry to wait out,
 * no clock, no process id to trust. SQLite also keeps two connections of one process apart.
 */
export class SqliteProjectorLock {
  private db: Database.Database;
  /** The file this lock's connection has open (a deleted or replaced file no longer excludes anyone). */
  private opened: fs.Stats;
  private held = false;
  /** Since when a standby has found no lock file (MISSING_FILE_GRACE_MS). */
  private missingSince: number | null = null;

  constructor(private readonly dataDir: string) {
    [this.db, this.opened] = openOn(dataDir);
  }

  /** Takes the lock when no other holder has it; whether this one holds it now. */
  tryTake(): boolean {
    if (this.held) return true;
    if (!this.onCurrentFile()) return false;
    try {
      this.db.exec('BEGIN EXCLUSIVE');
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_BUSY') return false;
      throw error;
    }
    this.held = true;
    return true;
  }

  /**
   * Held, whether the lock still excludes the processes that start after now: its file may have
   * been deleted or replaced (by hand, a clean-up job), and a process started then would take a
   * new one. `kept`: the file is the one held; `renewed`: it was gone, and the file now in its
   * place is held instead; `lost`: another process holds the file now in its place.
   */
  keepOnItsFile(): 'kept' | 'renewed' | 'lost' {
    if (!this.held || sameFile(lockFileNow(this.dataDir), this.opened)) return 'kept';
    const [db, opened] = openOn(this.dataDir);
    try {
      db.exec('BEGIN EXCLUSIVE');
    } catch (error) {
      db.close();
      if ((error as { code?: string }).code === 'SQLITE_BUSY') return 'lost';
      throw error;
    }
    // The old file is out of reach of any other process: its lock can go.
    this.db.close();
    [this.db, this.opened] = [db, opened];
    return 'renewed';
  }

  /**
   * Not held: whether this lock's connection is on the file now in DATA_DIR, moving it there when
   * not. A deleted file excludes no one: its holder takes the one made in its place
   * (keepOnItsFile), and a standby still trying the deleted one took it as well, so that two
   * processes projected (review). A missing file is left to its holder for
   * MISSING_FILE_GRACE_MS, then made here.
   */
  private onCurrentFile(): boolean {
    const now = lockFileNow(this.dataDir);
    if (sameFile(now, this.opened)) {
      this.missingSince = null;
      return true;
    }
    if (!now) {
      this.missingSince ??= Date.now();
      if (Date.now() - this.missingSince < MISSING_FILE_GRACE_MS) return false;
    }
    this.missingSince = null;
    this.db.close();
    [this.db, this.opened] = openOn(this.dataDir);
    return true;
  }

  /** Lets a standby take over; the lock's file stays. */
  release(): void {
    if (this.held) this.db.exec('ROLLBACK');
    this.held = false;
  }

  close(): void {
    this.release();
    this.db.close();
  }
}

/** Whether a service projects on `dataDir` now: its lock is held (taken and given back at once when free). */
export function projectorRunsOn(dataDir: string): boolean {
  if (!fs.existsSync(path.join(dataDir, PROJECTOR_LOCK_FILE))) return false;
  const lock = new SqliteProjectorLock(dataDir);
  try {
    return !lock.tryTake();
  } finally {
    lock.close();
  }
}

/** The lock file now in `dataDir`, if any. */
function lockFileNow(dataDir: string): fs.Stats | undefined {
  return fs.statSync(path.join(dataDir, PROJECTOR_LOCK_FILE), { throwIfNoEntry: false });
}

function sameFile(now: fs.Stats | undefined, opened: fs.Stats): boolean {
  return now !== undefined && now.ino === opened.ino && now.dev === opened.dev;
}

/** A connection on the lock's file (created when missing), and the file it has open. */
function openOn(dataDir: string): [Database.Database, fs.Stats] {
  const file = createdOnce(dataDir);
  // Rollback journal (not WAL): there an exclusive transaction keeps every other one out.
  const db = new Database(file);
  db.pragma('busy_timeout = 0');
  return [db, fs.statSync(file)];
}

/**
 * The lock's file, created private when missing. An existing one is never opened here: closing
 * any handle to a file drops every POSIX lock this process holds on it, the held lock included.
 */
function createdOnce(dataDir: string): string {
  privateDataDir(dataDir);
  // Absolute, as SQLite is given every file here (src/private-files.ts, privateFile).
  const file = path.resolve(dataDir, PROJECTOR_LOCK_FILE);
  try {
    fs.closeSync(fs.openSync(file, 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return file;
}
