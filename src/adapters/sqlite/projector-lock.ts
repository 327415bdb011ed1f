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
  private readonly db: Database.Database;
  private held = false;

  constructor(dataDir: string) {
    // Rollback journal (not WAL): there an exclusive transaction keeps every other one out.
    this.db = new Database(createdOnce(dataDir));
    this.db.pragma('busy_timeout = 0');
  }

  /** Takes the lock when no other holder has it; whether this one holds it now. */
  tryTake(): boolean {
    if (this.held) return true;
    try {
      this.db.exec('BEGIN EXCLUSIVE');
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_BUSY') return false;
      throw error;
    }
    this.held = true;
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

/**
 * The lock's file, created private when missing. An existing one is never opened here: closing
 * any handle to a file drops every POSIX lock this process holds on it, the held lock included.
 */
function createdOnce(dataDir: string): string {
  privateDataDir(dataDir);
  const file = path.join(dataDir, PROJECTOR_LOCK_FILE);
  try {
    fs.closeSync(fs.openSync(file, 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return file;
}
