import { CLOCK_SLACK_MS } from '../../domain/clock-slack.js';
import type { RateLimitCounter, RateLimitStore } from '../../ports/rate-limit-store.js';
import { guardSqlite, type SqliteConnection } from './sqlite-database.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS rate_limits (
  key       TEXT    PRIMARY KEY,
  points    INTEGER NOT NULL,
  reset_at  INTEGER NOT NULL
) WITHOUT ROWID;
`;

interface PendingHit {
  params: { key: string; points: number; now: number; window: number };
  resolve(counter: RateLimitCounter): void;
  reject(error: unknown): void;
}

/**
 * Counters in an SQLite file under DATA_DIR, so services sharing the directory share the
 * limits. One UPSERT … RETURNING per key charged: atomic under SQLite's write lock, across
 * connections and processes. src/backends/embedded.ts opens it (its own file, `synchronous = NORMAL`).
 *
 * Hits queue for one turn of the event loop and run in one transaction (a request charges two
 * or three budgets at once, and concurrent requests add theirs): a commit costs far more than
 * an UPSERT, so this keeps the limiter's cost per request small. Each UPSERT still sees the
 * ones before it, so no point is lost and no budget is exceeded; hits on one key at one instant
 * share an UPSERT.
 */
export class SqliteRateLimitStore implements RateLimitStore {
  private readonly upsert;
  private readonly deleteExpired;
  private readonly pending: PendingHit[] = [];

  constructor(private readonly db: SqliteConnection) {
    db.exec(SCHEMA);
    this.upsert = db.prepare<[{ key: string; points: number; now: number; window: number }], RateLimitRow>(`
      INSERT INTO rate_limits (key, points, reset_at) VALUES (@key, MAX(@points, 0), @now + @window)
      ON CONFLICT (key) DO UPDATE SET
        points   = CASE WHEN reset_at <= @now OR reset_at > @now + @window + ${CLOCK_SLACK_MS} THEN excluded.points ELSE MAX(points + @points, 0) END,
        reset_at = CASE WHEN reset_at <= @now OR reset_at > @now + @window + ${CLOCK_SLACK_MS} THEN excluded.reset_at ELSE reset_at END
      RETURNING points, reset_at`);
    this.deleteExpired = db.prepare<[number]>('DELETE FROM rate_limits WHERE reset_at <= ?');
  }

  hit(key: string, points: number, windowMs: number, nowMs: number): Promise<RateLimitCounter> {
    return new Promise((resolve, reject) => {
      this.pending.push({ params: { key, points, now: nowMs, window: windowMs }, resolve, reject });
      if (this.pending.length === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const group = this.pending.splice(0);
    // Consecutive hits on one key at the same instant add up in one UPSERT (a caller's key is
    // charged by every request it sends); each gets the count as it stood after its own points,
    // as one UPSERT per hit would have left it. A refund after a charge (or a charge after a
    // refund) starts the key's next UPSERT, as the floor at 0 applies to refunds alone: the
    // UPSERTs run in the order their first hit came, so a charge never passes an earlier refund.
    const latest = new Map<string, PendingHit[]>();
    const batches: PendingHit[][] = [];
    for (const hit of group) {
      const { key, now, window, points } = hit.params;
      const id = `${now}|${window}|${key}`;
      const hits = latest.get(id);
      if (hits && hits[0]!.params.points < 0 === points < 0) hits.push(hit);
      else {
        latest.set(id, [hit]);
        batches.push(latest.get(id)!);
      }
    }
    let rows: RateLimitRow[];
    try {
      rows = guardSqlite(() => this.db.transaction(() => batches.map((hits) => this.upsert.get({ ...hits[0]!.params, points: pointsOf(hits) })!)).immediate());
    } catch (error) {
      for (const hit of group) hit.reject(error);
      return;
    }
    for (const [index, row] of rows.entries()) {
      const hits = batches[index]!;
      let points = row.points - pointsOf(hits);
      for (const hit of hits) {
        points += hit.params.points;
        hit.resolve({ points: Math.max(points, 0), resetAtMs: row.reset_at });
      }
    }
  }

  async removeExpired(nowMs: number): Promise<number> {
    return guardSqlite(() => this.deleteExpired.run(nowMs)).changes;
  }

  async close(): Promise<void> {}
}

function pointsOf(hits: readonly PendingHit[]): number {
  let points = 0;
  for (const hit of hits) points += hit.params.points;
  return points;
}

interface RateLimitRow {
  points: number;
  reset_at: number;
}
