import {
  type Checkpoint,
  CheckpointMovedError,
  checkedCollection,
  checkedField,
  type FindQuery,
  type IndexSpec,
  indexFields,
  type ProjectorBatch,
  type ReadStore,
  type Scalar,
} from '../../ports/read-store.js';
import type { Statement } from 'better-sqlite3';
import { guardSqlite, readTogether, STABLE_PARAM, type SqliteConnection, StatementCache, writeTransaction } from './sqlite-database.js';

function fieldPath(field: string): string {
  return `json_extract(doc, '$.${checkedField(field)}')`;
}

/** The table holding a collection: `rm_<collection>` (as the MongoDB adapter names its collections). */
function tableName(collection: string): string {
  return `rm_${checkedCollection(collection)}`;
}

/**
 * One document read straight from the file, without opening a store (whose constructor may
 * change the schema: `npm run migrate-events` reads a source another process may still serve).
 * Null when its collection or the document does not exist.
 */
export function peekDocument<T extends Record<string, unknown>>(db: SqliteConnection, collection: string, id: string): T | null {
  const table = tableName(collection);
  if (!db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?").get(table)) return null;
  const row = db.prepare<[string], { doc: string }>(`SELECT doc FROM ${table} WHERE id = ?`).get(id);
  return row ? (JSON.parse(row.doc) as T) : null;
}

function sqlValue(value: Scalar): Scalar | number {
  return typeof value === 'boolean' ? Number(value) : value;
}

/** Before one table per collection, every document lived in one `documents` table. */
const LEGACY_TABLE = 'documents';

/**
 * Read models as JSON documents, one table per collection (`id` primary key, the document's
 * position, the JSON text), queried through json_extract expression indexes. A rebuilt
 * collection is swapped in by renaming its table: constant time, however many documents.
 * Tables, once created, always exist (a swap leaves an empty table behind), so cached
 * statements never point at a missing table.
 */
export class SqliteReadStore implements ReadStore {
  private readonly statements;
  private readonly cache: StatementCache;
  /** Collections whose table is known to exist. */
  private readonly tables = new Set<string>();
  /** Tables created by the write transaction under way: forgotten again if it rolls back. */
  private created: string[] = [];
  /** The statements every collection uses, prepared once per table. */
  private readonly perTable = new Map<
    string,
    { get: Statement<[string], { doc: string }>; put: Statement<[string, bigint | number, string]>; delete: Statement<[string]> }
  >();

  constructor(private readonly db: SqliteConnection) {
    this.cache = new StatementCache(db);
    this.statements = {
      tableExists: db.prepare<[string], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?"),
      indexesOf: db.prepare<[string], { sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL"),
      // Positions are 64-bit: read them as BigInt so they survive beyond 2^53.
      checkpoint: db
        .prepare<[string], { position: bigint | null; version: bigint }>('SELECT position, version FROM checkpoints WHERE projector = ?')
        .safeIntegers(true),
      saveCheckpoint: db.prepare(
        'INSERT INTO checkpoints (projector, position, version) VALUES (?, ?, ?) ' +
          'ON CONFLICT (projector) DO UPDATE SET position = excluded.position, version = excluded.version',
      ),
      deleteCheckpoint: db.prepare('DELETE FROM checkpoints WHERE projector = ?'),
    };
    this.migrateLegacyTable();
  }

  /** Moves documents of the one-table layout into their collections' tables, once. */
  private migrateLegacyTable(): void {
    if (!this.statements.tableExists.get(LEGACY_TABLE)) return;
    this.write(() => {
      const collections = this.db.prepare<[], { collection: string }>(`SELECT DISTINCT collection FROM ${LEGACY_TABLE}`).all();
      for (const { collection } of collections) {
        this.createTable(collection);
        this.db
          .prepare(
            `INSERT OR REPLACE INTO ${tableName(collection)} (id, position, doc) SELECT id, position, doc FROM ${LEGACY_TABLE} WHERE collection = ? ORDER BY id`,
          )
          .run(collection);
      }
      this.db.exec(`DROP TABLE ${LEGACY_TABLE}`);
    });
  }

  private createTable(collection: string): void {
    // A rowid table with a unique id: large JSON rows are appended to the table's B-tree and
    // only the short ids go into the index (a WITHOUT ROWID table would move whole rows around).
    this.db.exec(`CREATE TABLE IF NOT EXISTS ${tableName(collection)} (id TEXT NOT NULL PRIMARY KEY, position INTEGER NOT NULL, doc TEXT NOT NULL)`);
    this.tables.add(collection);
    this.created.push(collection);
  }

  /**
   * A write transaction (BEGIN IMMEDIATE); tables it created are forgotten if it fails. It does
   * not wait for the disk (the connection's `synchronous = NORMAL`): read models and checkpoints
   * are derived from the log and committed together, so a power cut can only take them back to
   * an earlier checkpoint, from which they catch up; a process crash loses nothing.
   */
  private write<T>(work: () => T): T {
    this.created = [];
    try {
      return writeTransaction(this.db, work);
    } catch (error) {
      for (const collection of this.created) this.tables.delete(collection);
      throw error;
    } finally {
      this.created = [];
    }
  }

  /** Creates the collection's table if needed (inside a write). */
  private writable(collection: string): string {
    if (!this.tables.has(collection)) this.createTable(collection);
    return tableName(collection);
  }

  /** The collection's table, or null when nothing was ever written to it (reads never create tables). */
  private readable(collection: string): string | null {
    if (this.tables.has(collection)) return tableName(collection);
    if (!this.statements.tableExists.get(tableName(collection))) return null;
    this.tables.add(collection);
    return tableName(collection);
  }

  async ensureIndexes(collection: string, indexes: IndexSpec[]): Promise<void> {
    this.write(() => {
      const table = this.writable(collection);
      for (const index of indexes) {
        const fields = indexFields(index);
        const name = `idx_${collection}_${fields.join('_')}`.replace(/[^A-Za-z0-9_]/g, '_');
        this.db.exec(`CREATE INDEX IF NOT EXISTS ${name} ON ${table} (${fields.map(fieldPath).join(', ')})`);
      }
    });
  }

  private statementsOf(table: string) {
    let statements = this.perTable.get(table);
    if (!statements) {
      statements = {
        get: this.db.prepare<[string], { doc: string }>(`SELECT doc FROM ${table} WHERE id = ?`),
        put: this.db.prepare<[string, bigint | number, string]>(
          `INSERT INTO ${table} (id, position, doc) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET position = excluded.position, doc = excluded.doc`,
        ),
        delete: this.db.prepare<[string]>(`DELETE FROM ${table} WHERE id = ?`),
      };
      this.perTable.set(table, statements);
    }
    return statements;
  }

  async get<T extends Record<string, unknown>>(collection: string, id: string): Promise<T | null> {
    return guardSqlite(() => {
      const table = this.readable(collection);
      if (table === null) return null;
      const row = this.statementsOf(table).get.get(id);
      return row ? (JSON.parse(row.doc) as T) : null;
    });
  }

  async getMany<T extends Record<string, unknown>>(collection: string, ids: string[]): Promise<Map<string, T>> {
    const found = new Map<string, T>();
    const unique = new Set(ids);
    readTogether(this.db, unique.size, () => {
      const table = this.readable(collection);
      if (table === null) return;
      const statement = this.statementsOf(table).get;
      for (const id of unique) {
        const row = statement.get(id);
        if (row) found.set(id, JSON.parse(row.doc) as T);
      }
    });
    return found;
  }

  async find<T extends Record<string, unknown>>(collection: string, query: FindQuery = {}): Promise<T[]> {
    const { clauses, params } = this.whereClause(query.where);
    if (query.atMost) {
      clauses.push(`${fieldPath(query.atMost.field)} <= ${STABLE_PARAM}`);
      params.push(query.atMost.value);
    }
    if (query.atLeast) {
      clauses.push(`${fieldPath(query.atLeast.field)} >= ${STABLE_PARAM}`);
      params.push(query.atLeast.value);
    }
    if (query.afterId !== undefined) {
      clauses.push('id > ?');
      params.push(query.afterId);
    }
    const order = query.orderBy ? `${fieldPath(query.orderBy.field)} ${query.orderBy.direction === 'desc' ? 'DESC' : 'ASC'}, id ASC` : 'id ASC';
    params.push(query.limit ?? -1);
    return guardSqlite(() => {
      const table = this.readable(collection);
      if (table === null) return [];
      const sql = `SELECT doc FROM ${table} WHERE ${clauses.join(' AND ')} ORDER BY ${order} LIMIT ${STABLE_PARAM}`;
      return this.cache
        .get<Scalar[], { doc: string }>(sql)
        .all(...params)
        .map((row) => JSON.parse(row.doc) as T);
    });
  }

  async count(collection: string, where?: Record<string, Scalar>): Promise<number> {
    const { clauses, params } = this.whereClause(where);
    return guardSqlite(() => {
      const table = this.readable(collection);
      if (table === null) return 0;
      return this.cache.get<Scalar[], { n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE ${clauses.join(' AND ')}`).get(...params)!.n;
    });
  }

  private whereClause(where: Record<string, Scalar> = {}) {
    const clauses = ['1 = 1'];
    const params: Scalar[] = [];
    for (const [field, value] of Object.entries(where)) {
      if (value === null) {
        clauses.push(`${fieldPath(field)} IS NULL`);
      } else {
        clauses.push(`${fieldPath(field)} = ${STABLE_PARAM}`);
        params.push(sqlValue(value));
      }
    }
    return { clauses, params };
  }

  async commitBatches(batches: ProjectorBatch[]): Promise<void> {
    this.write(() => {
      for (const { changes, position } of batches) {
        let collection: string | null = null;
        let statements: ReturnType<SqliteReadStore['statementsOf']> | null = null;
        for (const change of changes) {
          if (change.collection !== collection) {
            collection = change.collection;
            statements = this.statementsOf(this.writable(collection));
          }
          if (change.op === 'put') statements!.put.run(change.id, position, JSON.stringify(change.doc));
          else statements!.delete.run(change.id);
        }
      }
      this.moveCheckpoints(batches);
    });
  }

  /**
   * Moves each batch's checkpoint from `after` to `position`, or throws CheckpointMovedError (the
   * whole commit then rolls back) when one no longer stands at `after` with the batch's version.
   * The projections of one runner move alike page after page, so they move in one compare-and-set
   * UPDATE, not a read and a write each: 16 read models made 32 statements per page.
   */
  private moveCheckpoints(batches: ProjectorBatch[]): void {
    const alike = new Map<string, ProjectorBatch[]>();
    for (const batch of batches) {
      // A first checkpoint has no row to update yet.
      if (batch.after === null) {
        if ((this.statements.checkpoint.get(batch.projector)?.position ?? null) !== null) throw new CheckpointMovedError(batch.projector);
        this.statements.saveCheckpoint.run(batch.projector, batch.position, batch.version);
        continue;
      }
      const key = `${batch.after}>${batch.position}@${batch.version}`;
      const group = alike.get(key);
      if (group) group.push(batch);
      else alike.set(key, [batch]);
    }
    for (const group of alike.values()) {
      const { after, position, version } = group[0]!;
      const projectors = group.map((batch) => batch.projector);
      const update = this.cache.get<unknown[], string>(
        `UPDATE checkpoints SET position = ? WHERE position = ? AND version = ? AND projector IN (${projectors.map(() => '?').join(', ')}) RETURNING projector`,
      );
      const advanced = new Set(update.pluck(true).all(position, after, version, ...projectors));
      const stale = projectors.find((projector) => !advanced.has(projector));
      if (stale !== undefined) throw new CheckpointMovedError(stale);
    }
  }

  async checkpoint(projector: string): Promise<Checkpoint> {
    const row = guardSqlite(() => this.statements.checkpoint.get(projector));
    return {
      projector,
      position: row?.position ?? null,
      version: row === undefined ? 0 : Number(row.version),
    };
  }

  /**
   * Renames each rebuilt table to the live name (the live table and its documents dropped),
   * recreates the live indexes on it and leaves an empty table under the rebuilt name, all in
   * one transaction: constant time in the number of documents, plus the index builds.
   */
  async swapIn(projector: string, from: string, version: number, collections: [live: string, rebuilt: string][]): Promise<void> {
    this.write(() => {
      const checkpoint = this.statements.checkpoint.get(from);
      if (!checkpoint) throw new Error(`No checkpoint ${from} to swap in`);
      for (const [live, rebuilt] of collections) {
        const liveTable = this.writable(live);
        const rebuiltTable = this.writable(rebuilt);
        const liveIndexes = this.statements.indexesOf.all(liveTable).map((index) => index.sql);
        // The rebuilt table's own indexes (if any) would clash with the live ones' names.
        for (const { name } of this.db
          .prepare<[string], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL")
          .all(rebuiltTable)) {
          this.db.exec(`DROP INDEX ${name}`);
        }
        this.db.exec(`DROP TABLE ${liveTable}`);
        this.db.exec(`ALTER TABLE ${rebuiltTable} RENAME TO ${liveTable}`);
        for (const sql of liveIndexes) this.db.exec(sql);
        this.createTable(rebuilt);
      }
      this.statements.saveCheckpoint.run(projector, checkpoint.position, version);
      this.statements.deleteCheckpoint.run(from);
    });
  }

  async reset(projector: string, collections: string[]): Promise<void> {
    this.write(() => {
      for (const collection of collections) this.db.exec(`DELETE FROM ${this.writable(collection)}`);
      this.statements.deleteCheckpoint.run(projector);
    });
  }

  async putAux(collection: string, id: string, doc: Record<string, unknown>): Promise<void> {
    this.write(() => this.statementsOf(this.writable(collection)).put.run(id, 0, JSON.stringify(doc)));
  }

  async close(): Promise<void> {}
}
