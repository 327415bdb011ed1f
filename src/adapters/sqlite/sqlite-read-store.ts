import { type Checkpoint, CheckpointMovedError, type FindQuery, type IndexSpec, indexFields, type ProjectorBatch, type ReadStore, type Scalar } from '../../ports/read-store.js';
import { guardSqlite, type SqliteConnection, StatementCache, writeTransaction } from './sqlite-database.js';

const FIELD = /^[A-Za-z_][A-Za-z0-9_]*$/;

function fieldPath(field: string): string {
  if (!FIELD.test(field)) throw new Error(`Invalid field name ${field}`);
  return `json_extract(doc, '$.${field}')`;
}

const COLLECTION = /^[A-Za-z0-9_]+$/;

function collectionLiteral(collection: string): string {
  if (!COLLECTION.test(collection)) throw new Error(`Invalid collection name ${collection}`);
  return `'${collection}'`;
}

function sqlValue(value: Scalar): Scalar | number {
  return typeof value === 'boolean' ? Number(value) : value;
}

/** Read models as JSON documents in one table, queried through json_extract expression indexes. */
export class SqliteReadStore implements ReadStore {
  private readonly statements;

  private readonly cache: StatementCache;

  constructor(private readonly db: SqliteConnection) {
    this.cache = new StatementCache(db);
    this.statements = {
      get: db.prepare<[string, string], { doc: string }>('SELECT doc FROM documents WHERE collection = ? AND id = ?'),
      put: db.prepare(
        'INSERT INTO documents (collection, id, position, doc) VALUES (?, ?, ?, ?) ' +
          'ON CONFLICT (collection, id) DO UPDATE SET position = excluded.position, doc = excluded.doc',
      ),
      delete: db.prepare('DELETE FROM documents WHERE collection = ? AND id = ?'),
      deleteCollection: db.prepare('DELETE FROM documents WHERE collection = ?'),
      renameCollection: db.prepare('UPDATE documents SET collection = ? WHERE collection = ?'),
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
  }

  async ensureIndexes(collection: string, indexes: IndexSpec[]): Promise<void> {
    guardSqlite(() => {
      for (const index of indexes) {
        const fields = indexFields(index);
        const name = `idx_${collection}_${fields.join('_')}`.replace(/[^A-Za-z0-9_]/g, '_');
        this.db.exec(
          `CREATE INDEX IF NOT EXISTS ${name} ON documents (collection, ${fields.map(fieldPath).join(', ')}) WHERE collection = ${collectionLiteral(collection)}`,
        );
      }
    });
  }

  async get<T extends Record<string, unknown>>(collection: string, id: string): Promise<T | null> {
    const row = guardSqlite(() => this.statements.get.get(collection, id));
    return row ? (JSON.parse(row.doc) as T) : null;
  }

  async getMany<T extends Record<string, unknown>>(collection: string, ids: string[]): Promise<Map<string, T>> {
    const found = new Map<string, T>();
    guardSqlite(() => {
      for (const id of new Set(ids)) {
        const row = this.statements.get.get(collection, id);
        if (row) found.set(id, JSON.parse(row.doc) as T);
      }
    });
    return found;
  }

  async find<T extends Record<string, unknown>>(collection: string, query: FindQuery = {}): Promise<T[]> {
    const { clauses, params } = this.whereClause(collection, query.where);
    if (query.atMost) {
      clauses.push(`${fieldPath(query.atMost.field)} <= ?`);
      params.push(query.atMost.value);
    }
    if (query.afterId !== undefined) {
      clauses.push('id > ?');
      params.push(query.afterId);
    }
    const order = query.orderBy
      ? `${fieldPath(query.orderBy.field)} ${query.orderBy.direction === 'desc' ? 'DESC' : 'ASC'}, id ASC`
      : 'id ASC';
    params.push(query.limit ?? -1);
    const sql = `SELECT doc FROM documents WHERE ${clauses.join(' AND ')} ORDER BY ${order} LIMIT ?`;
    const rows = guardSqlite(() => this.cache.get<Scalar[], { doc: string }>(sql).all(...params));
    return rows.map((row) => JSON.parse(row.doc) as T);
  }

  async count(collection: string, where?: Record<string, Scalar>): Promise<number> {
    const { clauses, params } = this.whereClause(collection, where);
    const sql = `SELECT COUNT(*) AS n FROM documents WHERE ${clauses.join(' AND ')}`;
    return guardSqlite(() => this.cache.get<Scalar[], { n: number }>(sql).get(...params)!.n);
  }

  private whereClause(collection: string, where: Record<string, Scalar> = {}) {
    // The collection is written into the SQL (not bound) so the planner can match the partial
    // indexes, which are declared WHERE collection = '<name>'.
    const clauses = [`collection = ${collectionLiteral(collection)}`];
    const params: Scalar[] = [];
    for (const [field, value] of Object.entries(where)) {
      if (value === null) {
        clauses.push(`${fieldPath(field)} IS NULL`);
      } else {
        clauses.push(`${fieldPath(field)} = ?`);
        params.push(sqlValue(value));
      }
    }
    return { clauses, params };
  }

  async commitBatches(batches: ProjectorBatch[]): Promise<void> {
    writeTransaction(this.db, () => {
      for (const { projector, version, changes, position, after } of batches) {
        const stored = this.statements.checkpoint.get(projector)?.position ?? null;
        if (stored !== after) throw new CheckpointMovedError(projector);
        for (const change of changes) {
          if (change.op === 'put') {
            this.statements.put.run(change.collection, change.id, position, JSON.stringify(change.doc));
          } else {
            this.statements.delete.run(change.collection, change.id);
          }
        }
        this.statements.saveCheckpoint.run(projector, position, version);
      }
    });
  }

  async checkpoint(projector: string): Promise<Checkpoint> {
    const row = guardSqlite(() => this.statements.checkpoint.get(projector));
    return {
      projector,
      position: row?.position ?? null,
      version: row === undefined ? 0 : Number(row.version),
    };
  }

  async swapIn(projector: string, from: string, version: number, collections: [live: string, rebuilt: string][]): Promise<void> {
    writeTransaction(this.db, () => {
      const checkpoint = this.statements.checkpoint.get(from);
      if (!checkpoint) throw new Error(`No checkpoint ${from} to swap in`);
      for (const [live, rebuilt] of collections) {
        this.statements.deleteCollection.run(live);
        this.statements.renameCollection.run(live, rebuilt);
      }
      this.statements.saveCheckpoint.run(projector, checkpoint.position, version);
      this.statements.deleteCheckpoint.run(from);
    });
  }

  async reset(projector: string, collections: string[]): Promise<void> {
    writeTransaction(this.db, () => {
      for (const collection of collections) this.statements.deleteCollection.run(collection);
      this.statements.deleteCheckpoint.run(projector);
    });
  }

  async putAux(collection: string, id: string, doc: Record<string, unknown>): Promise<void> {
    writeTransaction(this.db, () => this.statements.put.run(collection, id, 0, JSON.stringify(doc)));
  }

  async close(): Promise<void> {}
}
