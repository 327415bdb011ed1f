/**
 * Read models: JSON documents grouped in collections, plus one checkpoint per projector.
 * Documents and the checkpoint of one batch are written atomically (SQLite) or guarded
 * by the position they reflect so that a replayed batch is a no-op (MongoDB).
 */
export type Scalar = string | number | boolean | null;

/**
 * The collection and field names every read store accepts, so that a name one backend takes
 * the others take too: a SQLite table `rm_<collection>` and a `json_extract` path, a MongoDB
 * collection and a `doc.<field>` path.
 */
const COLLECTION_NAME = /^[A-Za-z0-9_]+$/;
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `collection`, or an Error when no read store accepts it. */
export function checkedCollection(collection: string): string {
  if (!COLLECTION_NAME.test(collection)) throw new Error(`Invalid collection name ${JSON.stringify(collection)}`);
  return collection;
}

/** `field` (a top-level document field), or an Error when no read store accepts it. */
export function checkedField(field: string): string {
  if (!FIELD_NAME.test(field)) throw new Error(`Invalid field name ${JSON.stringify(field)}`);
  return field;
}

/** One index: a top-level field, or several fields in order. */
export type IndexSpec = string | string[];

export function indexFields(index: IndexSpec): string[] {
  return typeof index === 'string' ? [index] : index;
}

export type DocumentChange = { op: 'put'; collection: string; id: string; doc: Record<string, unknown> } | { op: 'delete'; collection: string; id: string };

export interface FindQuery {
  /** Equality on top-level fields. */
  where?: Record<string, Scalar>;
  /** Range on one top-level field: field <= value (ISO dates compare as strings). */
  atMost?: { field: string; value: string | number };
  /** Range on one top-level field: field >= value (with atMost, on the same field: between both). */
  atLeast?: { field: string; value: string | number };
  orderBy?: { field: string; direction: 'asc' | 'desc' };
  /** Documents with id > afterId (id order) — for paging when no orderBy is given. */
  afterId?: string;
  limit?: number;
}

export interface ProjectorBatch {
  projector: string;
  /**
   * The version of the projection the stored documents were built by. A batch that continues a
   * checkpoint (`after` not null) lands only when the stored checkpoint has this version too: a
   * replay that switched in a read model of another version at the same position is not
   * continued as if nothing had changed (CheckpointMovedError).
   */
  version: number;
  /** Applied in order: of several changes to one document, the last one stands. */
  changes: DocumentChange[];
  /** Position of the last event the batch reflects: the projector's new checkpoint. */
  position: bigint;
  /**
   * The checkpoint this batch continues from. If the stored checkpoint is no longer this, or
   * no longer of `version` (another process projected, or a replay switched the read model),
   * nothing of the commit lands and CheckpointMovedError is thrown: the projector reloads and
   * folds again.
   */
  after: bigint | null;
}

export class CheckpointMovedError extends Error {
  constructor(readonly projector: string) {
    super(`The checkpoint of ${projector} moved under this projector; reload and retry`);
    this.name = 'CheckpointMovedError';
  }
}

export interface Checkpoint {
  projector: string;
  position: bigint | null;
  version: number;
  /**
   * A replay began switching rebuilt collections in under this checkpoint (live or `replay:`)
   * and has not finished: MongoDB only, whose swap renames collection by collection. A live
   * projector writes nothing to a switching read model and waits; a replay finishes the
   * switch before anything else (`swapIn` again).
   */
  switching?: true;
}

export interface ReadStore {
  /**
   * Declare what a collection is queried by, so adapters can index it: a field, or fields
   * together (equality on the first, order or range on the next: `['app_user_id', 'seq']`).
   * Makes the collection where a store has to (with no index: only that), so reads of a
   * collection still empty need not ask whether it exists.
   */
  ensureIndexes(collection: string, indexes: IndexSpec[]): Promise<void>;
  get<T extends Record<string, unknown>>(collection: string, id: string): Promise<T | null>;
  getMany<T extends Record<string, unknown>>(collection: string, ids: string[]): Promise<Map<string, T>>;
  find<T extends Record<string, unknown>>(collection: string, query?: FindQuery): Promise<T[]>;
  count(collection: string, where?: Record<string, Scalar>): Promise<number>;
  /**
   * Applies batches of projectors: each batch's changes (stamped with its `position`) and
   * that projector's new checkpoint, together. A batch never lands half-way; a batch whose
   * `after` is not the stored checkpoint throws CheckpointMovedError.
   */
  commitBatches(batches: ProjectorBatch[]): Promise<void>;
  checkpoint(projector: string): Promise<Checkpoint>;
  /**
   * Puts a rebuilt read model live: for each [live, rebuilt] pair the live collection's
   * documents are replaced by the rebuilt ones, and `projector`'s checkpoint (and version)
   * becomes `from`'s, which is removed. Atomic on SQLite. On MongoDB collection by collection:
   * both checkpoints are marked `switching` first (the live projector's commits fail and it
   * waits), and a second call with a `switching` `from` finishes an interrupted switch.
   */
  swapIn(projector: string, from: string, version: number, collections: [live: string, rebuilt: string][]): Promise<void>;
  /** Drops every document of the collections and the projector's checkpoint (replay from zero). */
  reset(projector: string, collections: string[]): Promise<void>;
  /** Side-channel key/value storage outside projections (snapshots, generated keys). */
  putAux(collection: string, id: string, doc: Record<string, unknown>): Promise<void>;
  close(): Promise<void>;
}
