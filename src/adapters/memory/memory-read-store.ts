import {
  type Checkpoint,
  CheckpointMovedError,
  checkedCollection,
  checkedField,
  type FindQuery,
  type IndexSpec,
  type ProjectorBatch,
  type ReadStore,
  type Scalar,
} from '../../ports/read-store.js';

type Doc = Record<string, unknown>;

/** Collection → document id → the document as JSON text (a fresh copy on every read). */
type Collections = Map<string, Map<string, string>>;

interface StoredCheckpoint {
  position: bigint;
  version: number;
}

/** A top-level field as SQLite's json_extract sees it: missing is null, booleans are 1 and 0. */
function fieldOf(doc: Doc, field: string): Scalar | object {
  const value = doc[checkedField(field)];
  if (value === undefined) return null;
  if (typeof value === 'boolean') return Number(value);
  return value as Scalar | object;
}

/** SQLite's order of values: null, then numbers, then text (then anything else). */
function rank(value: unknown): number {
  if (value === null) return 0;
  if (typeof value === 'number') return 1;
  if (typeof value === 'string') return 2;
  return 3;
}

function compare(a: unknown, b: unknown): number {
  const byRank = rank(a) - rank(b);
  if (byRank !== 0 || rank(a) === 0 || rank(a) === 3) return byRank;
  return (a as number | string) < (b as number | string) ? -1 : (a as number | string) > (b as number | string) ? 1 : 0;
}

function matches(doc: Doc, where: Record<string, Scalar>): boolean {
  return Object.entries(where).every(([field, value]) => fieldOf(doc, field) === (typeof value === 'boolean' ? Number(value) : value));
}

/**
 * Read models in memory, for fast application tests: the ReadStore contract
 * (test/contract/read-store.contract.ts) holds as on SQLite, queries compare as SQLite does
 * (missing fields are null, nulls sort first). Documents are kept as JSON text, so callers
 * never share an object with the store.
 */
export class MemoryReadStore implements ReadStore {
  private readonly collections: Collections = new Map();
  private readonly checkpoints = new Map<string, StoredCheckpoint>();

  /** Indexes change no answer here: only the names are checked. */
  async ensureIndexes(collection: string, indexes: IndexSpec[]): Promise<void> {
    checkedCollection(collection);
    for (const index of indexes) for (const field of typeof index === 'string' ? [index] : index) checkedField(field);
  }

  async get<T extends Doc>(collection: string, id: string): Promise<T | null> {
    const json = this.collections.get(checkedCollection(collection))?.get(id);
    return json === undefined ? null : (JSON.parse(json) as T);
  }

  async getMany<T extends Doc>(collection: string, ids: string[]): Promise<Map<string, T>> {
    const found = new Map<string, T>();
    for (const id of new Set(ids)) {
      const doc = await this.get<T>(collection, id);
      if (doc !== null) found.set(id, doc);
    }
    return found;
  }

  async find<T extends Doc>(collection: string, query: FindQuery = {}): Promise<T[]> {
    const { where = {}, atMost, atLeast, orderBy, afterId, limit } = query;
    // Names are checked on every call, as SQLite checks them building its query, whatever the collection holds.
    for (const field of [...Object.keys(where), atMost?.field, atLeast?.field, orderBy?.field]) if (field !== undefined) checkedField(field);
    const docs = this.all(collection).filter(
      ([id, doc]) =>
        matches(doc, where) &&
        (atMost === undefined || (fieldOf(doc, atMost.field) !== null && compare(fieldOf(doc, atMost.field), atMost.value) <= 0)) &&
        (atLeast === undefined || (fieldOf(doc, atLeast.field) !== null && compare(fieldOf(doc, atLeast.field), atLeast.value) >= 0)) &&
        (afterId === undefined || id > afterId),
    );
    if (orderBy) {
      const direction = orderBy.direction === 'desc' ? -1 : 1;
      // Stable sort over documents already in id order: ties stay in id order.
      docs.sort(([, a], [, b]) => direction * compare(fieldOf(a, orderBy.field), fieldOf(b, orderBy.field)));
    }
    return docs.slice(0, limit ?? docs.length).map(([, doc]) => doc as T);
  }

  async count(collection: string, where: Record<string, Scalar> = {}): Promise<number> {
    for (const field of Object.keys(where)) checkedField(field);
    return this.all(collection).filter(([, doc]) => matches(doc, where)).length;
  }

  /** Every document of a collection, parsed, in id order. */
  private all(collection: string): [string, Doc][] {
    const documents = this.collections.get(checkedCollection(collection)) ?? new Map<string, string>();
    return [...documents.keys()].sort().map((id) => [id, JSON.parse(documents.get(id)!) as Doc]);
  }

  /**
   * Checks and serialises the whole call before changing anything: a batch that does not
   * continue from its checkpoint, or a document JSON cannot hold, lands nothing of the call.
   */
  async commitBatches(batches: ProjectorBatch[]): Promise<void> {
    const checkpoints = new Map(this.checkpoints);
    const writes: { collection: string; id: string; json: string | null }[] = [];
    for (const { projector, version, changes, position, after } of batches) {
      const stored = checkpoints.get(projector);
      if ((stored?.position ?? null) !== after || (after !== null && stored?.version !== version)) throw new CheckpointMovedError(projector);
      for (const change of changes) {
        checkedCollection(change.collection);
        writes.push({ collection: change.collection, id: change.id, json: change.op === 'put' ? JSON.stringify(change.doc) : null });
      }
      checkpoints.set(projector, { position, version });
    }
    for (const { collection, id, json } of writes) {
      if (json === null) this.collections.get(collection)?.delete(id);
      else this.documents(collection).set(id, json);
    }
    for (const [projector, checkpoint] of checkpoints) this.checkpoints.set(projector, checkpoint);
  }

  private documents(collection: string): Map<string, string> {
    let documents = this.collections.get(collection);
    if (!documents) {
      documents = new Map();
      this.collections.set(checkedCollection(collection), documents);
    }
    return documents;
  }

  async checkpoint(projector: string): Promise<Checkpoint> {
    const stored = this.checkpoints.get(projector);
    return { projector, position: stored?.position ?? null, version: stored?.version ?? 0 };
  }

  async swapIn(projector: string, from: string, version: number, collections: [live: string, rebuilt: string][]): Promise<void> {
    const rebuilt = this.checkpoints.get(from);
    if (!rebuilt) throw new Error(`No checkpoint ${from} to swap in`);
    for (const [live, next] of collections) {
      this.collections.set(checkedCollection(live), this.documents(next));
      this.collections.set(next, new Map());
    }
    this.checkpoints.set(projector, { position: rebuilt.position, version });
    this.checkpoints.delete(from);
  }

  async reset(projector: string, collections: string[]): Promise<void> {
    for (const collection of collections) this.collections.get(collection)?.clear();
    this.checkpoints.delete(projector);
  }

  async putAux(collection: string, id: string, doc: Doc): Promise<void> {
    this.documents(collection).set(id, JSON.stringify(doc));
  }

  async close(): Promise<void> {}
}
