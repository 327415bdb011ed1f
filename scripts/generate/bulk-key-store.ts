import { randomUUID } from 'node:crypto';
import { newDataKeyBytes } from '../../src/application/pooled-random-bytes.js';
import { SqliteKeyStore } from '../../src/adapters/sqlite/sqlite-key-store.js';
import type { SqliteConnection } from '../../src/adapters/sqlite/sqlite-database.js';
import type { DataKey, KeyStore } from '../../src/ports/key-store.js';

/**
 * The generator's data keys (`npm run generate-events`), in the file the service uses
 * (DATA_DIR/data-keys.db, same rows): a new subject's key is inserted at once, in the generator's
 * open commit group (CommitGroups, which commits the keys before the events sealed under them),
 * not grouped per turn of the event loop and synced before it is handed out as the service's key
 * store does (SqliteKeyStore). The generator is the only writer, and what a crash leaves behind a
 * second run adds to, as with its events (BulkAppender); `close` checkpoints the file, which
 * syncs it. Reads and erasure go to SqliteKeyStore on the same connection.
 */
export class BulkKeyStore implements KeyStore {
  private readonly reader: SqliteKeyStore;
  private readonly known = new Map<string, DataKey>();
  private readonly insert;

  constructor(private readonly db: SqliteConnection) {
    this.reader = new SqliteKeyStore(db, { sync: async () => {}, close: () => {} });
    db.pragma('synchronous = NORMAL');
    this.insert = db.prepare('INSERT INTO data_keys (id, subject, key, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (subject) DO NOTHING');
  }

  async keyFor(subject: string, material?: Buffer): Promise<DataKey> {
    const known = this.known.get(subject) ?? (await this.reader.existingKey(subject));
    if (known) return known;
    const key = { id: randomUUID(), subject, key: material ?? newDataKeyBytes() };
    this.insert.run(key.id, subject, key.key, new Date().toISOString());
    this.known.set(subject, key);
    return key;
  }

  existingKey(subject: string): Promise<DataKey | null> {
    return this.reader.existingKey(subject);
  }

  keysById(ids: readonly string[]): Promise<Map<string, DataKey>> {
    return this.reader.keysById(ids);
  }

  destroy(subject: string): Promise<number> {
    this.known.delete(subject);
    return this.reader.destroy(subject);
  }

  async close(): Promise<void> {
    this.db.pragma('wal_checkpoint(TRUNCATE)');
    this.db.close();
  }
}
