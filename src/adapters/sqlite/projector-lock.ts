import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { privateDataDir } from '../../private-files.js';

/** The file whose lock marks the process projecting a DATA_DIR. */
export const PROJECTOR_LOCK_FILE = 'projector.lock';

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
   * not and nobody holds the file it has open. A file deleted or replaced under a live holder is
   * still held: the holder moves to the one in its place within a second (keepOnItsFile), and a
   * standby that moved first took that one too, so that two processes projected (reviews). A
   * holder that hangs keeps it; one that is gone frees it, and the standby takes the current file
   * (made here when missing).
   */
  private onCurrentFile(): boolean {
    if (sameFile(lockFileNow(this.dataDir), this.opened)) return true;
    try {
      this.db.exec('BEGIN EXCLUSIVE');
      this.db.exec('ROLLBACK');
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_BUSY') return false;
      // Free, a deleted file answers an I/O error instead: nobody holds it.
    }
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
