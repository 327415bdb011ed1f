import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { privateDataDir } from '../../private-files.js';
import { SqliteProjectorLock } from './projector-lock.js';
import { DATABASE_FILE } from './sqlite-database.js';

/**
 * The embedded files a backup may hold, in the order the README says to back them up: the
 * event log is required, the others are restored when the backup has them (without one, the
 * file in DATA_DIR stays as it is).
 */
export const RESTORED_FILES = ['webhooks.db', DATABASE_FILE, 'data-keys.db', 'rate-limits.db'] as const;

/** What a database file in DATA_DIR leaves beside it: its write-ahead log and its index, a rollback journal. */
const COMPANIONS = ['-wal', '-shm', '-journal'];

export class RestoreRefused extends Error {
  constructor(
    message: string,
    /** `missing`: no event log in the backup; `running`: a service holds DATA_DIR; `damaged`: a backup file fails its check. */
    readonly reason: 'missing' | 'running' | 'damaged',
  ) {
    super(message);
    this.name = 'RestoreRefused';
  }
}

/** Where the copies are: `from`, and `keys` for `data-keys.db` when it is kept apart (README, Personal data). */
export interface BackupDirs {
  from: string;
  keys?: string;
}

/**
 * Puts the backup copies found in `from` (and `keys`) in place in `dataDir`, each with the companions of the
 * file it replaces removed. A `-wal` left beside a database by a crash holds pages of that
 * database: SQLite replays it into whatever file has the name at the next start, so a backup
 * copied over the database and started with that WAL is a damaged store (a read may even answer
 * another user's document). Refused, changing nothing, while a process has DATA_DIR open (its
 * projector lock held, or a connection on one of the files), and when a copy fails SQLite's
 * integrity check. Every copy is written beside its place first; only then are the files swapped,
 * each renamed into its place, so a copy that fails (a full disk) changes nothing, and a restore
 * cut short leaves each file whole, old or new. The names restored, in order.
 */
export function restoreBackup(dirs: BackupDirs, dataDir: string): string[] {
  const copyOf = (name: string) => path.join(name === 'data-keys.db' ? (dirs.keys ?? dirs.from) : dirs.from, name);
  const found = RESTORED_FILES.filter((name) => fs.existsSync(copyOf(name)));
  if (!found.includes(DATABASE_FILE)) throw new RestoreRefused(`${copyOf(DATABASE_FILE)} is missing: a backup holds at least the event log`, 'missing');
  if (dirs.keys !== undefined && !found.includes('data-keys.db')) throw new RestoreRefused(`${copyOf('data-keys.db')} is missing`, 'missing');
  for (const name of found) checkIntegrity(copyOf(name));
  privateDataDir(dataDir);
  const lock = new SqliteProjectorLock(dataDir);
  try {
    const open = found.filter((name) => inUse(path.join(dataDir, name)));
    if (!lock.tryTake() || open.length > 0) {
      throw new RestoreRefused(
        `a service is running on ${dataDir}${open.length > 0 ? ` (${open.join(', ')} open)` : ''}: stop every process on this DATA_DIR, then restore`,
        'running',
      );
    }
    const incoming = found.map((name) => ({ copy: copyOf(name), target: path.join(dataDir, name) }));
    try {
      for (const { copy, target } of incoming) writeBeside(copy, target);
    } catch (error) {
      for (const { target } of incoming) fs.rmSync(`${target}${INCOMING}`, { force: true });
      throw error;
    }
    for (const { target } of incoming) swapIn(target);
    syncFile(dataDir);
  } finally {
    lock.close();
  }
  return found;
}

/**
 * Whether another process has the database open: a connection in WAL mode, even idle, keeps any
 * other from taking the file exclusively. A file that cannot be opened (damaged, which may be why
 * it is restored) is in nobody's use that SQLite can tell.
 */
function inUse(file: string): boolean {
  if (!fs.existsSync(file)) return false;
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { fileMustExist: true });
    db.pragma('busy_timeout = 0');
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('ROLLBACK');
    return false;
  } catch (error) {
    return (error as { code?: string }).code === 'SQLITE_BUSY';
  } finally {
    db?.close();
  }
}

function checkIntegrity(file: string): void {
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new RestoreRefused(`${file} cannot be opened as a database: ${(error as Error).message}`, 'damaged');
  }
  try {
    const result = db.pragma('integrity_check', { simple: true });
    if (result !== 'ok') throw new RestoreRefused(`${file} fails SQLite's integrity check (${String(result)}): take another backup`, 'damaged');
  } catch (error) {
    if (error instanceof RestoreRefused) throw error;
    throw new RestoreRefused(`${file} cannot be read as a database: ${(error as Error).message}`, 'damaged');
  } finally {
    db.close();
  }
}

/** The suffix of a copy written beside the file it is to replace. */
const INCOMING = '.restoring';

function writeBeside(copy: string, target: string): void {
  const incoming = `${target}${INCOMING}`;
  fs.rmSync(incoming, { force: true });
  fs.copyFileSync(copy, incoming);
  fs.chmodSync(incoming, 0o600);
  syncFile(incoming);
}

function swapIn(target: string): void {
  for (const suffix of COMPANIONS) fs.rmSync(`${target}${suffix}`, { force: true });
  fs.renameSync(`${target}${INCOMING}`, target);
}

/** Makes a file's content (or a directory's entries) durable. */
function syncFile(file: string): void {
  const fd = fs.openSync(file, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
