import { ConfigError } from '../../config.js';
import { type AnyBulkWriteOperation, type ClientSession, type Collection, type Db, MongoClient, MongoServerError } from 'mongodb';
import {
  type Checkpoint,
  CheckpointMovedError,
  checkedCollection,
  type DocumentChange,
  type FindQuery,
  type IndexSpec,
  indexFields,
  type ProjectorBatch,
  type ReadStore,
  type Scalar,
} from '../../ports/read-store.js';
import {
  checkpointWrite,
  classifyWriteErrors,
  collectionName,
  findFilter,
  findSort,
  firstMovedProjector,
  formatPosition,
  fromStoredDocument,
  guardedWrite,
  indexKeys,
  legacyIndexName,
  isDuplicateKey,
  guardMongo,
  NAMESPACE_NOT_FOUND,
  parsePosition,
  type StoredCheckpoint,
  type StoredDocument,
  toJsonDocument,
  whereFilter,
} from './mongo-mapping.js';

const CHECKPOINTS = 'checkpoints';
/** MongoDB's code for a dropIndex of an index that does not exist. */
const INDEX_NOT_FOUND = 27;

/** Thrown inside a transaction when guarded writes met newer documents: retried without them. */
class AlreadyAppliedInTransaction extends Error {
  constructor(readonly keys: string[]) {
    super(`${keys.length} document(s) already reflect a newer position`);
  }
}

function changeKey(collection: string, id: string): string {
  return `${collection}\u0000${id}`;
}

/**
 * Refuses a deployment that runs no transactions (a standalone `mongod`): a commit's documents
 * and checkpoint must land together, or a crash between them would fold the same events into
 * those documents a second time after the restart (the position guards cannot tell: the batch
 * that redoes them carries a later position). A replica set of one member is enough.
 */
export async function requireTransactions(db: Db): Promise<void> {
  const hello = await db.admin().command({ hello: 1 });
  if (typeof hello.setName === 'string' || hello.msg === 'isdbgrid') return;
  throw new ConfigError([
    'MONGODB_URL: this MongoDB server runs no transactions (a standalone mongod), and the read models need them. ' +
      'Run it as a replica set, even of one member (mongod --replSet rs0, then rs.initiate() once, as docker-compose.yml does), or use a sharded cluster.',
  ]);
}

/**
 * The ReadStore port on MongoDB. Every document carries the position it reflects and every
 * write is guarded by it, so a replayed or stale write is a no-op; the projector's checkpoint is
 * written after its documents and moves only from the batch's `after` (compare-and-set, else
 * CheckpointMovedError). A whole commit runs in one transaction (a replica set or a sharded
 * cluster is required), so a crash never leaves documents ahead of their checkpoint.
 */
export class MongoReadStore implements ReadStore {
  private constructor(
    private readonly client: MongoClient,
    private readonly db: Db,
  ) {}

  static async connect(url: string, database: string): Promise<MongoReadStore> {
    const explicitTimeout = /[?&]serverSelectionTimeoutMS=/i.test(url);
    const client = new MongoClient(url, { ignoreUndefined: true, ...(explicitTimeout ? {} : { serverSelectionTimeoutMS: 10_000 }) });
    return guardMongo(async () => {
      await client.connect();
      try {
        const db = client.db(database);
        await requireTransactions(db);
        await db.collection<StoredCheckpoint>(CHECKPOINTS).createIndex({ position: 1 }, { name: 'position_1' });
        return new MongoReadStore(client, db);
      } catch (error) {
        await client.close();
        throw error;
      }
    });
  }

  /** The database handle (for companions such as the projector lease). */
  get database(): Db {
    return this.db;
  }

  private documents(collection: string): Collection<StoredDocument> {
    return this.db.collection<StoredDocument>(collectionName(collection));
  }

  private get checkpoints(): Collection<StoredCheckpoint> {
    return this.db.collection<StoredCheckpoint>(CHECKPOINTS);
  }

  async ensureIndexes(collection: string, indexes: IndexSpec[]): Promise<void> {
    const target = this.documents(collection);
    await guardMongo(async () => {
      for (const index of indexes) {
        const fields = indexFields(index);
        for (const { name, key } of indexKeys(fields)) await target.createIndex(key, { name });
        // The index these replace could not serve a sort that ends with `_id`; it only costs writes now.
        await target.dropIndex(legacyIndexName(fields)).catch((error: unknown) => {
          if (!(error instanceof MongoServerError && (error.code === INDEX_NOT_FOUND || error.code === NAMESPACE_NOT_FOUND))) throw error;
        });
      }
    });
  }

  async get<T extends Record<string, unknown>>(collection: string, id: string): Promise<T | null> {
    const found = await guardMongo(() => this.documents(collection).findOne({ _id: id }, { projection: { doc: 1 } }));
    return found ? fromStoredDocument<T>(found.doc) : null;
  }

  async getMany<T extends Record<string, unknown>>(collection: string, ids: string[]): Promise<Map<string, T>> {
    const unique = [...new Set(ids)];
    const result = new Map<string, T>();
    if (unique.length === 0) return result;
    const found = await guardMongo(() =>
      this.documents(collection)
        .find({ _id: { $in: unique } }, { projection: { doc: 1 } })
        .toArray(),
    );
    for (const stored of found) result.set(stored._id, fromStoredDocument<T>(stored.doc));
    return result;
  }

  async find<T extends Record<string, unknown>>(collection: string, query: FindQuery = {}): Promise<T[]> {
    if (query.limit !== undefined && query.limit <= 0) return [];
    const filter = findFilter(query);
    const sort = findSort(query);
    const found = await guardMongo(() => {
      const cursor = this.documents(collection)
        .find(filter, { projection: { doc: 1 } })
        .sort(sort);
      if (query.limit !== undefined) cursor.limit(query.limit);
      return cursor.toArray();
    });
    return found.map((stored) => fromStoredDocument<T>(stored.doc));
  }

  async count(collection: string, where?: Record<string, Scalar>): Promise<number> {
    const filter = whereFilter(where);
    return guardMongo(() => this.documents(collection).countDocuments(filter));
  }

  async commitBatches(batches: ProjectorBatch[]): Promise<void> {
    if (batches.length === 0) return;
    // Every document and collection name is checked (documents normalised to JSON) before anything is written.
    const prepared = batches.map((batch) => ({
      ...batch,
      changes: batch.changes.map((change): DocumentChange => {
        checkedCollection(change.collection);
        return change.op === 'put' ? { ...change, doc: toJsonDocument(change.doc) } : change;
      }),
    }));
    await guardMongo(() => this.commitInTransaction(prepared));
  }

  /** The whole commit in one transaction: it lands completely or not at all. */
  private async commitInTransaction(batches: ProjectorBatch[]): Promise<void> {
    const skip = new Set<string>();
    const writes = batches.reduce((sum, batch) => sum + batch.changes.length, 0);
    // Each round either commits or learns at least one more already-applied document.
    for (let round = 0; round <= writes; round += 1) {
      try {
        await this.inTransaction(async (session) => {
          await this.verifyCheckpoints(batches, session);
          for (const batch of batches) await this.writeBatch(batch, session, skip);
        });
        return;
      } catch (error) {
        if (!(error instanceof AlreadyAppliedInTransaction)) throw error;
        for (const key of error.keys) skip.add(key);
      }
    }
    throw new Error('A read-model commit kept colliding with newer documents');
  }

  private async verifyCheckpoints(batches: ProjectorBatch[], session: ClientSession): Promise<void> {
    const projectors = [...new Set(batches.map((batch) => batch.projector))];
    const found = await this.checkpoints.find({ _id: { $in: projectors } }, { session }).toArray();
    const stored = new Map(
      found.map(
        (checkpoint) =>
          [checkpoint._id, { position: parsePosition(checkpoint.position), version: checkpoint.version, switching: checkpoint.switching }] as const,
      ),
    );
    const moved = firstMovedProjector(batches, stored);
    if (moved !== null) throw new CheckpointMovedError(moved);
  }

  /**
   * One batch: guarded document writes per collection, then the checkpoint (compare-and-set).
   * Duplicate keys on guarded writes mean a newer version is stored: they abort the transaction
   * (MongoDB aborts on any write error), and the caller retries without those documents. The
   * bulk is ordered so that it stops at that error and reports it: an unordered one goes on
   * sending its other commands (deletes, a split batch) into the aborted transaction, and their
   * NoSuchTransaction replaces the duplicate key in the error (no write errors left to read), so
   * the commit would be retried as transient, unchanged, until withTransaction's 120 s ran out.
   */
  private async writeBatch(batch: ProjectorBatch, session: ClientSession, skip: Set<string>): Promise<void> {
    // The last change to each document: a second guarded write of one document at the same
    // position would miss its filter and read as already applied.
    const byCollection = new Map<string, Map<string, DocumentChange>>();
    for (const change of batch.changes) {
      if (skip.has(changeKey(change.collection, change.id))) continue;
      const group = byCollection.get(change.collection) ?? new Map<string, DocumentChange>();
      group.delete(change.id);
      group.set(change.id, change);
      byCollection.set(change.collection, group);
    }
    for (const [collection, lastChanges] of byCollection) {
      const changes = [...lastChanges.values()];
      const writes: AnyBulkWriteOperation<StoredDocument>[] = changes.map((change) => guardedWrite(change, batch.position));
      try {
        await this.documents(collection).bulkWrite(writes, { ordered: true, session });
      } catch (error) {
        const verdict = classifyWriteErrors(error);
        if (verdict === null || !verdict.onlyAlreadyApplied) throw error;
        const keys = verdict.alreadyApplied.map((index) => changeKey(collection, changes[index]!.id));
        throw new AlreadyAppliedInTransaction(keys.length > 0 ? keys : changes.map((change) => changeKey(collection, change.id)));
      }
    }

    const { filter, update } = checkpointWrite(batch.projector, batch.after, batch.position, batch.version);
    try {
      await this.checkpoints.updateOne(filter, update, { upsert: true, session });
    } catch (error) {
      if (isDuplicateKey(error)) throw new CheckpointMovedError(batch.projector);
      throw error;
    }
  }

  async checkpoint(projector: string): Promise<Checkpoint> {
    const stored = await guardMongo(() => this.checkpoints.findOne({ _id: projector }));
    return { projector, position: parsePosition(stored?.position), version: stored?.version ?? 0, ...(stored?.switching ? { switching: true as const } : {}) };
  }

  /**
   * Puts rebuilt collections live, collection by collection (MongoDB renames are atomic per
   * collection but cannot run in a transaction), then hands `from`'s checkpoint to `projector`:
   * 1. the live indexes are built on the rebuilt collections (the slow part; nothing live changes);
   * 2. both checkpoints are marked `switching`, in one transaction: the live projector's commits
   *    fail from then on (it would fold onto documents already swapped in) and it waits;
   * 3. the renames;
   * 4. `projector`'s checkpoint becomes `from`'s, unmarked, and `from` goes, in one transaction.
   * Interrupted after 2, the next call (a replay run again finds `from` switching) finishes it:
   * a rebuilt collection that is gone was renamed already.
   */
  async swapIn(projector: string, from: string, version: number, collections: [live: string, rebuilt: string][]): Promise<void> {
    await guardMongo(async () => {
      const checkpoint = await this.checkpoints.findOne({ _id: from });
      if (!checkpoint) throw new Error(`No checkpoint ${from} to swap in`);
      const finishing = checkpoint.switching === true;
      const existing = new Set((await this.db.listCollections({}, { nameOnly: true }).toArray()).map((collection) => collection.name));
      if (!finishing) {
        for (const [live, rebuilt] of collections) {
          if (!existing.has(collectionName(live)) || !existing.has(collectionName(rebuilt))) continue;
          // Keep the live collection's indexes on the collection that replaces it.
          for (const index of await this.documents(live).listIndexes().toArray()) {
            if (index.name === '_id_') continue;
            await this.documents(rebuilt).createIndex(index.key as Record<string, 1 | -1>, { name: index.name as string });
          }
        }
        await this.inTransaction(async (session) => {
          await this.checkpoints.updateOne({ _id: projector }, { $set: { switching: true } }, { upsert: true, session });
          await this.checkpoints.updateOne({ _id: from }, { $set: { switching: true } }, { session });
        });
      }
      for (const [live, rebuilt] of collections) {
        const rebuiltName = collectionName(rebuilt);
        if (existing.has(rebuiltName)) await this.db.renameCollection(rebuiltName, collectionName(live), { dropTarget: true });
        // Nothing was ever written to the rebuilt collection: the live one becomes empty.
        else if (!finishing) await this.documents(live).deleteMany({});
      }
      await this.inTransaction(async (session) => {
        await this.checkpoints.updateOne(
          { _id: projector },
          { $set: { position: checkpoint.position, version }, $unset: { switching: '' } },
          { upsert: true, session },
        );
        await this.checkpoints.deleteOne({ _id: from }, { session });
      });
    });
  }

  private async inTransaction(work: (session: ClientSession) => Promise<void>): Promise<void> {
    const session = this.client.startSession();
    try {
      await session.withTransaction(() => work(session));
    } finally {
      await session.endSession();
    }
  }

  async reset(projector: string, collections: string[]): Promise<void> {
    await guardMongo(async () => {
      for (const collection of collections) await this.documents(collection).deleteMany({});
      await this.checkpoints.deleteOne({ _id: projector });
    });
  }

  async putAux(collection: string, id: string, doc: Record<string, unknown>): Promise<void> {
    const replacement = { position: formatPosition(0n), doc: toJsonDocument(doc) } as StoredDocument;
    await guardMongo(() => this.documents(collection).replaceOne({ _id: id }, replacement, { upsert: true }));
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
