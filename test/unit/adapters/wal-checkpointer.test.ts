import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { openSqlite, type SqliteConnection } from '../../../src/adapters/sqlite/sqlite-database.js';
import { checkpointInBackground, checkpointThread } from '../../../src/adapters/sqlite/wal-checkpointer.js';
import { DeferredWalPurges, truncateWals } from '../../../src/adapters/sqlite/wal-sync.js';
import { openEmbeddedBackend } from '../../../src/backends/embedded.js';
import { StoreUnavailableError } from '../../../src/ports/event-store.js';
import { tempDataDir } from '../../support/test-service.js';

/** Polls `check` until it holds (bounded): the thread works on its own schedule. */
async function eventually(check: () => boolean, what: string): Promise<void> {
  for (let waited = 0; waited < 10_000; waited += 20) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`timed out waiting until ${what}`);
}

/** Writes about `pages` 4 KiB pages into `db` (rows of 4,000 bytes). */
function fill(db: SqliteConnection, pages: number): void {
  db.exec('CREATE TABLE IF NOT EXISTS filler (id INTEGER PRIMARY KEY, blob TEXT)');
  const insert = db.prepare('INSERT INTO filler (blob) VALUES (?)');
  db.transaction(() => {
    for (let page = 0; page < pages; page += 1) insert.run('x'.repeat(4_000));
  })();
}

/**
 * The embedded databases' WALs are checkpointed on a background thread, so no request's commit
 * copies pages into the database and syncs it while the event loop waits
 * (src/adapters/sqlite/wal-checkpointer.ts).
 */
describe('WAL checkpoints on a background thread', () => {
  const dirs: string[] = [];
  const open = () => {
    const dir = tempDataDir();
    dirs.push(dir);
    return { db: openSqlite(dir), file: path.join(dir, 'referrals.db') };
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a registered connection stops checkpointing by itself, and the thread copies its WAL into the database', async () => {
    const { db, file } = open();
    const stop = checkpointInBackground(db);
    expect(db.pragma('wal_autocheckpoint', { simple: true })).to.equal(0);
    const before = fs.statSync(file).size;
    fill(db, 300);
    expect(fs.statSync(`${file}-wal`).size, 'the commit left its pages in the WAL').to.be.greaterThan(300 * 4_096);
    expect(fs.statSync(file).size, 'and did not checkpoint them itself').to.equal(before);
    await eventually(() => fs.statSync(file).size > before + 300 * 4_000, 'the database holds the pages');
    await stop();
    db.close();
  });

  it('under writes that never pause, the WAL still starts over: its file stays bounded', async () => {
    const { db, file } = open();
    // 256 frames of 4 KiB: the WAL starts over (and is cut back to 1 MiB) past 1 MiB.
    const stop = checkpointInBackground(db, { restartFrames: 256 });
    try {
      db.exec('CREATE TABLE IF NOT EXISTS filler (id INTEGER PRIMARY KEY, blob TEXT)');
      const insert = db.prepare('INSERT INTO filler (blob) VALUES (?)');
      const write = db.transaction(() => {
        for (let row = 0; row < 10; row += 1) insert.run('x'.repeat(4_000));
      });
      let largest = 0;
      // About 60 MiB in transactions of 40 KB, one a millisecond for about 2 s: faster than
      // the service writes under load, and never a pause long enough for a PASSIVE checkpoint.
      for (let transaction = 0; transaction < 1_500; transaction += 1) {
        write();
        largest = Math.max(largest, fs.statSync(`${file}-wal`).size);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      expect(fs.statSync(file).size, 'the database received pages all along').to.be.greaterThan(15 * 1_024 * 1_024);
      expect(largest, 'the largest the WAL file grew').to.be.lessThan(16 * 1_024 * 1_024);
    } finally {
      await stop();
      db.close();
    }
  });

  it('releasing hands the checkpoints back to the connection; the thread stops with the last release', async () => {
    const first = open();
    const second = open();
    const stopFirst = checkpointInBackground(first.db);
    const stopSecond = checkpointInBackground(second.db);
    expect(checkpointThread()).to.not.equal(null);
    await stopFirst();
    expect(first.db.pragma('wal_autocheckpoint', { simple: true })).to.equal(1000);
    expect(checkpointThread(), 'the other connection still uses it').to.not.equal(null);
    await stopSecond();
    expect(checkpointThread()).to.equal(null);
    // The last connection's close checkpoints and removes the WAL, as without the thread.
    first.db.close();
    second.db.close();
    expect(fs.existsSync(`${first.file}-wal`)).to.equal(false);
  });

  it('a thread that dies is replaced, and the new one checkpoints every registered file', async () => {
    const { db, file } = open();
    const stop = checkpointInBackground(db);
    const first = checkpointThread()!;
    await first.terminate();
    const second = checkpointThread();
    expect(second).to.not.equal(null);
    expect(second).to.not.equal(first);
    const before = fs.statSync(file).size;
    fill(db, 100);
    await eventually(() => fs.statSync(file).size > before + 100 * 4_000, 'the new thread checkpointed the WAL');
    await stop();
    expect(checkpointThread()).to.equal(null);
    db.close();
  });
});

/**
 * After an erasure the WAL is emptied (no older page image may stay in it). SQLite answers
 * `busy` without throwing when the background thread's checkpoint is running at that moment.
 */
describe('truncateWals: emptying WALs after an erasure', () => {
  /** A connection whose TRUNCATE checkpoint answers busy `busyTimes` times, then succeeds. */
  function connection(busyTimes: number) {
    const calls: string[] = [];
    const db = {
      name: 'fake.db',
      pragma: (source: string) => {
        if (source.startsWith('busy_timeout')) return 5000;
        calls.push(source);
        return [{ busy: calls.length <= busyTimes ? 1 : 0, log: 0, checkpointed: 0 }];
      },
    } as unknown as SqliteConnection;
    return { db, calls };
  }

  it('tries again while another checkpoint holds the WAL, until it is emptied', async () => {
    const { db, calls } = connection(3);
    expect(await truncateWals([db])).to.deep.equal([]);
    expect(calls).to.deep.equal(Array(4).fill('wal_checkpoint(TRUNCATE)'));
  });

  it('gives up after its 2 s on a WAL that stays busy, and names it; the others share the same 2 s', async () => {
    const stuck = connection(Number.POSITIVE_INFINITY);
    const free = connection(1);
    expect(await truncateWals([stuck.db, free.db])).to.deep.equal([stuck.db]);
    expect(free.calls).to.have.length(2);
    expect(stuck.calls).to.have.length(100);
  });

  it('does not wait on a reader that holds the WAL (an online backup): it fails in its 2 s, the event loop running; deferred, the WAL is emptied once the reader lets go', async () => {
    const dir = tempDataDir();
    const db = openSqlite(dir);
    fill(db, 20);
    const reader = new Database(path.join(dir, 'referrals.db'));
    reader.exec('BEGIN');
    reader.prepare('SELECT COUNT(*) FROM sqlite_master').get();
    let turns = 0;
    const ticking = setInterval(() => (turns += 1), 5);
    const busy = await truncateWals([db]);
    clearInterval(ticking);
    expect(busy).to.deep.equal([db]);
    // Each attempt answered at once: the event loop turned between them (a 5 s busy wait each would have taken 500 s).
    expect(turns).to.be.greaterThan(20);
    expect(db.pragma('busy_timeout', { simple: true })).to.equal(5000);

    const purges = new DeferredWalPurges(10);
    purges.add(db);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(purges.pending).to.equal(1);
    reader.exec('COMMIT');
    await eventually(() => purges.pending === 0, 'the deferred purge emptied the WAL');
    expect(fs.statSync(path.join(dir, 'referrals.db-wal')).size).to.equal(0);
    purges.stop();
    reader.close();
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('empties a real WAL', async () => {
    const dir = tempDataDir();
    const db = openSqlite(dir);
    fill(db, 20);
    expect(fs.statSync(path.join(dir, 'referrals.db-wal')).size).to.be.greaterThan(0);
    expect(await truncateWals([db])).to.deep.equal([]);
    expect(fs.statSync(path.join(dir, 'referrals.db-wal')).size).to.equal(0);
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('embedded backend: purging overwritten pages after an erasure', () => {
  it('empties the WALs when the service opens it: a purge deferred by a process that stopped before it ran is not lost', async () => {
    const dir = tempDataDir();
    const first = openEmbeddedBackend(dir);
    const append = (backend: ReturnType<typeof openEmbeddedBackend>, stream: string) =>
      backend.eventStore.append(
        stream,
        [
          {
            id: randomUUID(),
            type: 'WebhookEndpointDeleted',
            data: { id: 'x', deleted_at: new Date().toISOString() },
            metadata: { correlation_id: 't', causation_id: 't', actor: 'test', schema_version: 1 },
          },
        ],
        'any',
      );
    await append(first, 'probe-1');
    const reader = new Database(path.join(dir, 'referrals.db'));
    reader.exec('BEGIN');
    reader.prepare('SELECT COUNT(*) FROM sqlite_master').get();
    expect(await first.purgeOverwritten().catch((failure: unknown) => failure)).to.be.instanceOf(StoreUnavailableError);
    // The process stops with the purge still deferred; the reader lets go later, but stays open (no last-close checkpoint).
    await first.close();
    reader.exec('COMMIT');
    expect(fs.statSync(path.join(dir, 'referrals.db-wal')).size).to.be.greaterThan(0);
    // A script opening the files beside a running service leaves them; the service's start empties them.
    const script = openEmbeddedBackend(dir);
    expect(fs.statSync(path.join(dir, 'referrals.db-wal')).size).to.be.greaterThan(0);
    await script.close();
    const second = openEmbeddedBackend(dir, undefined, { purgeWalsOnOpen: true });
    expect(fs.statSync(path.join(dir, 'referrals.db-wal')).size).to.equal(0);
    await second.close();
    reader.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("answers within its 2 s while a reader holds the events' WAL, and empties it once the reader lets go", async () => {
    const dir = tempDataDir();
    const backend = openEmbeddedBackend(dir);
    await backend.eventStore.append(
      'probe-1',
      [
        {
          id: randomUUID(),
          type: 'WebhookEndpointDeleted',
          data: { id: 'x', deleted_at: new Date().toISOString() },
          metadata: { correlation_id: 't', causation_id: 't', actor: 'test', schema_version: 1 },
        },
      ],
      'any',
    );
    const reader = new Database(path.join(dir, 'referrals.db'));
    reader.exec('BEGIN');
    reader.prepare('SELECT COUNT(*) FROM sqlite_master').get();
    const error = await backend.purgeOverwritten().catch((failure: unknown) => failure);
    expect(error).to.be.instanceOf(StoreUnavailableError);
    expect((error as Error).message).to.contain('referrals.db');
    expect(fs.statSync(path.join(dir, 'referrals.db-wal')).size).to.be.greaterThan(0);
    reader.exec('COMMIT');
    reader.close();
    await eventually(() => fs.statSync(path.join(dir, 'referrals.db-wal')).size === 0, 'the deferred purge emptied the WAL');
    await backend.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
