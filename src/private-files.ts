import fs from 'node:fs';
import path from 'node:path';

/**
 * DATA_DIR holds personal data, the keys that erase it, webhook signing secrets and development
 * API keys: only the service's own user may read it. A directory or file this creates is private
 * (0700, 0600) whatever the umask; SQLite gives a database's `-wal` and `-shm` files its mode.
 * Existing ones keep the mode they have (an operator's choice).
 */
export function privateDataDir(dataDir: string): void {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
}

/** `file` inside `dataDir`, created empty and private when missing; its path. */
export function privateFile(dataDir: string, file: string): string {
  privateDataDir(dataDir);
  const filePath = path.join(dataDir, file);
  fs.closeSync(fs.openSync(filePath, 'a', 0o600));
  return filePath;
}
