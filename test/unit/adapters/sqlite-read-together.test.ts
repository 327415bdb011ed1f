import fs from 'node:fs';
import { expect } from 'chai';
import { openSqlite, readTogether, type SqliteConnection } from '../../../src/adapters/sqlite/sqlite-database.js';
import { SqliteReadStore } from '../../../src/adapters/sqlite/sqlite-read-store.js';
import { tempDir } from '../../support/temp-dir.js';

/**
 * Several reads made together share one read transaction: on a WAL file each read on its own
 * opens and closes one (a lock of the -shm file, a look at the WAL), several times the cost of a
 * point look-up. The data-key look-ups of a page: test/unit/adapters/sqlite-key-store.test.ts.
 */
describe('SQLite: reads made together share one read transaction', () => {
  let dir: string;
  let db: SqliteConnection;
  let transactions: number;

  beforeEach(() => {
    dir = tempDir('read-together');
    db = openSqlite(dir);
    transactions = 0;
    const transaction = db.transaction.bind(db);
    db.transaction = ((work: Parameters<typeof transaction>[0]) => {
      transactions += 1;
      return transaction(work);
    }) as typeof db.transaction;
  });
  afterEach(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('runs several reads inside one transaction, a single read outside any, and joins a transaction under way', () => {
    expect(readTogether(db, 3, () => db.inTransaction)).to.equal(true);
    expect(readTogether(db, 1, () => db.inTransaction)).to.equal(false);
    expect(transactions).to.equal(1);
    const nested = db.transaction(() => readTogether(db, 3, () => db.inTransaction))();
    expect(nested).to.equal(true);
    expect(transactions, 'no savepoint inside the transaction under way').to.equal(2);
  });

  it('getMany of the read store reads its documents in one transaction', async () => {
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
    const before = transactions;
    const found = await store.getMany<{ id: string }>('docs', ['a', 'b', 'c', 'a', 'missing']);
    expect([...found.keys()]).to.deep.equal(['a', 'b', 'c']);
    expect(transactions - before).to.equal(1);
  });
});
