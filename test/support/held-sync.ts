import type { LogSyncer } from '../../src/adapters/sqlite/wal-sync.js';

/**
 * A WAL syncer the test finishes by hand (src/adapters/sqlite/wal-sync.ts): `calls` holds the
 * syncs started so far; `finish(i)` / `fail(i, error)` ends the i-th.
 */
export function heldSync() {
  const calls: { resolve(): void; reject(error: Error): void }[] = [];
  const syncer: LogSyncer = { sync: () => new Promise((resolve, reject) => calls.push({ resolve, reject })), close: () => {} };
  return { syncer, calls, finish: (index: number) => calls[index]!.resolve(), fail: (index: number, error: Error) => calls[index]!.reject(error) };
}
