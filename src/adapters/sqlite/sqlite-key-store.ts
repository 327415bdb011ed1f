import { randomUUID } from 'node:crypto';
import { newDataKeyBytes } from '../../application/pooled-random-bytes.js';
import type { DataKey, KeyStore } from '../../ports/key-store.js';
import { guardSqlite, readTogether, type SqliteConnection, writeTransaction } from './sqlite-database.js';
import { type LogSyncer, SharedSyncs, truncateNow, walSyncer } from './wal-sync.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS data_keys (
  id         TEXT PRIMARY KEY,
  subject    TEXT NOT NULL UNIQUE,
  key        BLOB NOT NULL,
  created_at TEXT NOT NULL
);
`;

/** Subjects remembered as durable at most (`SqliteKeyStore.durable`). */
const DURABLE_SUBJECTS = 10_000;

interface PendingKey {
  subject: string;
  material: Buffer | undefined;
  resolve(key: DataKey): void;
  reject(error: unknown): void;
}

interface KeyRow {
  id: string;
  subject: string;
  key: Buffer;
}

/**
 * Data keys in their own SQLite file (DATA_DIR/data-keys.db, opened by src/backends/embedded.ts
 * with `secure_delete`, so a destroyed key's bytes are overwritten, not left in a free page).
 * `destroy` checkpoints the WAL (TRUNCATE) so no copy of the key stays in the -wal file.
 *
 * New keys are made in groups: the subjects asked for in one turn of the event loop get their
 * keys in one transaction. A key must be durable before any value encrypted under it is, so a
 * key is handed out only once a sync of the file's WAL that started after its commit is done
 * (off the event loop, shared by the commits made meanwhile: src/adapters/sqlite/wal-sync.ts;
 * the connection commits with `synchronous = NORMAL`).
 */
export class SqliteKeyStore implements KeyStore {
  private readonly statements;
  private readonly pending: PendingKey[] = [];
  private readonly syncs: SharedSyncs;
  /**
   * Subjects whose key is known durable (made here and synced, or found and synced since): a
   * key found in the file may be one another process, or this one, committed a moment ago and
   * not synced yet. Bounded: forgotten wholesale when full (the cost is one more shared sync).
   */
  private readonly durable = new Set<string>();

  constructor(
    private readonly db: SqliteConnection,
    syncer?: LogSyncer,
  ) {
    db.pragma('secure_delete = ON');
    db.exec(SCHEMA);
    this.syncs = new SharedSyncs(syncer ?? walSyncer(db), 'the data keys');
    this.statements = {
      bySubject: db.prepare<[string], KeyRow>('SELECT id, subject, key FROM data_keys WHERE subject = ?'),
      byId: db.prepare<[string], KeyRow>('SELECT id, subject, key FROM data_keys WHERE id = ?'),
      insert: db.prepare('INSERT INTO data_keys (id, subject, key, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (subject) DO NOTHING'),
      remove: db.prepare<[string]>('DELETE FROM data_keys WHERE subject = ?'),
    };
  }

  async keyFor(subject: string, material?: Buffer): Promise<DataKey> {
    const existing = guardSqlite(() => this.statements.bySubject.get(subject));
    if (existing) {
      if (!this.durable.has(subject)) {
        await this.syncs.afterCommit();
        this.knownDurable([subject]);
      }
      return toKey(existing);
    }
    if (this.syncs.failure) throw this.syncs.failure;
    return new Promise((resolve, reject) => {
      this.pending.push({ subject, material, resolve, reject });
      if (this.pending.length === 1) setImmediate(() => this.createPending());
    });
  }

  /** Insert-or-keep and read back under the write lock: a concurrent creator's key (another process's, or the same subject twice in the group) wins for both. */
  private createPending(): void {
    if (this.pending.length === 0) return;
    const group = this.pending.splice(0);
    let rows: KeyRow[];
    try {
      const createdAt = new Date().toISOString();
      rows = writeTransaction(this.db, () =>
        group.map(({ subject, material }) => {
          this.statements.insert.run(randomUUID(), subject, material ?? newDataKeyBytes(), createdAt);
          return this.statements.bySubject.get(subject)!;
        }),
      );
    } catch (error) {
      for (const request of group) request.reject(error);
      return;
    }
    this.syncs.afterCommit().then(
      () => {
        this.knownDurable(group.map((request) => request.subject));
        for (const [index, request] of group.entries()) request.resolve(toKey(rows[index]!));
      },
      (error: unknown) => {
        for (const request of group) request.reject(error);
      },
    );
  }

  /** Why no key can be made durable any more (a failed sync, the file replaced), until a restart; null while keys can be made. */
  writeFailure(): Error | null {
    return this.syncs.failure;
  }

  async existingKey(subject: string): Promise<DataKey | null> {
    const row = guardSqlite(() => this.statements.bySubject.get(subject));
    return row ? toKey(row) : null;
  }

  async keysById(ids: readonly string[]): Promise<Map<string, DataKey>> {
    const found = new Map<string, DataKey>();
    const unique = new Set(ids);
    readTogether(this.db, unique.size, () => {
      for (const id of unique) {
        const row = this.statements.byId.get(id);
        if (row) found.set(id, toKey(row));
      }
    });
    return found;
  }

  async destroy(subject: string): Promise<number> {
    // Keys asked for before the erasure are made first, so the erasure destroys them too.
    this.createPending();
    const { changes } = writeTransaction(this.db, () => this.statements.remove.run(subject));
    this.durable.delete(subject);
    if (changes > 0) {
      // The deletion is durable, and no copy of the key is left in the WAL. One attempt, without
      // waiting: while a reader holds the WAL, the erasure's purge of every file, which follows
      // once the erasure is recorded, tries again and then defers it.
      await this.syncs.afterCommit();
      truncateNow(this.db);
    }
    return changes;
  }

  private knownDurable(subjects: readonly string[]): void {
    if (this.durable.size + subjects.length > DURABLE_SUBJECTS) this.durable.clear();
    for (const subject of subjects) this.durable.add(subject);
  }

  /** Makes the keys still asked for, before the backend closes the connection. */
  async close(): Promise<void> {
    this.createPending();
    await this.syncs.close();
  }
}

function toKey(row: KeyRow): DataKey {
  return { id: row.id, subject: row.subject, key: Buffer.from(row.key) };
}
