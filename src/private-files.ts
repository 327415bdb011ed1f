import fs from 'node:fs';
import path from 'node:path';

/**
 * DATA_DIR holds personal data, the keys that erase it, webhook signing secrets and development
 * API keys: only the service's own user may read it. A directory or file this creates is private
 * (0700, 0600) whatever the umask; SQLite gives a database's `-wal` and `-shm` files its mode.
 * Existing ones keep the mode they have (an operator's choice).
 */
export function privateDataDir(dataDir: string): void {
  // One directory at a time, not `recursive: true`: under /proc, Node's recursive mkdir spins
  // forever instead of failing; each step here fails at once (EPERM, ENOENT, EEXIST for a file).
  const missing: string[] = [];
  for (let dir = path.resolve(dataDir); !fs.existsSync(dir); dir = path.dirname(dir)) missing.unshift(dir);
  for (const dir of missing) {
    try {
      fs.mkdirSync(dir, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !fs.statSync(dir).isDirectory()) throw error;
    }
  }
  if (!fs.statSync(dataDir).isDirectory()) {
    throw Object.assign(new Error(`ENOTDIR: not a directory, '${dataDir}'`), { code: 'ENOTDIR', path: dataDir });
  }
}

/**
 * `file` inside `dataDir`, created empty and private when missing; its absolute path, which is
 * what SQLite is given (better-sqlite3 trims a file name: ` /referrals.db` would be another file).
 */
export function privateFile(dataDir: string, file: string): string {
  privateDataDir(dataDir);
  const filePath = path.resolve(dataDir, file);
  fs.closeSync(fs.openSync(filePath, 'a', 0o600));
  return filePath;
}

/** Whether the disk holding `dataDir` has less than a megabyte left (SQLite then cannot write); false when that cannot be looked up. */
export function diskIsFull(dataDir: string): boolean {
  try {
    const { bavail, bsize } = fs.statfsSync(dataDir);
    return bavail * bsize < 1024 * 1024;
  } catch {
    return false;
  }
}
