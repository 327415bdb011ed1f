import fs from 'node:fs';
import { expect } from 'chai';
import { openKeyConnection } from '../../../src/backends/embedded.js';
import { openSqlite, readTogether, type SqliteConnection } from '../../../src/adapters/sqlite/sqlite-database.js';
import { SqliteKeyStore } from '../../../src/adapters/sqlite/sqlite-key-store.js';
import { SqliteReadStore } from '../../../src/adapters/sqlite/sqlite-read-store.js';
import { tempDir } from '../../support/temp-dir.js';

/**
 * Whether each point look-up (`get`) of the statements prepared on `db` from now on ran inside a
 * transaction, in order.
 */
function recordLookUps(db: SqliteConnection): boolean[] {
  const inTransaction: boolean[] = [];
  const prepare = db.prepare.bind(db);
  db.prepare = ((source: string) => {
    const statement = prepare(source);
    const get = statement.get.bind(statement);
    statement.get = ((...parameters: unknown[]) => {
      inTransaction.push(db.inTransaction);
      return get(...parameters);
    }) as typeof statement.get;
    return statement;
  }) as typeof db.prepare;
  return inTransaction;
}

/**
 * Several reads made together share one read transaction: on a WAL file each read on its own
 * opens and closes one (a lock of the -shm file, a look at the WAL), several times the cost of a
 * point look-up.
 */
describe('SQLite: reads made together share one read transaction', () => {
  let dir: string;
  const open: SqliteConnection[] = [];

  beforeEach(() => {
    dir = tempDir('read-together');
  });
  afterEach(() => {
    for (const db of open.splice(0)) db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const opened = (db: SqliteConnection) => {
    open.push(db);
    return db;
  };

  it('runs several reads inside one transaction, a single read outside any, and joins a transaction under way', () => {
    const db = opened(openSqlite(dir));
    expect(readTogether(db, 3, () => db.inTransaction)).to.equal(true);
    expect(
      readTogether(db, 3, () => db.inTransaction),
      'again, with the same transaction function',
    ).to.equal(true);
    expect(readTogether(db, 1, () => db.inTransaction)).to.equal(false);
    expect(db.transaction(() => readTogether(db, 3, () => db.inTransaction))()).to.equal(true);
    expect(db.inTransaction).to.equal(false);
  });

  it('getMany of the read store reads its documents in a transaction', async () => {
    const db = opened(openSqlite(dir));
    const lookUps = recordLookUps(db);
    const store = new SqliteReadStore(db);
    await store.commitBatches([
      {
        projector: 'p',
        version: 1,
        position: 1n,
        after: null,
        changes: ['a', 'b', 'c'].map((id) => ({ op: 'put' as const, collection: 'docs', id, doc: { id } })),
      },
    ]);
    lookUps.length = 0;
    const found = await store.getMany<{ id: string }>('docs', ['a', 'b', 'c', 'a', 'missing']);
    expect([...found.keys()]).to.deep.equal(['a', 'b', 'c']);
    expect(lookUps).to.deep.equal([true, true, true, true]);
  });

  it('the data keys of a page of events are looked up in a transaction; one key alone in none', async () => {
    const db = opened(openKeyConnection(dir));
    const lookUps = recordLookUps(db);
    const store = new SqliteKeyStore(db);
    const keys = await Promise.all(Array.from({ length: 5 }, (_, index) => store.keyFor(`user:page-${index}`)));
    lookUps.length = 0;
    const found = await store.keysById([...keys.map((key) => key.id), keys[0]!.id, 'no-such-key']);
    expect([...found.values()]).to.deep.equal(keys);
    expect(lookUps).to.deep.equal([true, true, true, true, true, true]);
    lookUps.length = 0;
    expect(await store.keysById([keys[1]!.id])).to.deep.equal(new Map([[keys[1]!.id, keys[1]]]));
    expect(lookUps).to.deep.equal([false]);
  });
});
