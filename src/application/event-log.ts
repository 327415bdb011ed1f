import { setImmediate } from 'node:timers/promises';
import type { NewDomainEvent } from '../domain/decider.js';
import { type DomainEvent, parseEvent, SCHEMA_VERSION } from '../domain/events/index.js';
import { type Operation, operationEventIdParts } from '../domain/idempotency.js';
import type { AppendResult, EventStore, ExpectedRevision, LogFilter, LogPage, RecordedEvent } from '../ports/event-store.js';
import type { Ids } from '../ports/ids.js';
import { upcastRecord } from './upcasters.js';

/** Events per page of readStreamPages. */
const STREAM_PAGE = 1_000;

/** Who asked for a change and why: becomes every event's metadata. */
export interface CommandContext {
  /** The request id (or the id of the process run) the change belongs to. */
  correlation_id: string;
  /** The request or event that directly caused it. */
  causation_id: string;
  /** Which key, provider or internal process acted: `client:<label>`, `secret:<label>` (src/http/auth.ts, keyLabel), `webhook:<provider>`, `process:<name>`. */
  actor: string;
  /** The operation id a withdrawal or manual grant carries (its events' ids derive from it). */
  operation?: Operation;
}

/** A recorded event whose data was validated (and upcast) against its schema. */
export type LoggedEvent = DomainEvent & Omit<RecordedEvent, 'type' | 'data'>;

export function toLogged(record: RecordedEvent): LoggedEvent {
  const event = parseEvent(record.type, upcastRecord(record));
  return { ...record, ...event } as LoggedEvent;
}

/**
 * An event of the log its schema refuses on read (written by hand, or by another version of the
 * service): the followers that read its type are held at it, and say so (/readyz), instead of
 * failing page after page.
 */
export class UnreadableEventError extends Error {
  constructor(
    readonly event: Pick<RecordedEvent, 'id' | 'position' | 'type'>,
    cause: unknown,
  ) {
    super(`The event ${event.id} (${event.type}) at position ${event.position} cannot be read: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.name = 'UnreadableEventError';
  }
}

/** A follower's page: validated events, and the event it stopped before when its schema refuses it. */
export interface FollowerPage extends LogPage<LoggedEvent> {
  unreadable: UnreadableEventError | null;
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
    // An operation's events are numbered from 0 within its own context, so a batch of commands gives each the ids it would have alone.
    const numbered = new Map<CommandContext, number>();
    const prepared = events.map((event, index) => {
      const context = Array.isArray(contexts) ? (contexts as readonly CommandContext[])[index]! : (contexts as CommandContext);
      const number = numbered.get(context) ?? 0;
      numbered.set(context, number + 1);
      const { data } = parseEvent(event.type, event.data);
      const id = event.id ?? (context.operation ? this.ids.derived(...operationEventIdParts(stream, context.operation, number)) : this.ids.uuid());
      return {
        id,
        type: event.type,
        data: data as Record<string, unknown>,
        metadata: {
          correlation_id: context.correlation_id,
          causation_id: context.causation_id,
          actor: context.actor,
          schema_version: SCHEMA_VERSION,
          ...(context.operation ? { operation_id: context.operation.id } : {}),
        },
      };
    });
    return this.store.append(stream, prepared, expected);
  }

  async readStream(stream: string, fromRevision = 0): Promise<LoggedEvent[]> {
    return (await this.store.readStream(stream, { fromRevision })).map(toLogged);
  }

  /**
   * A stream's events a page at a time, other requests taking their turn between pages: a
   * popular referrer's stream holds hundreds of thousands.
   */
  async *readStreamPages(stream: string, pageSize = STREAM_PAGE): AsyncGenerator<LoggedEvent[]> {
    for (let fromRevision = 0; ; ) {
      const page = (await this.store.readStream(stream, { fromRevision, maxCount: pageSize })).map(toLogged);
      if (page.length > 0) yield page;
      if (page.length < pageSize) return;
      fromRevision = page[page.length - 1]!.revision + 1;
      await setImmediate();
    }
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
   * A follower's page (EventStore#readPage), its events validated against their schemas. At an
   * event its schema refuses, the page stops with the events before it, `through` the last of them
   * (or `after`, if it was the first), and names it (`unreadable`): the follower applies those, and
   * is held there. `through` is always a position the store gave: EventStoreDB's positions are
   * byte offsets, and a read from any other number fails.
   */
  async readPage(after: bigint | null, limit: number, types: readonly string[]): Promise<FollowerPage> {
    const page = await this.store.readPage({ after, limit, types });
    const events: LoggedEvent[] = [];
    for (const record of page.events) {
      try {
        events.push(toLogged(record));
      } catch (error) {
        return { events, through: events.at(-1)?.position ?? after, more: false, unreadable: new UnreadableEventError(record, error) };
      }
    }
    return { ...page, events, unreadable: null };
  }
}
