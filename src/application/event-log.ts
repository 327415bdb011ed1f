import type { NewDomainEvent } from '../domain/decider.js';
import { type DomainEvent, parseEvent, SCHEMA_VERSION } from '../domain/events/index.js';
import { operationEventIdParts } from '../domain/idempotency.js';
import type { AppendResult, EventStore, ExpectedRevision, LogFilter, RecordedEvent } from '../ports/event-store.js';
import type { Ids } from '../ports/ids.js';
import { upcast } from './upcasters.js';

/** Who asked for a change and why: becomes every event's metadata. */
export interface CommandContext {
  /** The request id (or the id of the process run) the change belongs to. */
  correlation_id: string;
  /** The request or event that directly caused it. */
  causation_id: string;
  /** Which key or internal process acted: `client:<hash>`, `secret:<hash>`, `process:<name>`. */
  actor: string;
  operation_id?: string;
}

/** A recorded event whose data was validated (and upcast) against its schema. */
export type LoggedEvent = DomainEvent & Omit<RecordedEvent, 'type' | 'data'>;

export function toLogged(record: RecordedEvent): LoggedEvent {
  const version = Number(record.metadata.schema_version ?? 1);
  const event = parseEvent(record.type, upcast(record.type, version, record.data));
  return { ...record, ...event } as LoggedEvent;
}

/** The typed face of the event store: schemas checked on append and on read, metadata filled in. */
export class EventLog {
  constructor(
    readonly store: EventStore,
    private readonly ids: Ids,
  ) {}

  /** `context` is one for all events, or one per event (requests batched into one append). */
  async append(
    stream: string,
    events: NewDomainEvent[],
    expected: ExpectedRevision,
    contexts: CommandContext | readonly CommandContext[],
  ): Promise<AppendResult> {
    const prepared = events.map((event, index) => {
      const context = Array.isArray(contexts) ? (contexts as readonly CommandContext[])[index]! : (contexts as CommandContext);
      const { data } = parseEvent(event.type, event.data);
      const id = event.id ?? (context.operation_id ? this.ids.derived(...operationEventIdParts(stream, context.operation_id, index)) : this.ids.uuid());
      return {
        id,
        type: event.type,
        data: data as Record<string, unknown>,
        metadata: {
          correlation_id: context.correlation_id,
          causation_id: context.causation_id,
          actor: context.actor,
          schema_version: SCHEMA_VERSION,
          ...(context.operation_id ? { operation_id: context.operation_id } : {}),
        },
      };
    });
    return this.store.append(stream, prepared, expected);
  }

  async readStream(stream: string, fromRevision = 0): Promise<LoggedEvent[]> {
    return (await this.store.readStream(stream, { fromRevision })).map(toLogged);
  }

  async first(stream: string): Promise<LoggedEvent | undefined> {
    return (await this.store.readStream(stream, { maxCount: 1 })).map(toLogged)[0];
  }

  async last(stream: string): Promise<LoggedEvent | undefined> {
    return (await this.store.readStream(stream, { direction: 'backwards', maxCount: 1 })).map(toLogged)[0];
  }

  async readAll(after: bigint | null, limit: number, filter?: LogFilter): Promise<LoggedEvent[]> {
    return (await this.store.readAll({ after, limit, filter })).map(toLogged);
  }

  /**
   * A follower's page: the next events of `types` after `after`, and the position the log was
   * read through — past the events of other types too, so a checkpoint moves over what its
   * follower does not handle without anyone reading or decoding it. A full page was read through
   * its last event; a shorter one through the head as it stood before the read (every event up
   * to it was visible to the read) or its last event, whichever is later.
   */
  async readPage(after: bigint | null, limit: number, types: readonly string[]): Promise<LogPage> {
    const head = await this.store.headPosition();
    // No types: nothing to read (an empty filter would read every event).
    const events = types.length === 0 ? [] : await this.readAll(after, limit, { types: [...types] });
    const last = events.length > 0 ? events[events.length - 1]!.position : null;
    if (events.length === limit) return { events, through: last };
    return { events, through: latest(latest(after, head), last) };
  }
}

/** A page of the log for one follower (EventLog#readPage). */
export interface LogPage {
  events: LoggedEvent[];
  /** Every event up to here was considered (null: the log is empty). */
  through: bigint | null;
}

function latest(a: bigint | null, b: bigint | null): bigint | null {
  if (a === null) return b;
  return b !== null && b > a ? b : a;
}
