import {
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  jsonEvent,
  type ReadPosition,
  type ReadRevision,
  type ResolvedEvent,
  START,
  type StreamingRead,
} from '@eventstore/db-client';
import {
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type LogPage,
  type NewEvent,
  type PageOptions,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  readPageByScan,
  WrongExpectedRevisionError,
} from '../../ports/event-store.js';
import { readFilteredPage } from './eventstoredb-filtered-read.js';
import { EventStoreDbLogWatcher, type LogWatcherOptions } from './eventstoredb-log-watcher.js';
import {
  hasFilter,
  RECORDED_AT,
  toEsdbConnectionString,
  isStreamNotFound,
  isUnknownAppendOutcome,
  positionOf,
  toClientExpectedRevision,
  toPortError,
  toPortPosition,
  toReadPosition,
  toRecordedEvent,
} from './eventstoredb-mapping.js';

/** Events read per round trip when scanning `$all` past system events. */
const SCAN_BATCH = 256;
/** A follower's filtered page ends where it got to after this long (readPage). */
const PAGE_PARTIAL_AFTER_MS = 5_000;

async function collect<E>(read: StreamingRead<E>): Promise<E[]> {
  const items: E[] = [];
  for await (const item of read) items.push(item);
  return items;
}

/** The metadata stored with an event: EventStoreDB sets `created` itself, so a copied event's first recording time travels in it. */
function storedMetadata(event: NewEvent): Record<string, unknown> {
  return event.recordedAt ? { ...event.metadata, [RECORDED_AT]: event.recordedAt.toISOString() } : event.metadata;
}

function toEventData(event: NewEvent) {
  return jsonEvent({ id: event.id, type: event.type, data: event.data, metadata: storedMetadata(event) });
}

/**
 * The server answers an idempotent repeat as a write: the last event's metadata tells another
 * writer's events (the same ids, another request) from this append's own.
 */
function writtenByAnother(last: ResolvedEvent, events: NewEvent[]): boolean {
  return last.event !== undefined && JSON.stringify(last.event.metadata) !== JSON.stringify(storedMetadata(events[events.length - 1]!));
}

/**
 * The EventStore port on EventStoreDB (24.x / KurrentDB via `@eventstore/db-client`).
 * Revisions are EventStoreDB's own; positions are `$all` commit positions (64-bit).
 * Re-appending the same event ids at the same exact expected revision (or `no_stream`) is
 * answered by the server with the original result (its idempotency check, against its index),
 * so nothing is written twice. With `any` or `stream_exists` the server recognises a repeat
 * only from a bounded in-memory cache of recent commits: the service never appends that way.
 */
export class EventStoreDbEventStore implements EventStore {
  private readonly watcher: EventStoreDbLogWatcher;

  constructor(
    private readonly client: EventStoreDBClient,
    watcherOptions: LogWatcherOptions = {},
    private readonly pagePartialAfterMs = PAGE_PARTIAL_AFTER_MS,
  ) {
    this.watcher = new EventStoreDbLogWatcher(client, watcherOptions);
  }

  /** `esdb://host:2113?tls=false` (or `kurrentdb://…`, same syntax). */
  static connect(connectionString: string, watcherOptions: LogWatcherOptions = {}): EventStoreDbEventStore {
    return new EventStoreDbEventStore(EventStoreDBClient.connectionString(toEsdbConnectionString(connectionString)), watcherOptions);
  }

  async append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (events.length === 0) throw new Error('append needs at least one event');
    const expectedRevision = toClientExpectedRevision(expected);
    let appended: Awaited<ReturnType<EventStoreDBClient['appendToStream']>>;
    try {
      appended = await this.client.appendToStream(stream, events.map(toEventData), { expectedRevision });
    } catch (error) {
      const landed = isUnknownAppendOutcome(error) ? await this.landed(stream, events, expected) : null;
      if (landed) return landed;
      throw toPortError(error, { stream, expected });
    }
    // A connection string with `throwOnAppendFailure=false` makes the client answer a conflict
    // rather than throw it; its revision is then not the stream's (the client's own bug), so
    // the conflict is reported without one.
    if (!appended.success) throw new WrongExpectedRevisionError(stream, expected, -1);
    const nextExpectedRevision = Number(appended.nextExpectedRevision);
    const last = await this.recordedAt(stream, nextExpectedRevision);
    const position = (last ? positionOf(last) : null) ?? toPortPosition(appended.position);
    if (position === null) throw new Error(`EventStoreDB did not report a position for the append to ${stream}`);
    return { nextExpectedRevision, position, ...(last && writtenByAnother(last, events) ? { writtenByAnother: true as const } : {}) };
  }

  /**
   * After an append whose outcome is unknown: the append as written when its events stand where
   * they were to go, else null (the store is then reported unavailable, and a retry decides
   * again). Without this, a retry of a write that did land would decide it a second time.
   */
  private async landed(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult | null> {
    if (typeof expected !== 'number' && expected !== 'no_stream') return null;
    const first = expected === 'no_stream' ? 0 : expected + 1;
    const last = first + events.length - 1;
    const [written, lastWritten] = await Promise.all([this.recordedAt(stream, first), this.recordedAt(stream, last)]);
    const position = lastWritten ? positionOf(lastWritten) : null;
    if (written?.event?.id !== events[0]!.id || lastWritten?.event?.id !== events[events.length - 1]!.id || position === null) return null;
    return { nextExpectedRevision: last, position, ...(writtenByAnother(lastWritten, events) ? { writtenByAnother: true as const } : {}) };
  }

  /**
   * The lowest revision at or after `from` whose `$all` position is past `after` (positions grow
   * with revisions in a stream); null when none is.
   */
  private async firstRevisionAfter(stream: string, after: bigint, from: number): Promise<number | null> {
    const [last] = await collect(this.client.readStream(stream, { fromRevision: END, direction: BACKWARDS, maxCount: 1, requiresLeader: true }));
    if (last === undefined) return null;
    let high = Number(last.event!.revision);
    if (high < from || (positionOf(last) ?? -1n) <= after) return null;
    let low = from;
    while (low < high) {
      const middle = Math.floor((low + high) / 2);
      const [resolved] = await collect(
        this.client.readStream(stream, { fromRevision: BigInt(middle), direction: FORWARDS, maxCount: 1, requiresLeader: true }),
      );
      if (resolved !== undefined && (positionOf(resolved) ?? -1n) > after) high = middle;
      else low = middle + 1;
    }
    return low;
  }

  /**
   * One recorded event, read from the leader: the append response carries the position of the
   * write as a whole (for several events, not the last one's; for an idempotent repeat, not
   * always the original's), so the position is taken from the event. Null when it cannot be read
   * (then the append response is used).
   */
  private async recordedAt(stream: string, revision: number): Promise<ResolvedEvent | null> {
    try {
      const [resolved] = await collect(
        this.client.readStream(stream, { fromRevision: BigInt(revision), maxCount: 1, direction: FORWARDS, requiresLeader: true }),
      );
      return resolved ?? null;
    } catch {
      return null;
    }
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const backwards = options.direction === 'backwards';
    if (options.maxCount !== undefined && options.maxCount <= 0) return [];
    if (options.fromRevision !== undefined && (!Number.isSafeInteger(options.fromRevision) || options.fromRevision < 0)) {
      throw new RangeError(`fromRevision must be a non-negative integer, got ${options.fromRevision}`);
    }
    const after = backwards ? undefined : options.afterPosition;
    const before = backwards ? options.beforePosition : undefined;
    try {
      let fromRevision: ReadRevision = options.fromRevision === undefined ? (backwards ? END : START) : BigInt(options.fromRevision);
      if (after !== undefined) {
        // EventStoreDB has no per-stream seek by `$all` position: the first revision past it is
        // found by bisection, one event read per step, so a page costs log(stream) + its events.
        const first = await this.firstRevisionAfter(stream, after, options.fromRevision ?? 0);
        if (first === null) return [];
        fromRevision = BigInt(first);
      }
      if (before !== undefined) {
        // Backwards from the revision before the first one at or past `before` (the same bisection).
        const first = await this.firstRevisionAfter(stream, before - 1n, 0);
        if (first === 0) return [];
        if (first !== null) fromRevision = BigInt(Math.min(first - 1, options.fromRevision ?? Number.MAX_SAFE_INTEGER));
      }
      const resolved = await collect(
        this.client.readStream(stream, {
          fromRevision,
          direction: backwards ? BACKWARDS : FORWARDS,
          ...(options.maxCount === undefined ? {} : { maxCount: options.maxCount }),
          requiresLeader: true,
        }),
      );
      const events = resolved.map(toRecordedEvent).filter((event): event is RecordedEvent => event !== null);
      if (after !== undefined) return events.filter((event) => event.position > after);
      return before === undefined ? events : events.filter((event) => event.position < before);
    } catch (error) {
      if (isStreamNotFound(error)) return [];
      throw toPortError(error);
    }
  }

  async readAll({ after, limit, filter }: ReadAllOptions): Promise<RecordedEvent[]> {
    if (limit <= 0) return [];
    try {
      if (hasFilter(filter)) {
        const head = await this.headPosition();
        if (head === null) return [];
        return (await readFilteredPage(this.client, { after, limit, filter, head })).events;
      }
      return await this.readUnfilteredPage(after, limit);
    } catch (error) {
      throw toPortError(error);
    }
  }

  /**
   * The server filters `$all` by type in batches of its own, so a page costs no more than
   * `readAll`. A page that has not reached the head after PAGE_PARTIAL_AFTER_MS ends where the
   * read got to (`more`), so a follower whose types are rare moves through a long log page by
   * page, as SQLite's window does, instead of failing at the stall limit every time.
   */
  async readPage({ after, limit, types }: PageOptions): Promise<LogPage> {
    if (types.length === 0) return readPageByScan(this, { after, limit, types });
    try {
      const head = await this.headPosition();
      if (head === null || limit <= 0) return readPageByScan(this, { after, limit, types });
      const page = await readFilteredPage(this.client, { after, limit, filter: { types: [...types] }, head, partialAfterMs: this.pagePartialAfterMs });
      const last = page.events.length > 0 ? page.events[page.events.length - 1]!.position : null;
      if (page.events.length === limit) return { events: page.events, through: last, more: true };
      if (!page.complete) return { events: page.events, through: page.through, more: true };
      // An event appended after `head` was read can be in the page: the page ends past it then.
      const through = [after, head, last].reduce<bigint | null>(
        (latest, position) => (position !== null && (latest === null || position > latest) ? position : latest),
        null,
      );
      return { events: page.events, through, more: false };
    } catch (error) {
      throw toPortError(error);
    }
  }

  /** Reads `$all` forwards from `after` (exclusive), skipping system events, until `limit` events or the end. */
  private async readUnfilteredPage(after: bigint | null, limit: number): Promise<RecordedEvent[]> {
    const page: RecordedEvent[] = [];
    let cursor = after;
    for (;;) {
      // +1: a read from a position includes the event at that position, which was already seen.
      const wanted = Math.min(limit - page.length, SCAN_BATCH) + 1;
      const batch = await collect(this.client.readAll({ fromPosition: toReadPosition(cursor), maxCount: wanted, direction: FORWARDS }));
      let last: bigint | null = null;
      for (const resolved of batch) {
        const position = positionOf(resolved);
        if (position === null || (cursor !== null && position <= cursor)) continue;
        last = position;
        const event = toRecordedEvent(resolved);
        if (event !== null && page.length < limit) page.push(event);
      }
      if (page.length >= limit || batch.length < wanted || last === null) return page;
      cursor = last;
    }
  }

  async headPosition(): Promise<bigint | null> {
    try {
      let from: ReadPosition = END;
      let cursor: bigint | null = null;
      for (;;) {
        const batch = await collect(this.client.readAll({ fromPosition: from, maxCount: SCAN_BATCH, direction: BACKWARDS }));
        let last: bigint | null = null;
        for (const resolved of batch) {
          const position = positionOf(resolved);
          if (position === null || (cursor !== null && position >= cursor)) continue;
          last = position;
          const event = toRecordedEvent(resolved);
          if (event !== null) return event.position;
        }
        if (batch.length < SCAN_BATCH || last === null) return null;
        cursor = last;
        from = { commit: last, prepare: last };
      }
    } catch (error) {
      throw toPortError(error);
    }
  }

  watch(listener: () => void): () => void {
    return this.watcher.add(listener);
  }

  async close(): Promise<void> {
    this.watcher.close();
    await this.client.dispose();
  }
}
