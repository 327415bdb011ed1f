/**
 * Pure rules of the MongoDB read store: how positions, documents, queries and guarded writes
 * look in MongoDB, and what its errors mean for the port. No I/O, so each is unit-tested.
 *
 * Storage shape, one collection per read-model collection (`rm_<name>`):
 *   { _id: <document id>, position: <20-digit zero-padded decimal>, doc: { ...the document } }
 * Positions are EventStoreDB commit positions (up to 2^64): as fixed-width decimal strings they
 * keep their order in MongoDB's string comparison and never lose precision.
 */
import {
  type AnyBulkWriteOperation,
  type Filter,
  MongoBulkWriteError,
  MongoError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoServerClosedError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
  type Sort,
} from 'mongodb';
import { LOG_POSITION_TEXT, StoreUnavailableError } from '../../ports/event-store.js';
import { checkedCollection, checkedField, type DocumentChange, type FindQuery, type Scalar } from '../../ports/read-store.js';

export interface StoredDocument {
  _id: string;
  position: string;
  doc: Record<string, unknown>;
}

export interface StoredCheckpoint {
  _id: string;
  position: string | null;
  version: number;
  /** A replay is switching this read model in (ReadStore#swapIn): no projector commit lands. */
  switching?: true;
}

// ---------------------------------------------------------------------------------------------
// Positions

const POSITION_DIGITS = 20;
const MAX_POSITION = 2n ** 64n - 1n;

export function formatPosition(position: bigint): string {
  if (position < 0n || position > MAX_POSITION) throw new RangeError(`Position ${position} is outside 0…2^64-1`);
  return position.toString(10).padStart(POSITION_DIGITS, '0');
}

export function parsePosition(stored: string | null | undefined): bigint | null {
  if (stored === null || stored === undefined) return null;
  if (!LOG_POSITION_TEXT.test(stored)) throw new Error(`Stored position ${JSON.stringify(stored)} is not a decimal position`);
  return BigInt(stored);
}

// ---------------------------------------------------------------------------------------------
// Names

/** The MongoDB collection holding a read-model collection. */
export function collectionName(collection: string): string {
  return `rm_${checkedCollection(collection)}`;
}

/** A top-level document field as a path inside the stored wrapper. */
export function fieldPath(field: string): string {
  return `doc.${checkedField(field)}`;
}

/** The name an index had before it carried `_id` (dropped when found). */
export function legacyIndexName(fields: readonly string[]): string {
  return `doc_${fields.join('_')}_1`;
}

/**
 * The MongoDB indexes of a declared read-model index. Finds sort by the field and then by `_id`
 * ascending (findSort, the port's tie rule), so each index ends with `_id`, once with its last
 * field ascending and once descending: MongoDB then serves a sorted, limited find of either
 * direction from the index and stops at the limit, instead of sorting every matching document
 * in memory (whose cost would grow with the history, e.g. a user's expired entries).
 */
export function indexKeys(fields: readonly string[]): { name: string; key: Record<string, 1 | -1> }[] {
  const paths = fields.map(fieldPath);
  return ([1, -1] as const).map((last) => ({
    name: `doc_${fields.join('_')}_${last === 1 ? 'asc' : 'desc'}_id`,
    key: Object.fromEntries([...paths.map((path, index) => [path, index === paths.length - 1 ? last : 1] as const), ['_id', 1] as const]),
  }));
}

// ---------------------------------------------------------------------------------------------
// Documents

/**
 * BSON keys cannot hold U+0000, which JSON keys (an app's metadata) may: such keys are stored
 * with it escaped as U+E000 "0" (and U+E000 itself as U+E000 U+E000), and the document is marked
 * by a top-level key U+E000 alone, which no escaped key can be. Others are stored as they are.
 */
const ESCAPED_MARK = '\uE000';
const NUL = String.fromCharCode(0);

function escapeKeys(value: unknown, changed: { any: boolean }): unknown {
  if (Array.isArray(value)) return value.map((item) => escapeKeys(item, changed));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => {
      if (!key.includes(NUL) && !key.includes(ESCAPED_MARK)) return [key, escapeKeys(item, changed)];
      changed.any = true;
      return [
        [...key].map((char) => (char === NUL ? `${ESCAPED_MARK}0` : char === ESCAPED_MARK ? ESCAPED_MARK + ESCAPED_MARK : char)).join(''),
        escapeKeys(item, changed),
      ];
    }),
  );
}

function unescapeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unescapeKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key.replace(/\uE000(\uE000|0)/g, (_, char: string) => (char === '0' ? '\u0000' : '\uE000')),
      unescapeKeys(item),
    ]),
  );
}

/**
 * The document as JSON would store it (what the SQLite adapter keeps): dates become strings,
 * undefined disappears; keys BSON cannot hold escaped. Throws on what JSON cannot hold (cycles,
 * BigInt), before any write.
 */
export function toJsonDocument(doc: Record<string, unknown>): Record<string, unknown> {
  const text = JSON.stringify(doc);
  const parsed: unknown = JSON.parse(text);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new TypeError('A read-model document must be a JSON object');
  // JSON writes U+0000 as the escape \u0000; U+E000 as it is.
  if (!text.includes('\\u0000') && !text.includes(ESCAPED_MARK)) return parsed as Record<string, unknown>;
  const changed = { any: false };
  const escaped = escapeKeys(parsed, changed) as Record<string, unknown>;
  return changed.any ? { ...escaped, [ESCAPED_MARK]: 1 } : (parsed as Record<string, unknown>);
}

/** A stored document as it was given to `toJsonDocument`. */
export function fromStoredDocument<T>(doc: Record<string, unknown>): T {
  if (!(ESCAPED_MARK in doc)) return doc as T;
  const { [ESCAPED_MARK]: _mark, ...escaped } = doc;
  return unescapeKeys(escaped) as T;
}

// ---------------------------------------------------------------------------------------------
// Queries

function equality(where: Record<string, Scalar> = {}): Filter<StoredDocument>[] {
  // null matches null and missing fields, like SQL's json_extract(...) IS NULL.
  return Object.entries(where).map(([field, value]) => ({ [fieldPath(field)]: value }) as Filter<StoredDocument>);
}

function allOf(conditions: Filter<StoredDocument>[]): Filter<StoredDocument> {
  if (conditions.length === 0) return {};
  if (conditions.length === 1) return conditions[0]!;
  return { $and: conditions };
}

export function whereFilter(where?: Record<string, Scalar>): Filter<StoredDocument> {
  return allOf(equality(where));
}

export function findFilter(query: FindQuery): Filter<StoredDocument> {
  const conditions = equality(query.where);
  if (query.atMost) conditions.push({ [fieldPath(query.atMost.field)]: { $lte: query.atMost.value } } as Filter<StoredDocument>);
  if (query.atLeast) conditions.push({ [fieldPath(query.atLeast.field)]: { $gte: query.atLeast.value } } as Filter<StoredDocument>);
  if (query.afterId !== undefined) conditions.push({ _id: { $gt: query.afterId } });
  return allOf(conditions);
}

/** Ordered by the field (when asked), ties and the default by id. */
export function findSort(query: FindQuery): Sort {
  if (!query.orderBy) return [['_id', 1]];
  return [
    [fieldPath(query.orderBy.field), query.orderBy.direction === 'desc' ? -1 : 1],
    ['_id', 1],
  ];
}

// ---------------------------------------------------------------------------------------------
// Guarded writes

/**
 * A change as a write that only lands when the stored document reflects an older position.
 * When the stored one is as new or newer, the filter misses and the upsert's insert collides
 * on `_id`: the duplicate-key error means "already applied" (see `classifyWriteErrors`).
 */
export function guardedWrite(change: DocumentChange, position: bigint): AnyBulkWriteOperation<StoredDocument> {
  const stamped = formatPosition(position);
  const filter = { _id: change.id, position: { $lt: stamped } };
  if (change.op === 'delete') return { deleteOne: { filter } };
  return { replaceOne: { filter, replacement: { position: stamped, doc: change.doc } as StoredDocument, upsert: true } };
}

/**
 * The checkpoint moves only from `after` (the checkpoint the batch continues from, of the
 * batch's version) to `position`: compare-and-set. When it is elsewhere the filter misses and
 * the upsert's insert collides on `_id` — the checkpoint moved under this projector.
 */
export function checkpointWrite(projector: string, after: bigint | null, position: bigint, version: number) {
  return {
    filter: (after === null
      ? { _id: projector, position: null, switching: { $ne: true } }
      : { _id: projector, position: formatPosition(after), version, switching: { $ne: true } }) as Filter<StoredCheckpoint>,
    update: { $set: { position: formatPosition(position), version } },
  };
}

/**
 * Checks a commit's batches against the stored checkpoints, following chains (a second batch of
 * the same projector continues from the first). Returns the projector whose batch does not
 * continue from where its checkpoint stands (position, and version when it has one) or whose
 * read model a replay is switching in, or null when all do.
 */
export function firstMovedProjector(
  batches: { projector: string; after: bigint | null; position: bigint; version: number }[],
  stored: Map<string, { position: bigint | null; version: number; switching?: true }>,
): string | null {
  const current = new Map(stored);
  for (const batch of batches) {
    const checkpoint = current.get(batch.projector);
    if (checkpoint?.switching) return batch.projector;
    if ((checkpoint?.position ?? null) !== batch.after) return batch.projector;
    if (batch.after !== null && checkpoint?.version !== batch.version) return batch.projector;
    current.set(batch.projector, { position: batch.position, version: batch.version });
  }
  return null;
}

export const DUPLICATE_KEY = 11000;
/** MongoDB's code for an operation on a collection that does not exist (listing or dropping its indexes). */
export const NAMESPACE_NOT_FOUND = 26;

export interface WriteErrorsVerdict {
  /** Indexes (in the bulk) of the writes that lost to a newer stored document: already applied. */
  alreadyApplied: number[];
  /** True when every error was such a duplicate key; otherwise the failure is real. */
  onlyAlreadyApplied: boolean;
}

/** Reads a bulk write failure: duplicate keys on guarded upserts are not failures. */
export function classifyWriteErrors(error: unknown): WriteErrorsVerdict | null {
  if (error instanceof MongoBulkWriteError) {
    const errors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
    if (errors.length === 0) return { alreadyApplied: [], onlyAlreadyApplied: false };
    const duplicates = errors.filter((writeError) => writeError.code === DUPLICATE_KEY);
    return { alreadyApplied: duplicates.map((writeError) => writeError.index), onlyAlreadyApplied: duplicates.length === errors.length };
  }
  if (isDuplicateKey(error)) return { alreadyApplied: [], onlyAlreadyApplied: true };
  return null;
}

export function isDuplicateKey(error: unknown): boolean {
  return error instanceof MongoServerError && error.code === DUPLICATE_KEY;
}

// ---------------------------------------------------------------------------------------------
// Availability

const TRANSIENT_CODES = new Set([
  6, // HostUnreachable
  7, // HostNotFound
  89, // NetworkTimeout
  91, // ShutdownInProgress
  189, // PrimarySteppedDown
  262, // ExceededTimeLimit
  9001, // SocketException
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
  13436, // NotPrimaryOrSecondary
]);

/** Failures that mean "MongoDB is not reachable or has no primary right now". */
export function isTransientMongoError(error: unknown): boolean {
  if (
    error instanceof MongoNetworkError ||
    error instanceof MongoServerSelectionError ||
    error instanceof MongoNotConnectedError ||
    error instanceof MongoTopologyClosedError ||
    error instanceof MongoServerClosedError
  ) {
    return true;
  }
  if (!(error instanceof MongoError)) return false;
  if (error.hasErrorLabel('RetryableWriteError') || error.hasErrorLabel('TransientTransactionError')) return true;
  return typeof error.code === 'number' && TRANSIENT_CODES.has(error.code);
}

/** `work`, with MongoDB being unreachable (or without a primary) reported as the ports' StoreUnavailableError (503). */
export async function guardMongo<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isTransientMongoError(error)) {
      throw new StoreUnavailableError(`MongoDB unavailable: ${(error as Error).message}`, { cause: error });
    }
    throw error;
  }
}
