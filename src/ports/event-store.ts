/**
 * The event log. Revisions follow the EventStoreDB convention on every backend:
 * the first event of a stream has revision 0; "no stream" is -1.
 */
export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | number;

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
}

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
}

export interface ReadStreamOptions {
  fromRevision?: number;
  direction?: 'forwards' | 'backwards';
  maxCount?: number;
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
  /** Position of the last event in the log, null when empty. */
  headPosition(): Promise<bigint | null>;
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
