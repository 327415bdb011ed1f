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

/**
 * A filtered read that moves no further in this long is a failure, not an empty page. Measured
 * from its last progress (an event or a checkpoint past the last), not from its start: a sparse
 * filter over a long log (the webhook feed's first read, an export by a rare type) may take
 * longer than that in all, and is not stuck while the server's checkpoints move on.
 */
const STALL_LIMIT_MS = 60_000;

export interface FilteredPageRequest {
  after: bigint | null;
  limit: number;
  filter: LogFilter;
  /** Position of the last event when the read started: the page ends there at the latest. */
  head: bigint;
  /**
   * A follower's page (readPage): after this long, the page ends where the read has got to, with
   * what it found, rather than failing at STALL_LIMIT_MS. A stretch of the log the filter skips
   * may take longer than any one page to cross; each page moves the follower through part of it.
   */
  partialAfterMs?: number;
  /** STALL_LIMIT_MS unless a test sets it. */
  stallLimitMs?: number;
}

export interface FilteredPage {
  events: RecordedEvent[];
  /** The position the read passed: every event of the filter at or before it is in `events` (null: none passed). */
  through: bigint | null;
  /** Whether the read reached the head or filled the page (false: ended early, at `partialAfterMs`). */
  complete: boolean;
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
export function readFilteredPage(client: EventStoreDBClient, request: FilteredPageRequest): Promise<FilteredPage> {
  const { after, limit, filter, head, partialAfterMs, stallLimitMs = STALL_LIMIT_MS } = request;
  if (limit <= 0 || (after !== null && after >= head)) return Promise.resolve({ events: [], through: after, complete: true });
  return new Promise((resolve, reject) => {
    const page: RecordedEvent[] = [];
    let finished = false;
    let reached: bigint | null = after;
    let subscription: AllStreamSubscription | null = null;
    const stall = setTimeout(
      () =>
        finish(
          new StoreUnavailableError(`EventStoreDB filtered read moved no further than position ${reached ?? 'start'} in ${stallLimitMs} ms (head ${head})`),
        ),
      stallLimitMs,
    );
    stall.unref();
    // Events already received may still be buffered in the stream: let them through first.
    // Looked at again every `partialAfterMs` until the read has moved (or the stall limit ends it).
    let partial: NodeJS.Timeout | null = null;
    const watchProgress = () => {
      if (partialAfterMs === undefined) return;
      partial = setTimeout(() => {
        if (reached !== null && (after === null || reached > after)) setImmediate(() => finish(undefined, false));
        else watchProgress();
      }, partialAfterMs);
      partial.unref();
    };
    watchProgress();

    function finish(error?: unknown, complete = true): void {
      if (finished) return;
      finished = true;
      clearTimeout(stall);
      if (partial) clearTimeout(partial);
      if (subscription !== null) void subscription.unsubscribe().catch(() => {});
      if (error === undefined) resolve({ events: page, through: reached, complete });
      else reject(toPortError(error));
    }

    const passed = (position: bigint) => {
      if (reached === null || position > reached) {
        reached = position;
        stall.refresh();
      }
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
      if (page.length >= limit) {
        reached = position;
        finish();
      } else passed(position);
    });
    subscription.on('caughtUp', () => setImmediate(() => finish()));
    // A catch-up subscription never ends by itself: ended before the page did, the rest of the
    // page is unread, and taking it as complete would move a follower past events it never saw.
    subscription.on('end', () => setImmediate(() => finish(new StoreUnavailableError('EventStoreDB ended the subscription before the page was read'))));
    subscription.on('error', (error) => finish(error));
  });
}
