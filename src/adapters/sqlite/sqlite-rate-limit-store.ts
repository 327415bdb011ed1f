import type { RateLimitCounter, RateLimitStore } from '../../ports/rate-limit-store.js';
import { guardSqlite, type SqliteConnection } from './sqlite-database.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS rate_limits (
  key       TEXT    PRIMARY KEY,
  points    INTEGER NOT NULL,
  reset_at  INTEGER NOT NULL
) WITHOUT ROWID;
`;

/**
 * Counters in an SQLite file under DATA_DIR, so services sharing the directory share the
 * limits. One UPSERT … RETURNING per hit: atomic under SQLite's write lock, across connections
 * and processes. src/backends/embedded.ts opens it (its own file, `synchronous = NORMAL`).
 */
export class SqliteRateLimitStore implements RateLimitStore {
  private readonly upsert;
  private readonly deleteExpired;

  constructor(db: SqliteConnection) {
    db.exec(SCHEMA);
    this.upsert = db.prepare<[{ key: string; points: number; now: number; window: number }], RateLimitRow>(`
      INSERT INTO rate_limits (key, points, reset_at) VALUES (@key, @points, @now + @window)
      ON CONFLICT (key) DO UPDATE SET
        points   = CASE WHEN reset_at <= @now THEN excluded.points ELSE points + excluded.points END,
        reset_at = CASE WHEN reset_at <= @now THEN excluded.reset_at ELSE reset_at END
      RETURNING points, reset_at`);
    this.deleteExpired = db.prepare<[number]>('DELETE FROM rate_limits WHERE reset_at <= ?');
  }

  async hit(key: string, points: number, windowMs: number, nowMs: number): Promise<RateLimitCounter> {
    const row = guardSqlite(() => this.upsert.get({ key, points, now: nowMs, window: windowMs }))!;
    return { points: row.points, resetAtMs: row.reset_at };
  }

  async removeExpired(nowMs: number): Promise<number> {
    return guardSqlite(() => this.deleteExpired.run(nowMs)).changes;
  }

  async close(): Promise<void> {}
}

interface RateLimitRow {
  points: number;
  reset_at: number;
}
