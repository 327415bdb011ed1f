import {
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  ForwardingEventStore,
  type NewEvent,
  WrongExpectedRevisionError,
} from '../ports/event-store.js';
import type { Metrics } from './metrics.js';

/** Counts appends and conflicts on any EventStore adapter. */
export class MeteredEventStore extends ForwardingEventStore {
  constructor(
    inner: EventStore,
    private readonly metrics: Metrics,
  ) {
    super(inner);
  }

  override async append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    try {
      const result = await this.inner.append(stream, events, expected);
      for (const event of events) this.metrics.eventsAppended.inc({ type: event.type });
      return result;
    } catch (error) {
      if (error instanceof WrongExpectedRevisionError) this.metrics.appendConflicts.inc();
      throw error;
    }
  }
}
