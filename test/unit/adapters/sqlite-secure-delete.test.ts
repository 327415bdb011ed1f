import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { DATABASE_FILE, openSqlite } from '../../../src/adapters/sqlite/sqlite-database.js';
import { SqliteReadStore } from '../../../src/adapters/sqlite/sqlite-read-store.js';
import { openKeyConnection } from '../../../src/backends/embedded.js';
import { tempDataDir } from '../../support/test-service.js';

const ON = 1;

/**
 * README: every SQLite connection runs with `secure_delete` (freed bytes are zeroed, not left in
 * free pages), so what an erasure overwrote (SPEC §13) is gone from the file, not merely unlinked
 * from its b-tree. (The rate-limit counters' file is checked by what it leaves:
 * test/unit/adapters/sqlite-rate-limit-store.test.ts.)
 */
describe('embedded SQLite files: secure_delete on every connection', () => {
  let dir: string;

  beforeEach(() => {
    dir = tempDataDir();
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the log’s connection (events, read models) and the one its neighbour files are opened with (data keys, rate limits, webhooks) run with secure_delete', () => {
    const log = openSqlite(dir);
    const keys = openKeyConnection(dir);
    try {
      expect(log.pragma('secure_delete', { simple: true }), DATABASE_FILE).to.equal(ON);
      expect(keys.pragma('secure_delete', { simple: true }), 'data-keys.db').to.equal(ON);
    } finally {
      log.close();
      keys.close();
    }
  });

  it('a read-model document deleted leaves no copy of its personal values in referrals.db', async () => {
    const db = openSqlite(dir);
    const readStore = new SqliteReadStore(db);
    const ann = { app_user_id: 'ann', email: 'ann@example.com' };
    await readStore.commitBatches([
      { projector: 'users', version: 1, after: null, position: 1n, changes: [{ op: 'put', collection: 'users', id: 'ann', doc: ann }] },
    ]);
    await readStore.commitBatches([{ projector: 'users', version: 1, after: 1n, position: 2n, changes: [{ op: 'delete', collection: 'users', id: 'ann' }] }]);
    expect(await readStore.get('users', 'ann')).to.equal(null);
    await readStore.close();
    db.close(); // the last connection copies the WAL into the file and removes it
    expect(fs.existsSync(path.join(dir, `${DATABASE_FILE}-wal`))).to.equal(false);
    expect(fs.readFileSync(path.join(dir, DATABASE_FILE)).includes(Buffer.from('ann@example.com'))).to.equal(false);
  });
});
