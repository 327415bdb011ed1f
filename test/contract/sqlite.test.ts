import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSqlite } from '../../src/adapters/sqlite/sqlite-database.js';
import { SqliteEventStore } from '../../src/adapters/sqlite/sqlite-event-store.js';
import { SqliteReadStore } from '../../src/adapters/sqlite/sqlite-read-store.js';
import type { ContractSubject } from './contract-subject.js';
import { eventStoreContract } from './event-store.contract.js';
import { readStoreContract } from './read-store.contract.js';

/** A fresh database file in its own temp dir, removed when the test is done. */
function openTempDatabase() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'referrals-contract-'));
  const db = openSqlite(dir);
  return {
    db,
    remove() {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

eventStoreContract(
  'SQLite',
  async (): Promise<ContractSubject<SqliteEventStore>> => {
    const { db, remove } = openTempDatabase();
    const store = new SqliteEventStore(db);
    return {
      store,
      async dispose() {
        await store.close();
        remove();
      },
    };
  },
  { freshStorePerTest: true },
);

readStoreContract(
  'SQLite',
  async (): Promise<ContractSubject<SqliteReadStore>> => {
    const { db, remove } = openTempDatabase();
    const store = new SqliteReadStore(db);
    return {
      store,
      async dispose() {
        await store.close();
        remove();
      },
    };
  },
  { freshStorePerTest: true },
);
