import {
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  WrongExpectedRevisionError,
} from '../ports/event-store.js';
import type { Metrics } from './metrics.js';

/** Counts appends and conflicts on any EventStore adapter. */
export class MeteredEventStore implements EventStore {
  constructor(
    private readonly inner: EventStore,
    private readonly metrics: Metrics,
  ) {}

  async append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    try {
      const result = await this.inner.append(stream, events, expected);
      for (const event of events) this.metrics.eventsAppended.inc({ type: event.type });
      return result;
    } catch (error) {
      if (error instanceof WrongExpectedRevisionError) this.metrics.appendConflicts.inc();
      throw error;
    }
  }

  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.inner.readStream(stream, options);
  }

  readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.inner.readAll(options);
  }

  headPosition(): Promise<bigint | null> {
    return this.inner.headPosition();
  }

  watch(listener: () => void): () => void {
    return this.inner.watch(listener);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
