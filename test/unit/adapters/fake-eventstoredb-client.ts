import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { Readable } from 'node:stream';
import {
  type AllStreamResolvedEvent,
  type AppendExpectedRevision,
  type EventStoreDBClient,
  type Filter,
  type ReadPosition,
  StreamNotFoundError,
  WrongExpectedVersionError,
} from '@eventstore/db-client';

/**
 * Just enough of `EventStoreDBClient` to exercise the adapter's own logic (paging, skipping
 * system events, exclusive positions, subscriptions) without a server. Positions grow in
 * steps of 100 like byte offsets in a transaction log.
 */
export interface FakeRecord {
  streamId: string;
  id: string;
  revision: bigint;
  type: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
  created: Date;
  position: bigint;
}

interface JsonEventData {
  id: string;
  type: string;
  data: unknown;
  metadata?: unknown;
}

export class FakeSubscription extends EventEmitter {
  unsubscribed = false;

  constructor(readonly options: { fromPosition?: ReadPosition; filter?: Filter }) {
    super();
  }

  async unsubscribe(): Promise<void> {
    this.unsubscribed = true;
  }

  /** Sends an event the way the client does ('data' with a resolved event). */
  deliver(record: FakeRecord): void {
    this.emit('data', toResolved(record));
  }

  async checkpoint(position: bigint): Promise<void> {
    await this.options.filter?.checkpointReached?.(this as never, { commit: position, prepare: position });
  }
}

function toResolved(record: FakeRecord): AllStreamResolvedEvent {
  return {
    event: {
      streamId: record.streamId,
      id: record.id,
      revision: record.revision,
      type: record.type,
      data: record.data,
      metadata: record.metadata,
      isJson: true,
      created: record.created,
      position: { commit: record.position, prepare: record.position },
    },
    commitPosition: record.position,
  } as AllStreamResolvedEvent;
}

export class FakeEventStoreDbClient {
  readonly log: FakeRecord[] = [];
  /** Events handed out by readStream, all calls together (what a read costs the server). */
  streamRecordsRead = 0;
  readonly subscriptions: FakeSubscription[] = [];
  readonly readAllCalls: { fromPosition: ReadPosition | undefined; maxCount: number; direction: string }[] = [];
  /** Thrown by the next call, once. */
  failNext: Error | null = null;
  disposed = false;
  private nextPosition = 100n;

  asClient(): EventStoreDBClient {
    return this as unknown as EventStoreDBClient;
  }

  /** Writes directly (system events included), bypassing expected revisions. */
  record(streamId: string, type: string, data: Record<string, unknown> = {}, id: string = randomUUID()): FakeRecord {
    const revision = BigInt(this.log.filter((record) => record.streamId === streamId).length);
    const record: FakeRecord = { streamId, id, revision, type, data, metadata: { actor: 'fake' }, created: new Date(0), position: this.nextPosition };
    this.nextPosition += 100n;
    this.log.push(record);
    return record;
  }

  /** Thrown by the next append after it has written (a server timeout whose write landed anyway). */
  failAfterAppend: Error | null = null;

  /** The connection string's `throwOnAppendFailure` (the client's default: true). */
  throwOnAppendFailure = true;

  private takeFailure(): void {
    const failure = this.failNext;
    this.failNext = null;
    if (failure) throw failure;
  }

  async appendToStream(streamId: string, events: JsonEventData[], options: { expectedRevision?: AppendExpectedRevision } = {}) {
    this.takeFailure();
    const existing = this.log.filter((record) => record.streamId === streamId);
    const current = existing.length === 0 ? ('no_stream' as const) : BigInt(existing.length - 1);
    const expected = options.expectedRevision ?? 'any';
    // Like the server: the same event ids right after the expected revision are an idempotent success, nothing written.
    const after = expected === 'no_stream' ? -1n : typeof expected === 'bigint' ? expected : null;
    const already =
      after === null ? [] : events.map((event, index) => existing.find((record) => record.id === event.id && record.revision === after + 1n + BigInt(index)));
    if (already.length > 0 && already.every((record) => record !== undefined)) {
      const last = already[already.length - 1]!;
      return { success: true, nextExpectedRevision: last.revision, position: { commit: already[0]!.position, prepare: already[0]!.position } };
    }
    const ok =
      expected === 'any' ||
      (expected === 'no_stream' && current === 'no_stream') ||
      (expected === 'stream_exists' && current !== 'no_stream') ||
      (typeof expected === 'bigint' && current === expected);
    if (!ok && !this.throwOnAppendFailure) {
      // As the real client with `throwOnAppendFailure=false` in the connection string: the conflict is answered, not thrown
      // (its nextExpectedRevision is the library's `BigInt(hasCurrentStreamRevision())`: 1n or -1n, not the stream's revision).
      return { success: false, nextExpectedRevision: current === 'no_stream' ? -1n : 1n, position: undefined };
    }
    if (!ok) throw new WrongExpectedVersionError(undefined, { streamName: streamId, expected, current });
    const written = events.map((event) => this.record(streamId, event.type, event.data as Record<string, unknown>, event.id));
    for (const record of written) record.metadata = (events.find((event) => event.id === record.id)?.metadata ?? {}) as Record<string, unknown>;
    const first = written[0]!;
    const lateFailure = this.failAfterAppend;
    this.failAfterAppend = null;
    if (lateFailure) throw lateFailure;
    // Like the server for a multi-event write: the position of the write, not of its last event.
    return { success: true, nextExpectedRevision: written[written.length - 1]!.revision, position: { commit: first.position, prepare: first.position } };
  }

  readStream(streamId: string, options: { fromRevision?: 'start' | 'end' | bigint; direction?: string; maxCount?: number | bigint } = {}) {
    const failure = this.failNext;
    this.failNext = null;
    const records = this.log.filter((record) => record.streamId === streamId);
    async function* read() {
      if (failure) throw failure;
      if (records.length === 0) throw new StreamNotFoundError(undefined, streamId);
      const backwards = options.direction === 'backwards';
      const from = options.fromRevision ?? (backwards ? 'end' : 'start');
      let selected = backwards ? [...records].reverse() : records;
      if (typeof from === 'bigint') selected = selected.filter((record) => (backwards ? record.revision <= from : record.revision >= from));
      const count = Number(options.maxCount ?? Number.MAX_SAFE_INTEGER);
      for (const record of selected.slice(0, count)) {
        counted.streamRecordsRead += 1;
        yield toResolved(record);
      }
    }
    const counted = this;
    return Readable.from(read());
  }

  readAll(options: { fromPosition?: ReadPosition; maxCount?: number | bigint; direction?: string } = {}) {
    this.takeFailure();
    const backwards = options.direction === 'backwards';
    const count = Number(options.maxCount ?? Number.MAX_SAFE_INTEGER);
    this.readAllCalls.push({ fromPosition: options.fromPosition, maxCount: count, direction: backwards ? 'backwards' : 'forwards' });
    const from = options.fromPosition ?? (backwards ? 'end' : 'start');
    let selected: FakeRecord[];
    if (backwards) {
      const reversed = [...this.log].reverse();
      selected = typeof from === 'object' ? reversed.filter((record) => record.position < from.commit) : reversed;
    } else {
      selected = typeof from === 'object' ? this.log.filter((record) => record.position >= from.commit) : this.log;
    }
    return Readable.from(selected.slice(0, count).map(toResolved));
  }

  subscribeToAll(options: { fromPosition?: ReadPosition; filter?: Filter } = {}) {
    const subscription = new FakeSubscription(options);
    this.subscriptions.push(subscription);
    return subscription;
  }

  async dispose(): Promise<void> {
    this.disposed = true;
  }
}
