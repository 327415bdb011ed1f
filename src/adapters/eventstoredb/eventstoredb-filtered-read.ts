import {
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type EventStoreDBClient,
  eventTypeFilter,
  type Filter,
  type Position,
  streamNameFilter,
} from '@eventstore/db-client';
import { type LogFilter, type RecordedEvent, StoreUnavailableError } from '../../ports/event-store.js';
import { matchesFilter, positionOf, serverFilterOf, toPortError, toReadPosition, toRecordedEvent } from './eventstoredb-mapping.js';

/** A filtered page that neither fills up nor reaches the head in this long is a failure, not an empty page. */
const STALL_LIMIT_MS = 60_000;

export interface FilteredPageRequest {
  after: bigint | null;
  limit: number;
  filter: LogFilter;
  /** Position of the last event when the read started: the page ends there at the latest. */
  head: bigint;
}

function serverFilter(filter: LogFilter, checkpointReached: (position: Position) => void): Filter {
  const wanted = serverFilterOf(filter);
  const common = { checkpointInterval: 1, checkpointReached: (_subscription: AllStreamSubscription, position: Position) => checkpointReached(position) };
  return wanted.on === 'stream' ? streamNameFilter({ prefixes: wanted.prefixes, ...common }) : eventTypeFilter({ regex: wanted.regex, ...common });
}

/**
 * One page of `$all` through a server-side filter: a catch-up subscription from `after`
 * (exclusive), stopped once the page is full or the log head has been passed. Checkpoints
 * (`checkpointReached`) carry the read through long stretches the filter skips, and
 * `caughtUp` ends it when the subscription turns live.
 */
export function readFilteredPage(client: EventStoreDBClient, request: FilteredPageRequest): Promise<RecordedEvent[]> {
  const { after, limit, filter, head } = request;
  if (limit <= 0 || (after !== null && after >= head)) return Promise.resolve([]);
  return new Promise((resolve, reject) => {
    const page: RecordedEvent[] = [];
    let finished = false;
    let subscription: AllStreamSubscription | null = null;
    const stall = setTimeout(
      () => finish(new StoreUnavailableError(`EventStoreDB filtered read did not reach position ${head} in ${STALL_LIMIT_MS} ms`)),
      STALL_LIMIT_MS,
    );
    stall.unref();

    function finish(error?: unknown): void {
      if (finished) return;
      finished = true;
      clearTimeout(stall);
      if (subscription !== null) void subscription.unsubscribe().catch(() => {});
      if (error === undefined) resolve(page);
      else reject(toPortError(error));
    }

    const passed = (position: bigint) => {
      if (position >= head) finish();
    };

    subscription = client.subscribeToAll({
      fromPosition: toReadPosition(after),
      filter: serverFilter(filter, (position) => passed(position.commit)),
    });
    subscription.on('data', (resolved: AllStreamResolvedEvent) => {
      if (finished) return;
      const position = positionOf(resolved);
      if (position === null || (after !== null && position <= after)) return;
      const event = toRecordedEvent(resolved);
      if (event !== null && matchesFilter(event, filter)) page.push(event);
      if (page.length >= limit) finish();
      else passed(position);
    });
    // Events already received may still be buffered in the stream: let them through first.
    subscription.on('caughtUp', () => setImmediate(() => finish()));
    subscription.on('end', () => setImmediate(() => finish()));
    subscription.on('error', (error) => finish(error));
  });
}
