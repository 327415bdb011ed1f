/**
 * Pure translations between the EventStore port and `@eventstore/db-client`: expected
 * revisions, client errors, positions, recorded events and filters. No I/O here, so every
 * rule is unit-tested without a server. (The successor client `@kurrent/kurrentdb-client`
 * differs mainly in names; this module is what changes when switching.)
 */
import {
  ANY,
  type AllStreamResolvedEvent,
  type AppendExpectedRevision,
  type CurrentRevision,
  ErrorType,
  isCommandError,
  NO_STREAM,
  type Position,
  type ReadPosition,
  type ResolvedEvent,
  START,
  STREAM_EXISTS,
} from '@eventstore/db-client';
import { isJsonObject } from '../../domain/json-object.js';
import {
  type EventMetadata,
  type ExpectedRevision,
  type LogFilter,
  type RecordedEvent,
  StoreUnavailableError,
  WrongExpectedRevisionError,
} from '../../ports/event-store.js';

// ---------------------------------------------------------------------------------------------
// Connection strings

/** `kurrentdb://` / `kdb://` (KurrentDB's names) as the `esdb://` this client parses; the rest is the same syntax. */
export function toEsdbConnectionString(connectionString: string): string {
  return connectionString.replace(/^(?:kurrentdb|kdb)(\+discover)?:\/\//, (_match, discover: string | undefined) => `esdb${discover ?? ''}://`);
}

// ---------------------------------------------------------------------------------------------
// Expected revisions

export function toClientExpectedRevision(expected: ExpectedRevision): AppendExpectedRevision {
  switch (expected) {
    case 'any':
      return ANY;
    case 'no_stream':
      return NO_STREAM;
    case 'stream_exists':
      return STREAM_EXISTS;
    default:
      if (!Number.isSafeInteger(expected) || expected < 0) {
        throw new RangeError(`Expected revision must be a non-negative integer, 'any', 'no_stream' or 'stream_exists'; got ${expected}`);
      }
      return BigInt(expected);
  }
}

export function fromClientExpectedRevision(expected: AppendExpectedRevision): ExpectedRevision {
  if (expected === ANY) return 'any';
  if (expected === NO_STREAM) return 'no_stream';
  if (expected === STREAM_EXISTS) return 'stream_exists';
  return Number(expected);
}

/** The client's current revision (`no_stream` or a bigint) as a port revision (-1 = no stream). */
export function fromCurrentRevision(current: CurrentRevision | undefined): number {
  if (current === undefined || current === NO_STREAM) return -1;
  return Number(current);
}

// ---------------------------------------------------------------------------------------------
// Errors

/** Client failures that mean "the store is not reachable right now" (worth a retry, 503 to clients). */
const TRANSIENT_ERROR_TYPES = new Set<string>([
  ErrorType.UNAVAILABLE,
  ErrorType.DEADLINE_EXCEEDED,
  ErrorType.TIMEOUT,
  ErrorType.NOT_LEADER,
  ErrorType.CANCELLED,
]);

/** gRPC status codes of the same kind, for errors the client did not convert. */
const TRANSIENT_GRPC_CODES = new Set([1 /* CANCELLED */, 4 /* DEADLINE_EXCEEDED */, 14 /* UNAVAILABLE */]);

const CONNECTION_MESSAGE =
  /failed to discover|econnrefused|econnreset|ehostunreach|enotfound|etimedout|no connection established|connection (dropped|closed)|channel has been shut down|client (was|has been) (closed|disposed)/i;

/**
 * A failure after which an append may still land: the server's own timeout (its prepares may be
 * in the log already and commit later, e.g. with followers behind), not a refusal.
 */
export function isUnknownAppendOutcome(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (isCommandError(error)) return error.type === ErrorType.TIMEOUT || error.type === ErrorType.DEADLINE_EXCEEDED;
  return (error as { code?: unknown }).code === 4;
}

export interface AppendContext {
  stream: string;
  expected: ExpectedRevision;
}

/**
 * A client error as the port's error: a revision conflict becomes WrongExpectedRevisionError,
 * a connection failure StoreUnavailableError; anything else is returned unchanged.
 */
export function toPortError(error: unknown, context?: AppendContext): unknown {
  if (!(error instanceof Error)) return error;
  if (isCommandError(error)) {
    if (error.type === ErrorType.WRONG_EXPECTED_VERSION) {
      return new WrongExpectedRevisionError(
        context?.stream ?? error.streamName,
        context?.expected ?? fromClientExpectedRevision(error.expectedVersion),
        fromCurrentRevision(error.actualVersion),
      );
    }
    if (TRANSIENT_ERROR_TYPES.has(error.type)) {
      return new StoreUnavailableError(`EventStoreDB unavailable: ${error.message || error.type}`, { cause: error });
    }
    return error;
  }
  const code = (error as { code?: unknown }).code;
  if ((typeof code === 'number' && TRANSIENT_GRPC_CODES.has(code)) || CONNECTION_MESSAGE.test(error.message)) {
    return new StoreUnavailableError(`EventStoreDB unavailable: ${error.message}`, { cause: error });
  }
  return error;
}

export function isStreamNotFound(error: unknown): boolean {
  return error instanceof Error && isCommandError(error) && error.type === ErrorType.STREAM_NOT_FOUND;
}

// ---------------------------------------------------------------------------------------------
// Positions

/** Reported by servers that do not know an event's $all position (stream reads before 22.6). */
export const UNKNOWN_COMMIT_POSITION = 2n ** 64n - 1n;

/** Where a read of $all starts for an exclusive `after`: the event at `after` itself is skipped by the caller. */
export function toReadPosition(after: bigint | null): ReadPosition {
  if (after === null) return START;
  if (after < 0n) throw new RangeError(`Position must not be negative, got ${after}`);
  return { commit: after, prepare: after };
}

/**
 * The port's position: the commit position. On EventStoreDB 20+ every event has its own log
 * position (commit = prepare), so it is unique and increases in commit order.
 */
export function toPortPosition(position: Position | undefined): bigint | null {
  if (position === undefined || position.commit === UNKNOWN_COMMIT_POSITION) return null;
  return position.commit;
}

/** Event-level position when present, else the $all commit position carried by the read. */
export function positionOf(resolved: ResolvedEvent | AllStreamResolvedEvent): bigint | null {
  const fromEvent = toPortPosition(resolved.event?.position);
  if (fromEvent !== null) return fromEvent;
  const commit = (resolved as { commitPosition?: bigint }).commitPosition;
  return commit === undefined || commit === UNKNOWN_COMMIT_POSITION ? null : commit;
}

// ---------------------------------------------------------------------------------------------
// Events

/** EventStoreDB's own events ($-prefixed types, $-prefixed streams): never part of our log. */
export function isSystemEvent(stream: string, type: string): boolean {
  return stream.startsWith('$') || type.startsWith('$');
}

function parseJsonObject(value: unknown): Record<string, unknown> {
  if (value instanceof Uint8Array) {
    if (value.length === 0) return {};
    try {
      return parseJsonObject(JSON.parse(Buffer.from(value).toString('utf8')));
    } catch {
      return {};
    }
  }
  if (typeof value === 'string') {
    try {
      return parseJsonObject(JSON.parse(value));
    } catch {
      return {};
    }
  }
  return isJsonObject(value) ? value : {};
}

/**
 * A client event as the port's RecordedEvent, or null for what the log does not expose
 * (system events, unresolved links). Position -1 marks one the server did not report
 * (stream reads on servers before 22.6).
 */
export function toRecordedEvent(resolved: ResolvedEvent | AllStreamResolvedEvent): RecordedEvent | null {
  const event = resolved.event;
  if (!event) return null;
  if (isSystemEvent(event.streamId, event.type)) return null;
  const { [RECORDED_AT]: copiedAt, ...metadata } = parseJsonObject(event.metadata);
  const firstRecorded = typeof copiedAt === 'string' ? new Date(copiedAt) : null;
  return {
    id: event.id,
    type: event.type,
    stream: event.streamId,
    revision: Number(event.revision),
    position: positionOf(resolved) ?? -1n,
    data: parseJsonObject(event.data),
    metadata: metadata as EventMetadata,
    recordedAt: firstRecorded && !Number.isNaN(firstRecorded.getTime()) ? firstRecorded : event.created,
  };
}

/**
 * The metadata key holding when a copied event was first recorded (NewEvent.recordedAt):
 * EventStoreDB sets `created` itself. Read back as `recordedAt`, and not shown in `metadata`.
 */
export const RECORDED_AT = '$recorded_at';

// ---------------------------------------------------------------------------------------------
// Filters

function escapeRegex(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A regex that matches exactly one of `values` (server-side event-type filter). */
export function exactMatchRegex(values: string[]): string {
  return `^(?:${values.map(escapeRegex).join('|')})$`;
}

/** Client-side check of the whole filter (the server applies only one kind). */
export function matchesFilter(event: Pick<RecordedEvent, 'stream' | 'type'>, filter: LogFilter | undefined): boolean {
  const prefixes = filter?.streamPrefixes ?? [];
  const types = filter?.types ?? [];
  if (prefixes.length > 0 && !prefixes.some((prefix) => event.stream.startsWith(prefix))) return false;
  if (types.length > 0 && !types.includes(event.type)) return false;
  return true;
}

export function hasFilter(filter: LogFilter | undefined): filter is LogFilter {
  return (filter?.streamPrefixes?.length ?? 0) > 0 || (filter?.types?.length ?? 0) > 0;
}

/** The single server-side filter to ask for: stream prefixes when given (more selective), else exact types. */
export function serverFilterOf(filter: LogFilter): { on: 'stream'; prefixes: string[] } | { on: 'type'; regex: string } {
  const prefixes = filter.streamPrefixes ?? [];
  if (prefixes.length > 0) return { on: 'stream', prefixes };
  return { on: 'type', regex: exactMatchRegex(filter.types ?? []) };
}

// ---------------------------------------------------------------------------------------------
// Re-subscription

/** Delay before re-subscription attempt `attempt` (1, 2, …): doubling from 100 ms, capped at 30 s, never giving up. */
export function resubscribeDelayMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(30_000, 100 * 2 ** Math.min(Math.max(attempt, 1) - 1, 20));
  // Up to 20 % jitter so many instances do not reconnect in lock-step.
  return Math.round(base * (1 - 0.2 * random()));
}
