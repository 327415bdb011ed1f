import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { openSqlite, type SqliteConnection } from '../../../src/adapters/sqlite/sqlite-database.js';
import { SqliteRateLimitStore } from '../../../src/adapters/sqlite/sqlite-rate-limit-store.js';
import { openEmbeddedBackend, RATE_LIMITS_FILE } from '../../../src/backends/embedded.js';
import { tempDataDir } from '../../support/test-service.js';

const T0 = Date.parse('2026-11-23T12:00:00.000Z');

/**
 * What the embedded store adds to the RateLimitStore contract: hits sent together are counted in
 * the order they were sent, and hits on one key at one instant share one UPSERT (counted here as
 * the rows SQLite changed).
 */
describe('SqliteRateLimitStore: hits sent together', () => {
  let dir: string;
  let db: SqliteConnection;
  let store: SqliteRateLimitStore;
  const rowsChanged = () => (db.prepare('SELECT total_changes() AS n').get() as { n: number }).n;

  beforeEach(() => {
    dir = tempDataDir();
    db = openSqlite(dir);
    store = new SqliteRateLimitStore(db);
  });
  afterEach(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('counts them in the order sent, a new window starting for the hit that came after the old one ended', async () => {
    const results = await Promise.all([
      store.hit('caller', 3, 60_000, T0),
      store.hit('caller', 2, 60_000, T0),
      store.hit('user', 1, 60_000, T0),
      store.hit('caller', 4, 60_000, T0 + 60_000),
      store.hit('caller', 1, 60_000, T0 + 60_000),
    ]);
    expect(results).to.deep.equal([
      { points: 3, resetAtMs: T0 + 60_000 },
      { points: 5, resetAtMs: T0 + 60_000 },
      { points: 1, resetAtMs: T0 + 60_000 },
      { points: 4, resetAtMs: T0 + 120_000 },
      { points: 5, resetAtMs: T0 + 120_000 },
    ]);
  });

  it('takes a refund sent between two charges before the second one (a claim refunding as another arrives)', async () => {
    const results = await Promise.all([
      store.hit('caller', 5, 60_000, T0),
      store.hit('caller', -4, 60_000, T0),
      store.hit('caller', 5, 60_000, T0),
      store.hit('caller', 5, 60_000, T0),
    ]);
    expect(results.map((result) => result.points)).to.deep.equal([5, 1, 6, 11]);
  });

  it('floors a refund larger than the count at 0 before a charge sent with it: the two do not share one UPSERT', async () => {
    await store.hit('caller', 2, 60_000, T0);
    const results = await Promise.all([store.hit('caller', -4, 60_000, T0 + 1), store.hit('caller', 5, 60_000, T0 + 1)]);
    // One after the other: max(2 − 4, 0) + 5. Added up first they would leave 3.
    expect(results.map((result) => result.points)).to.deep.equal([0, 5]);
    expect(await store.hit('caller', 0, 60_000, T0 + 2)).to.deep.equal({ points: 5, resetAtMs: T0 + 60_000 });
  });

  it('writes one row per key and instant, not one per hit', async () => {
    const before = rowsChanged();
    await Promise.all([
      ...Array.from({ length: 16 }, () => store.hit('caller', 1, 60_000, T0)),
      ...Array.from({ length: 16 }, (_, index) => store.hit(`user-${index}`, 1, 60_000, T0)),
    ]);
    expect(rowsChanged() - before).to.equal(17);
    expect(await store.hit('caller', 1, 60_000, T0)).to.deep.equal({ points: 17, resetAtMs: T0 + 60_000 });
  });
});

describe('embedded rate-limit counters: personal data', () => {
  it('leave no trace of a client address in the file once its counter is removed (secure_delete)', async () => {
    const dir = tempDataDir();
    const backend = openEmbeddedBackend(dir);
    await backend.rateLimits.hit('ck_demo|203.0.113.77', 1, 60_000, T0);
    await backend.rateLimits.hit('ck_demo|198.51.100.1', 1, 3_600_000, T0);
    expect(await backend.rateLimits.removeExpired(T0 + 60_000)).to.equal(1);
    await backend.close();
    const file = fs.readFileSync(path.join(dir, RATE_LIMITS_FILE));
    expect(file.includes(Buffer.from('198.51.100.1'))).to.equal(true);
    expect(file.includes(Buffer.from('203.0.113.77'))).to.equal(false);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
