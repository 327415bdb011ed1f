import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { openSqlite } from '../../../src/adapters/sqlite/sqlite-database.js';
import { SqliteEventStore } from '../../../src/adapters/sqlite/sqlite-event-store.js';
import { type NewEvent, StoreUnavailableError } from '../../../src/ports/event-store.js';
import { recordedSqlite } from '../../support/recorded-sqlite.js';
import { heldSync } from '../../support/held-sync.js';
import { tempDataDir } from '../../support/test-service.js';

const NORMAL = 1;

const event = (): NewEvent => ({
  id: randomUUID(),
  type: 'Something',
  data: {},
  metadata: { correlation_id: 'c', causation_id: 'c', actor: 'test', schema_version: 1 },
});

/** Whether `promise` has settled, after the event loop has had a turn to settle it. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

/**
 * The embedded log commits without waiting for the disk and syncs the WAL off the event loop; an
 * append is acknowledged, and shown to followers, only once a sync that started after its commit
 * is done (src/adapters/sqlite/sqlite-event-store.ts).
 */
describe('SQLite event store: an append is durable before it is acknowledged or followed', () => {
  const sqlite = recordedSqlite();

  it('the connection commits with synchronous = NORMAL: the disk is waited for by the sync, not by the commit', () => {
    expect(sqlite.db.pragma('synchronous', { simple: true })).to.equal(NORMAL);
  });

  it('answers an append once the sync after its commit is done, not before', async () => {
    const sync = heldSync();
    const store = new SqliteEventStore(sqlite.db, { syncer: sync.syncer });
    const appending = store.append('s', [event()], 'no_stream');
    expect(await settled(appending), 'answered before the sync').to.equal(false);
    expect(sync.calls).to.have.length(1);
    expect(await store.headPosition(), 'committed meanwhile').to.equal(1n);
    sync.finish(0);
    expect(await appending).to.deep.equal({ nextExpectedRevision: 0, position: 1n });
  });

  it('commits made while a sync runs share the next one', async () => {
    const sync = heldSync();
    const store = new SqliteEventStore(sqlite.db, { syncer: sync.syncer });
    const first = store.append('first', [event()], 'no_stream');
    await settled(first);
    const later = Array.from({ length: 20 }, (_, index) => store.append(`later-${index}`, [event()], 'no_stream'));
    await settled(Promise.all(later));
    expect(sync.calls, 'one sync in flight at a time').to.have.length(1);
    sync.finish(0);
    await first;
    expect(await settled(Promise.all(later)), 'the first sync started before they committed').to.equal(false);
    expect(sync.calls).to.have.length(2);
    sync.finish(1);
    expect((await Promise.all(later)).map((result) => result.position)).to.deep.equal(later.map((_, index) => BigInt(index + 2)));
  });

  it('followers see an event only once it is synced, and are told then', async () => {
    const sync = heldSync();
    const store = new SqliteEventStore(sqlite.db, { syncer: sync.syncer });
    let told = 0;
    const unwatch = store.watch(() => (told += 1));
    const appending = store.append('s', [event()], 'no_stream');
    await settled(appending);
    expect(await store.readPage({ after: null, limit: 10, types: ['Something'] })).to.deep.equal({ events: [], through: null, more: false });
    expect(told).to.equal(0);
    sync.finish(0);
    await appending;
    expect(told).to.equal(1);
    const page = await store.readPage({ after: null, limit: 10, types: ['Something'] });
    expect(page.events.map((recorded) => recorded.position)).to.deep.equal([1n]);
    unwatch();
  });

  it('a failed sync fails its appends (store unavailable) and every append after it: what the disk holds is unknown', async () => {
    const sync = heldSync();
    const store = new SqliteEventStore(sqlite.db, { syncer: sync.syncer });
    const appending = store.append('s', [event()], 'no_stream');
    await settled(appending);
    sync.fail(0, Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    const failure = await appending.catch((error: unknown) => error);
    expect(failure).to.be.instanceOf(StoreUnavailableError);
    expect((failure as Error).message).to.match(/sync/);
    const next = await store.append('t', [event()], 'no_stream').catch((error: unknown) => error);
    expect(next).to.be.instanceOf(StoreUnavailableError);
    expect(await store.headPosition(), 'nothing written after the failure').to.equal(1n);
  });

  it('events another process wrote (or a run that crashed before its sync) are followed once a sync of this process has made them durable', async () => {
    await new SqliteEventStore(sqlite.db).append('before', [event(), event()], 'no_stream');
    const sync = heldSync();
    const reopened = new SqliteEventStore(sqlite.db, { syncer: sync.syncer });
    let told = 0;
    const unwatch = reopened.watch(() => (told += 1));
    expect((await reopened.readPage({ after: null, limit: 10, types: ['Something'] })).events).to.have.length(0);
    expect(sync.calls, 'the page started a sync for them').to.have.length(1);
    // Another follower's page meanwhile does not start a second one.
    await reopened.readPage({ after: null, limit: 10, types: ['Something'] });
    expect(sync.calls).to.have.length(1);
    sync.finish(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(told).to.equal(1);
    expect((await reopened.readPage({ after: null, limit: 10, types: ['Something'] })).events).to.have.length(2);
    unwatch();
  });

  it('a watcher is told of events another process appended to the file, without reading or appending itself, and then follows them', async () => {
    const dir = tempDataDir();
    const follower = openSqlite(dir);
    const writer = openSqlite(dir); // another process on the same DATA_DIR (a split API instance)
    const watched = new SqliteEventStore(follower);
    const appending = new SqliteEventStore(writer);
    try {
      let told = 0;
      const unwatch = watched.watch(() => (told += 1));
      await appending.append('from-elsewhere', [event(), event()], 'no_stream');
      // No append or read here: the hint comes from the file (a bounded wait, not a timing claim).
      for (let waited = 0; told === 0 && waited < 5_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(told, 'told of the other process’s commit').to.be.greaterThan(0);
      // The page syncs them first, then shows them.
      for (let attempt = 0; attempt < 500; attempt += 1) {
        if ((await watched.readPage({ after: null, limit: 10, types: ['Something'] })).events.length === 2) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect((await watched.readPage({ after: null, limit: 10, types: ['Something'] })).events).to.have.length(2);
      unwatch();
    } finally {
      await watched.close();
      await appending.close();
      follower.close();
      writer.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the real sync (fdatasync of the WAL file) acknowledges appends, and they are in the file for the next process', async () => {
    const dir = tempDataDir();
    const db = openSqlite(dir);
    const store = new SqliteEventStore(db);
    const results = await Promise.all(Array.from({ length: 30 }, (_, index) => store.append(`s-${index}`, [event()], 'no_stream')));
    expect(results.at(-1)!.position).to.equal(30n);
    await store.close();
    db.close();
    const again = openSqlite(dir);
    expect(await new SqliteEventStore(again).headPosition()).to.equal(30n);
    again.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  for (const file of ['referrals.db', 'referrals.db-wal']) {
    it(`${file} alone replaced while the store has it open (a copy moved over it): the next append, and every later one, is refused, not acknowledged into a file no path names`, async () => {
      const dir = tempDataDir();
      const db = openSqlite(dir);
      const store = new SqliteEventStore(db);
      try {
        expect((await store.append('before', [event()], 'no_stream')).position).to.equal(1n);
        const target = path.join(dir, file);
        fs.copyFileSync(target, `${target}.bak`);
        fs.renameSync(`${target}.bak`, target);
        const after = await store.append('after', [event()], 'no_stream').catch((error: unknown) => error);
        expect(after, 'the append after the replacement').to.be.instanceOf(StoreUnavailableError);
        expect((after as Error).message).to.contain('removed or replaced');
        const later = await store.append('later', [event()], 'no_stream').catch((error: unknown) => error);
        expect(later, 'a later append').to.be.instanceOf(StoreUnavailableError);
      } finally {
        await store.close();
        db.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
