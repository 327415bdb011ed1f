import fs from 'node:fs';
import { expect } from 'chai';
import type { SqliteConnection } from '../../../src/adapters/sqlite/sqlite-database.js';
import { SqliteKeyStore } from '../../../src/adapters/sqlite/sqlite-key-store.js';
import { StoreUnavailableError } from '../../../src/ports/event-store.js';
import { openKeyConnection } from '../../../src/backends/embedded.js';
import { heldSync } from '../../support/held-sync.js';
import { tempDataDir } from '../../support/test-service.js';

/**
 * What the embedded key store adds to the KeyStore contract: the keys asked for in one turn of
 * the event loop are made in one transaction, handed out only once the file's WAL is synced (off
 * the event loop, one sync for many new users), and they are the keys the file keeps, for this
 * store and for another process on the same file.
 */
describe('SqliteKeyStore: new keys made together', () => {
  let dir: string;
  const open: SqliteConnection[] = [];
  const connect = () => {
    const db = openKeyConnection(dir);
    open.push(db);
    return db;
  };

  beforeEach(() => {
    dir = tempDataDir();
  });
  afterEach(() => {
    for (const db of open.splice(0)) db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Counts the transactions run on `db`. */
  function countTransactions(db: SqliteConnection): () => number {
    const transaction = db.transaction.bind(db);
    let count = 0;
    db.transaction = ((work: Parameters<typeof transaction>[0]) => {
      count += 1;
      return transaction(work);
    }) as typeof db.transaction;
    return () => count;
  }

  it('makes the keys of 30 subjects asked for at once in one transaction, each its own and each kept', async () => {
    const db = connect();
    const transactions = countTransactions(db);
    const store = new SqliteKeyStore(db);
    const subjects = Array.from({ length: 30 }, (_, index) => `user:u-${index}`);
    const keys = await Promise.all(subjects.map((subject) => store.keyFor(subject)));
    expect(transactions()).to.equal(1);
    expect(keys.map((key) => key.subject)).to.deep.equal(subjects);
    expect(new Set(keys.map((key) => key.id)).size).to.equal(30);
    expect(new Set(keys.map((key) => key.key.toString('hex'))).size).to.equal(30);
    // What the file keeps, read by another connection: the same keys.
    const reopened = new SqliteKeyStore(connect());
    for (const key of keys) expect(await reopened.existingKey(key.subject)).to.deep.equal(key);
    // Known subjects are answered without a write.
    await Promise.all(subjects.map((subject) => store.keyFor(subject)));
    expect(transactions()).to.equal(1);
  });

  it('answers one key to a subject asked for twice in one group and by a second store on the same file', async () => {
    const first = new SqliteKeyStore(connect());
    const second = new SqliteKeyStore(connect());
    const keys = await Promise.all([first.keyFor('user:shared'), first.keyFor('user:shared'), second.keyFor('user:shared'), first.keyFor('user:other')]);
    expect(new Set(keys.slice(0, 3).map((key) => key.id)).size).to.equal(1);
    expect(keys[3]!.id).to.not.equal(keys[0]!.id);
  });

  it('makes a key asked for before an erasure first, so the erasure destroys it', async () => {
    const store = new SqliteKeyStore(connect());
    const asked = store.keyFor('user:leaving');
    expect(await store.destroy('user:leaving')).to.equal(1);
    const key = await asked;
    expect(await store.existingKey('user:leaving')).to.equal(null);
    expect((await store.keysById([key.id])).size).to.equal(0);
  });

  it('makes the keys still asked for when it closes, before the connection goes', async () => {
    const db = connect();
    const store = new SqliteKeyStore(db);
    const asked = store.keyFor('user:late');
    await store.close();
    open.splice(open.indexOf(db), 1);
    db.close();
    const key = await asked;
    const reopened = new SqliteKeyStore(connect());
    expect(await reopened.existingKey('user:late')).to.deep.equal(key);
  });

  it('fails every request of a group whose transaction fails, and makes keys again afterwards', async () => {
    const db = connect();
    const store = new SqliteKeyStore(db);
    const transaction = db.transaction.bind(db);
    db.transaction = (() => {
      throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' });
    }) as unknown as typeof db.transaction;
    const failed = await Promise.allSettled([store.keyFor('user:a'), store.keyFor('user:b')]);
    expect(failed.map((outcome) => outcome.status)).to.deep.equal(['rejected', 'rejected']);
    db.transaction = transaction;
    expect(await store.existingKey('user:a')).to.equal(null);
    expect((await store.keyFor('user:a')).subject).to.equal('user:a');
  });

  const turn = () => new Promise((resolve) => setImmediate(resolve));

  it('hands out a new key only once the sync after its commit is done; a second caller for it waits too', async () => {
    const sync = heldSync();
    const store = new SqliteKeyStore(connect(), sync.syncer);
    let first: unknown = null;
    const asking = store.keyFor('user:ann').then((key) => (first = key));
    await turn();
    await turn();
    expect(sync.calls, 'the group committed and its sync started').to.have.length(1);
    expect(first, 'no key before the sync').to.equal(null);
    let second: unknown = null;
    const again = store.keyFor('user:ann').then((key) => (second = key));
    await turn();
    expect(second, 'the committed key is not handed out before its sync either').to.equal(null);
    sync.calls[0]!.resolve();
    await asking;
    await turn();
    sync.calls[1]?.resolve();
    await again;
    expect(second).to.deep.equal(first);
  });

  it('a failed sync fails the keys of its group and every new key after it (store unavailable)', async () => {
    const sync = heldSync();
    const store = new SqliteKeyStore(connect(), sync.syncer);
    const asking = store.keyFor('user:ann').catch((error: unknown) => error);
    await turn();
    await turn();
    sync.calls[0]!.reject(new Error('EIO'));
    expect(await asking).to.be.instanceOf(StoreUnavailableError);
    expect(await store.keyFor('user:bob').catch((error: unknown) => error)).to.be.instanceOf(StoreUnavailableError);
  });
});
