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
  type RecordedEventJson,
  revisionMatches,
  WrongExpectedRevisionError,
  readPageByScan,
} from '../../ports/event-store.js';

/**
 * One stored event. Data and metadata are kept as JSON text, as the SQLite store keeps them:
 * every read parses a fresh copy, so no caller can change what was stored, and values that
 * JSON cannot hold are dropped or refused exactly as on the real backends.
 */
interface StoredEvent {
  id: string;
  stream: string;
  revision: number;
  type: string;
  dataJson: string;
  metadataJson: string;
  recordedAtIso: string;
}

/**
 * The event log in memory, for fast application tests: the EventStore contract
 * (test/contract/event-store.contract.ts) holds as on SQLite. Global position n is the n-th
 * event ever appended (1-based), so `log[position - 1]` is that event.
 */
export class MemoryEventStore implements EventStore {
  private readonly log: StoredEvent[] = [];
  /** stream → positions of its events, in revision order. */
  private readonly streams = new Map<string, bigint[]>();
  /** event id → its position. */
  private readonly positions = new Map<string, bigint>();
  private readonly listeners = new Set<() => void>();

  async append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (events.length === 0) throw new Error('append needs at least one event');
    const current = this.currentRevision(stream);
    const repeated = this.findRepeat(stream, events, expected);
    if (repeated) return repeated;
    if (!revisionMatches(expected, current)) throw new WrongExpectedRevisionError(stream, expected, current);
    const ids = new Set(events.map((event) => event.id));
    if (ids.size < events.length || events.some((event) => this.positions.has(event.id))) {
      throw new Error(`append to ${stream}: an event id is already in the log`);
    }
    // Serialise every event before storing any, so an event JSON cannot hold writes nothing.
    const recordedAtIso = new Date().toISOString();
    const stored = events.map(
      (event, index): StoredEvent => ({
        id: event.id,
        stream,
        revision: current + 1 + index,
        type: event.type,
        dataJson: JSON.stringify(event.data),
        metadataJson: JSON.stringify(event.metadata),
        recordedAtIso: event.recordedAt?.toISOString() ?? recordedAtIso,
      }),
    );
    const positions = this.streams.get(stream) ?? [];
    for (const event of stored) {
      this.log.push(event);
      const position = BigInt(this.log.length);
      positions.push(position);
      this.positions.set(event.id, position);
    }
    this.streams.set(stream, positions);
    this.notify();
    return { nextExpectedRevision: current + events.length, position: BigInt(this.log.length) };
  }

  private currentRevision(stream: string): number {
    return (this.streams.get(stream)?.length ?? 0) - 1;
  }

  /**
   * Idempotent re-append (as SqliteEventStore): when the same event ids were already written to
   * this stream right after the expected revision, answer with the original result.
   */
  private findRepeat(stream: string, events: NewEvent[], expected: ExpectedRevision): AppendResult | null {
    const firstPosition = this.positions.get(events[0]!.id);
    if (firstPosition === undefined) return null;
    const first = this.at(firstPosition);
    const positions = events.map((event) => this.positions.get(event.id));
    const consecutive = positions.every((position, index) => {
      const event = position === undefined ? undefined : this.at(position);
      return event !== undefined && event.stream === stream && event.revision === first.revision + index;
    });
    const startsWhereExpected = revisionMatches(expected, first.revision - 1);
    if (!consecutive || !startsWhereExpected) throw new WrongExpectedRevisionError(stream, expected, this.currentRevision(stream));
    const last = positions[positions.length - 1]!;
    const byAnother = positions.some((position, index) => this.at(position!).metadataJson !== JSON.stringify(events[index]!.metadata));
    return { nextExpectedRevision: this.at(last).revision, position: last, ...(byAnother ? { writtenByAnother: true as const } : {}) };
  }

  private at(position: bigint): StoredEvent {
    return this.log[Number(position) - 1]!;
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const positions = this.streams.get(stream) ?? [];
    const count = options.maxCount ?? Number.POSITIVE_INFINITY;
    let selected: bigint[];
    if (options.direction === 'backwards') {
      const before = options.beforePosition;
      const from = Math.min(options.fromRevision ?? positions.length - 1, positions.length - 1);
      // Positions rise with revisions: the events before `before` are a prefix of the stream.
      const firstNotBefore = before === undefined ? -1 : positions.findIndex((position) => position >= before);
      const end = firstNotBefore === -1 ? from + 1 : Math.min(from + 1, firstNotBefore);
      selected = positions.slice(Math.max(0, end - count), end).reverse();
    } else {
      const from = Math.max(0, options.fromRevision ?? 0);
      const after = options.afterPosition;
      selected = (after === undefined ? positions.slice(from) : positions.slice(from).filter((position) => position > after)).slice(0, count);
    }
    return selected.map((position) => this.recorded(position));
  }

  async readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.page(options).map((position) => this.recorded(position));
  }

  async readAllJson(options: ReadAllOptions): Promise<RecordedEventJson[]> {
    return this.page(options).map((position) => {
      const { stream, revision, id, type, dataJson, metadataJson, recordedAtIso } = this.at(position);
      return { position, id, stream, revision, type, dataJson, metadataJson, recordedAtIso };
    });
  }

  readPage(options: PageOptions): Promise<LogPage> {
    return readPageByScan(this, options);
  }

  /** Positions of the events of one readAll page. */
  private page({ after, limit, filter }: ReadAllOptions): bigint[] {
    const prefixes = filter?.streamPrefixes ?? [];
    const types = filter?.types ?? [];
    const positions: bigint[] = [];
    for (let index = after === null ? 0 : Number(after); index < this.log.length && positions.length < limit; index += 1) {
      const event = this.log[index]!;
      if (prefixes.length > 0 && !prefixes.some((prefix) => event.stream.startsWith(prefix))) continue;
      if (types.length > 0 && !types.includes(event.type)) continue;
      positions.push(BigInt(index + 1));
    }
    return positions;
  }

  private recorded(position: bigint): RecordedEvent {
    const { id, stream, revision, type, dataJson, metadataJson, recordedAtIso } = this.at(position);
    return {
      id,
      stream,
      revision,
      position,
      type,
      data: JSON.parse(dataJson) as RecordedEvent['data'],
      metadata: JSON.parse(metadataJson) as RecordedEvent['metadata'],
      recordedAt: new Date(recordedAtIso),
    };
  }

  async headPosition(): Promise<bigint | null> {
    return this.log.length === 0 ? null : BigInt(this.log.length);
  }

  /** Listeners are called in a microtask after the append has stored its events, never inside it. */
  watch(listener: () => void): () => void {
    const subscription = () => listener();
    this.listeners.add(subscription);
    return () => this.listeners.delete(subscription);
  }

  private notify(): void {
    for (const listener of this.listeners) queueMicrotask(listener);
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }
}
