import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { openSqlite } from '../../../src/adapters/sqlite/sqlite-database.js';
import { SqliteReadStore } from '../../../src/adapters/sqlite/sqlite-read-store.js';

const FULL = 2;
const NORMAL = 1;

/**
 * Read-model commits skip the fsync; event commits keep it. The two share one connection, so the
 * read store must hand the connection back with its own setting, whatever happens.
 */
describe('SqliteReadStore: read-model commits without an fsync, events still with one', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'read-store-sync-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('commits a batch under synchronous=NORMAL and restores FULL afterwards', async () => {
    const db = openSqlite(dir);
    // Every PRAGMA that sets synchronous, each time it runs (the store prepares them once).
    const settings: string[] = [];
    const prepare = db.prepare.bind(db);
    db.prepare = ((source: string) => {
      const statement = prepare(source);
      const setting = /^PRAGMA (synchronous = \d)$/.exec(source)?.[1];
      if (setting) {
        const run = statement.run.bind(statement);
        statement.run = ((...params: unknown[]) => {
          settings.push(setting);
          return run(...params);
        }) as typeof statement.run;
      }
      return statement;
    }) as typeof db.prepare;
    const store = new SqliteReadStore(db);
    const pragma = db.pragma.bind(db);
    expect(pragma('synchronous', { simple: true })).to.equal(FULL);
    await store.commitBatches([
      { projector: 'p', version: 1, after: null, position: 1n, changes: [{ op: 'put', collection: 'things', id: 'a', doc: { n: 1 } }] },
    ]);
    expect(settings).to.deep.equal([`synchronous = ${NORMAL}`, `synchronous = ${FULL}`]);
    expect(pragma('synchronous', { simple: true })).to.equal(FULL);
    expect(await store.get('things', 'a')).to.deep.equal({ n: 1 });
    // The next batch runs the same prepared statements again.
    await store.commitBatches([{ projector: 'p', version: 1, after: 1n, position: 2n, changes: [] }]);
    expect(settings).to.deep.equal([`synchronous = ${NORMAL}`, `synchronous = ${FULL}`, `synchronous = ${NORMAL}`, `synchronous = ${FULL}`]);
    expect(pragma('synchronous', { simple: true })).to.equal(FULL);
    db.close();
  });

  it('restores FULL when the commit fails', async () => {
    const db = openSqlite(dir);
    const store = new SqliteReadStore(db);
    let failed = false;
    try {
      // The stored checkpoint is null, not 5: the batch is refused.
      await store.commitBatches([{ projector: 'p', version: 1, after: 5n, position: 6n, changes: [] }]);
    } catch {
      failed = true;
    }
    expect(failed).to.equal(true);
    expect(db.pragma('synchronous', { simple: true })).to.equal(FULL);
    db.close();
  });

  it('leaves a connection opened with NORMAL as it is', async () => {
    const db = openSqlite(dir);
    db.pragma('synchronous = NORMAL');
    const store = new SqliteReadStore(db);
    await store.commitBatches([{ projector: 'p', version: 1, after: null, position: 1n, changes: [] }]);
    expect(db.pragma('synchronous', { simple: true })).to.equal(NORMAL);
    db.close();
  });
});
