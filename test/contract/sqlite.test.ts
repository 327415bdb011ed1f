import fs from 'node:fs';
import { openSqlite } from '../../src/adapters/sqlite/sqlite-database.js';
import { SqliteEventStore } from '../../src/adapters/sqlite/sqlite-event-store.js';
import { SqliteKeyStore } from '../../src/adapters/sqlite/sqlite-key-store.js';
import { SqliteRateLimitStore } from '../../src/adapters/sqlite/sqlite-rate-limit-store.js';
import { SqliteReadStore } from '../../src/adapters/sqlite/sqlite-read-store.js';
import { SqliteWebhookOutbox } from '../../src/adapters/sqlite/sqlite-webhook-outbox.js';
import type { ContractSubject } from './contract-subject.js';
import { analyticsReadModelContract } from './analytics-read-model.contract.js';
import { eventStoreContract } from './event-store.contract.js';
import { keyStoreContract } from './key-store.contract.js';
import { rateLimitStoreContract } from './rate-limit-store.contract.js';
import { readStoreContract } from './read-store.contract.js';
import { webhookOutboxContract } from './webhook-outbox.contract.js';
import { tempDir } from '../support/temp-dir.js';

/** A fresh database file in its own temp dir, removed when the test is done. */
function openTempDatabase() {
  const dir = tempDir('referrals-contract');
  const db = openSqlite(dir);
  return {
    db,
    remove() {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A store on a fresh temporary database, removed with it after the test. */
function onTempDatabase<S extends { close(): Promise<void> }>(make: (db: ReturnType<typeof openTempDatabase>['db']) => S) {
  return async (): Promise<ContractSubject<S>> => {
    const { db, remove } = openTempDatabase();
    const store = make(db);
    return {
      store,
      async dispose() {
        await store.close();
        remove();
      },
    };
  };
}

eventStoreContract(
  'SQLite',
  onTempDatabase((db) => new SqliteEventStore(db)),
  { freshStorePerTest: true },
);
readStoreContract(
  'SQLite',
  onTempDatabase((db) => new SqliteReadStore(db)),
  { freshStorePerTest: true },
);
rateLimitStoreContract(
  'SQLite',
  onTempDatabase((db) => new SqliteRateLimitStore(db)),
  { freshStorePerTest: true },
);
webhookOutboxContract(
  'SQLite',
  onTempDatabase((db) => new SqliteWebhookOutbox(db)),
  { freshStorePerTest: true },
);
keyStoreContract(
  'SQLite',
  onTempDatabase((db) => new SqliteKeyStore(db)),
  { freshStorePerTest: true },
);
analyticsReadModelContract(
  'SQLite',
  onTempDatabase((db) => new SqliteReadStore(db)),
);
