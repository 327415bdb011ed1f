/**
 * The event log. Revisions follow the EventStoreDB convention on every backend:
 * the first event of a stream has revision 0; "no stream" is -1.
 */
export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | number;

/** Whether a stream at revision `current` (-1: none) is what an append expecting `expected` may write to. */
export function revisionMatches(expected: ExpectedRevision, current: number): boolean {
  if (expected === 'any') return true;
  if (expected === 'no_stream') return current === -1;
  if (expected === 'stream_exists') return current >= 0;
  return current === expected;
}

export interface EventMetadata {
  correlation_id: string;
  causation_id: string;
  actor: string;
  schema_version: number;
  operation_id?: string;
  [key: string]: unknown;
}

export interface NewEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
  metadata: EventMetadata;
  /**
   * When the event was first recorded, for a copy of it into another store (`npm run
   * migrate-events`), which keeps it as its `recordedAt`. New events leave it out: the store
   * records them at its own time.
   */
  recordedAt?: Date;
}

/** A log position written as text (a cursor, a stored position): decimal, 1 to 20 digits (2^64 − 1 has 20). */
export const LOG_POSITION_TEXT = /^[0-9]{1,20}$/;

export interface RecordedEvent extends NewEvent {
  stream: string;
  revision: number;
  /** Global commit position; strictly increasing in commit order. */
  position: bigint;
  recordedAt: Date;
  /**
   * Personal fields whose data key was destroyed (SPEC §13 erasure), as dotted paths into `data`;
   * they read as null. Absent when none. Set by the personal-data layer, never stored.
   */
  erased?: readonly string[];
  /**
   * Personal fields read in the clear, as the store holds them (encrypted under their owner's
   * data key), by dotted path into `data`. Absent when none. Set by the personal-data layer,
   * never stored: read models keep these instead of the clear values, so destroying the key
   * erases their copies too.
   */
  sealed?: Readonly<Record<string, { readonly $encrypted: string }>>;
}

/** A recorded event with data, metadata and time as the text the store holds (not parsed). */
export interface RecordedEventJson extends Omit<RecordedEvent, 'data' | 'metadata' | 'recordedAt'> {
  dataJson: string;
  metadataJson: string;
  /** `recordedAt` as ISO 8601 UTC with milliseconds (Date#toISOString). */
  recordedAtIso: string;
}

export interface AppendResult {
  /** Revision of the last event now in the stream. */
  nextExpectedRevision: number;
  /** Global position of the last appended event. */
  position: bigint;
  /**
   * True when nothing was written because the stream already held these events (the same ids,
   * right after the expected revision) appended by another writer: their metadata differs from
   * this append's (another request, another process). The answer then describes the other
   * writer's events. Absent for a fresh write and for an identical re-append (the same writer
   * trying again), which is the same write.
   */
  writtenByAnother?: true;
}

export interface ReadStreamOptions {
  fromRevision?: number;
  direction?: 'forwards' | 'backwards';
  maxCount?: number;
  /**
   * Forwards only: just the events after this log position (a page of one stream by position,
   * GET /admin/events?stream=). The embedded store starts at once after an event of the stream
   * itself (a previous page's `next_after`); others may read the stream from its start.
   */
  afterPosition?: bigint;
  /**
   * Backwards only: just the events before this log position (a page of one stream, newest
   * first, by position: GET /admin/events?stream=&order=desc). The embedded store starts at once
   * before an event of the stream itself (a previous page's `next_after`).
   */
  beforePosition?: bigint;
}

export interface LogFilter {
  streamPrefixes?: string[];
  types?: string[];
}

export interface ReadAllOptions {
  /** Exclusive: events strictly after this position. null = from the beginning. */
  after: bigint | null;
  limit: number;
  filter?: LogFilter;
}

/** A follower's page request (EventStore#readPage). */
export interface PageOptions {
  /** Exclusive: events strictly after this position. null = from the beginning. */
  after: bigint | null;
  limit: number;
  /** The event types the follower handles; none reads nothing. */
  types: readonly string[];
}

/** A page of the log for one follower. */
export interface LogPage<E = RecordedEvent> {
  /** Its events of the asked types, in commit order, all after `after` and up to `through`. */
  events: E[];
  /** Every event up to here was considered (null: the log is empty). */
  through: bigint | null;
  /** The page stopped before the head (it is full, or the store's scan window ended): read on at once. */
  more: boolean;
}

export interface EventStore {
  append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult>;
  /** Events of one stream; [] when the stream does not exist. */
  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /** One page of the global log in commit order. */
  readAll(options: ReadAllOptions): Promise<RecordedEvent[]>;
  /**
   * Optional: the same page as `readAll`, with data and metadata as stored JSON text, for
   * readers that pass events through without looking inside (the export). Stores that keep
   * events as JSON text offer it; the others are read with `readAll`.
   */
  readAllJson?(options: ReadAllOptions): Promise<RecordedEventJson[]>;
  /**
   * A follower's page: the next events of its types after `after`, and how far the log was read
   * (`through`), past the events of other types too, so a checkpoint moves over what its follower
   * does not handle without anyone reading or decoding it. A full page was read through its last
   * event. A store may also stop before `limit` events and before the head, to bound what one call
   * reads when the follower's types are rare; `through` then says where it stopped, and the next
   * page goes on from there. `readPageByScan` is the plain way to answer it.
   */
  readPage(options: PageOptions): Promise<LogPage>;
  /** Position of the last event in the log, null when empty. */
  headPosition(): Promise<bigint | null>;
  /**
   * Optional: why this store can no longer make an append durable, until the process restarts
   * (the embedded log's failed sync, or its file removed or replaced); null while appends work.
   * Readiness reports it. Stores whose every append reports its own failure leave it out.
   */
  writeFailure?(): Error | null;
  /**
   * Calls `listener` (without arguments) whenever new events may have been committed.
   * A hint only: readers must still read the log. Returns an unsubscribe function.
   */
  watch(listener: () => void): () => void;
  close(): Promise<void>;
}

export class WrongExpectedRevisionError extends Error {
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    readonly actual: number,
  ) {
    super(`Stream ${stream}: expected revision ${String(expected)}, actual ${actual}`);
    this.name = 'WrongExpectedRevisionError';
  }
}

/** The backing store could not be reached or answered with a transient failure. */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/**
 * An EventStore wrapped around another (metrics, encryption at rest): forwards every call, and a
 * subclass overrides what it adds to. `readAllJson` is not forwarded: a wrapper that keeps the
 * store's raw JSON reads must provide it itself.
 */
export class ForwardingEventStore implements EventStore {
  constructor(readonly inner: EventStore) {}

  append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    return this.inner.append(stream, events, expected);
  }

  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.inner.readStream(stream, options);
  }

  readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.inner.readAll(options);
  }

  readPage(options: PageOptions): Promise<LogPage> {
    return this.inner.readPage(options);
  }

  headPosition(): Promise<bigint | null> {
    return this.inner.headPosition();
  }

  writeFailure(): Error | null {
    return this.inner.writeFailure?.() ?? null;
  }

  watch(listener: () => void): () => void {
    return this.inner.watch(listener);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/**
 * EventStore#readPage through `readAll`: a full page was read through its last event; a shorter
 * one through the head as it stood before the read (every event up to it was visible to the read)
 * or its last event, whichever is later.
 */
export async function readPageByScan(store: Pick<EventStore, 'readAll' | 'headPosition'>, { after, limit, types }: PageOptions): Promise<LogPage> {
  const head = await store.headPosition();
  // No types: nothing to read (an empty filter would read every event).
  const events = types.length === 0 ? [] : await store.readAll({ after, limit, filter: { types: [...types] } });
  const last = events.length > 0 ? events[events.length - 1]!.position : null;
  if (events.length === limit) return { events, through: last, more: true };
  return { events, through: latest(latest(after, head), last), more: false };
}

function latest(a: bigint | null, b: bigint | null): bigint | null {
  if (a === null) return b;
  return b !== null && b > a ? b : a;
}
