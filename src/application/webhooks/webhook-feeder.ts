import { streams } from '../../domain/events/index.js';
import type { WebhookEndpoint } from '../../domain/events/webhook-events.js';
import { setImmediate } from 'node:timers/promises';
import { MESSAGE_SOURCE_EVENTS, messageSourcesOf, toFulfilment, toWebhookMessage, type FulfilmentAction } from '../../domain/webhooks/message-catalogue.js';
import type { Clock } from '../../ports/clock.js';
import type { Ids } from '../../ports/ids.js';
import type { Logger } from '../../ports/logger.js';
import { FeedCheckpointMovedError, type NewOutboxMessage, type WebhookOutbox } from '../../ports/webhook-outbox.js';
import type { EventLog, LoggedEvent } from '../event-log.js';
import { LogFollower } from '../log-follower.js';

const PAGE_SIZE = 500;
/** The outbox feed's checkpoint name. */
export const WEBHOOK_FEED = 'webhooks';
/** The outbox "endpoint" of RevenueCat fulfilments (webhook ids cannot start with `_`). */
export const REVENUECAT_ENDPOINT = '_revenuecat';

/** The events that change which endpoints are subscribed. */
const SUBSCRIPTION_EVENTS = ['WebhookEndpointCreated', 'WebhookEndpointUpdated', 'WebhookEndpointDisabled', 'WebhookEndpointDeleted'] as const;
/** What the feeder reads: subscription changes, and the events a message or a fulfilment comes from. */
export const FED_EVENTS: readonly string[] = [...SUBSCRIPTION_EVENTS, ...MESSAGE_SOURCE_EVENTS];

/**
 * Which endpoints get which messages at this point of the log: folded from `webhook-*` events in
 * log order. `disabledAt`: where the delivery engine switched the endpoint off (410 Gone, failing
 * continuously), while it stays off; an operator's pause is null (what it misses is not made up for).
 */
export type Subscriptions = Map<string, Pick<WebhookEndpoint, 'enabled' | 'events'> & { disabledAt: bigint | null }>;

/**
 * Folds one event into the subscriptions. When the event switches back on an endpoint the
 * delivery engine switched off, returns it with the position of the disabling: it resumes where
 * it stopped, with the messages of the events after that position (the feed skipped them while
 * it was off).
 */
export function subscribe(subscriptions: Subscriptions, event: LoggedEvent): { id: string; disabledAt: bigint } | null {
  switch (event.type) {
    case 'WebhookEndpointCreated':
    case 'WebhookEndpointUpdated': {
      const { id, enabled, events } = event.data.webhook;
      const before = subscriptions.get(id);
      const stayedOff = before !== undefined && !before.enabled && !enabled;
      subscriptions.set(id, { enabled, events, disabledAt: stayedOff ? before.disabledAt : null });
      return before !== undefined && !before.enabled && enabled && before.disabledAt !== null ? { id, disabledAt: before.disabledAt } : null;
    }
    case 'WebhookEndpointDisabled': {
      const current = subscriptions.get(event.data.id);
      if (current?.enabled) subscriptions.set(event.data.id, { ...current, enabled: false, disabledAt: event.position });
      return null;
    }
    case 'WebhookEndpointDeleted':
      subscriptions.delete(event.data.id);
      return null;
    default:
      return null;
  }
}

/** Events read per page when queuing an endpoint's messages from a range of the log. */
const RANGE_PAGE = 1_000;

/**
 * The messages one endpoint gets, with its event filter, for the log's events after `after` up to
 * `until` (and recorded at or after `since`, when given): a page of the event types its messages
 * come from at a time, other requests taking their turn between pages (a range can span most of
 * the log).
 */
export async function* endpointMessagesBetween(
  log: EventLog,
  ids: Ids,
  endpoint: { id: string; events: readonly string[] | null },
  range: { after: bigint | null; until: bigint; since?: number },
  enqueuedAt: string,
): AsyncGenerator<NewOutboxMessage[]> {
  const types = messageSourcesOf(endpoint.events);
  if (types.length === 0) return;
  const subscribed: [string, Pick<WebhookEndpoint, 'enabled' | 'events'>][] = [
    [endpoint.id, { enabled: true, events: endpoint.events && [...endpoint.events] }],
  ];
  for (let after = range.after; after === null || after < range.until; ) {
    const page = await log.readAll(after, RANGE_PAGE, { types });
    const inRange = page.filter((event) => event.position <= range.until && (range.since === undefined || event.recordedAt.getTime() >= range.since));
    yield inRange.flatMap((event) => outboxMessagesFor(event, subscribed, ids, false, enqueuedAt));
    if (page.length < RANGE_PAGE) return;
    after = page[page.length - 1]!.position;
    await setImmediate();
  }
}

/** The outbox rows one logged event becomes, for the endpoints subscribed at its position. */
export function outboxMessagesFor(
  event: LoggedEvent,
  endpoints: Iterable<[string, Pick<WebhookEndpoint, 'enabled' | 'events'>]>,
  ids: Ids,
  fulfilment: boolean,
  enqueuedAt: string,
): NewOutboxMessage[] {
  const rows: NewOutboxMessage[] = [];
  const message = toWebhookMessage(event);
  if (message) {
    const payload = JSON.stringify(message);
    for (const [endpointId, endpoint] of endpoints) {
      if (!endpoint.enabled || (endpoint.events !== null && !endpoint.events.includes(message.type))) continue;
      rows.push({
        endpoint_id: endpointId,
        message_id: webhookMessageId(ids, endpointId, event.id),
        event_id: event.id,
        event_type: message.type,
        position: event.position,
        payload,
        enqueued_at: enqueuedAt,
      });
    }
  }
  const action: FulfilmentAction | null = fulfilment ? toFulfilment(event) : null;
  if (action) {
    rows.push({
      endpoint_id: REVENUECAT_ENDPOINT,
      message_id: webhookMessageId(ids, REVENUECAT_ENDPOINT, event.id),
      event_id: event.id,
      event_type: `entitlement.${action.action}`,
      position: event.position,
      payload: JSON.stringify(action),
      enqueued_at: enqueuedAt,
    });
  }
  return rows;
}

/** The `webhook-id`: UUIDv5 of endpoint id + event id, the same on every attempt and replay. */
function webhookMessageId(ids: Ids, endpointId: string, eventId: string): string {
  return ids.derived('webhook', endpointId, eventId);
}

/**
 * Feeds the outbox from the event log, in order, a page at a time: the page's messages and the
 * feed checkpoint land together, so nothing written is missed and nothing is fed twice. The
 * endpoints subscribed at each position come from the `webhook-*` events folded in the same
 * pass, so an endpoint receives exactly the events after its creation.
 */
export class WebhookFeeder extends LogFollower {
  private checkpoint: bigint | null = null;
  /** The unreadable event last logged (each is logged once). */
  private reportedUnreadable: string | null = null;
  private readonly subscriptions: Subscriptions = new Map();

  constructor(
    private readonly log: EventLog,
    private readonly outbox: WebhookOutbox,
    private readonly ids: Ids,
    private readonly clock: Clock,
    private readonly fulfilment: boolean,
    private readonly onFed: () => void,
    logger: Logger,
  ) {
    super(log.store, logger);
  }

  /**
   * A feed further than the log goes: the outbox was restored from a later backup than the log
   * (README, For operators). The events it fed past the head are not in this log, and those the
   * log appends next take their positions: they would be passed over, and their messages never
   * sent. The feed goes back to the head, said in a warning (messages already queued for the
   * events past it are still sent: those events did happen, before the log was restored).
   */
  private async rewindPastTheLog(): Promise<void> {
    if (this.checkpoint === null) return;
    const head = await this.log.store.headPosition();
    if (head === null || this.checkpoint <= head) return;
    this.logger.warn(
      { feed: this.checkpoint.toString(), head: head.toString() },
      'webhooks: the outbox was fed further than the log goes (restored from a later backup than the log); feeding again from the head of the log',
    );
    try {
      await this.outbox.feed(WEBHOOK_FEED, [], this.checkpoint, head);
    } catch (error) {
      if (!(error instanceof FeedCheckpointMovedError)) throw error;
    }
    this.checkpoint = await this.outbox.feedCheckpoint(WEBHOOK_FEED);
  }

  /**
   * Loads the checkpoint and the endpoint subscriptions as they stood there. The first start
   * begins at the head of the log: history written before outgoing deliveries existed is not
   * sent (or fulfilled at RevenueCat) by surprise; `replay` sends it on purpose.
   */
  async init(): Promise<void> {
    this.checkpoint = await this.outbox.feedCheckpoint(WEBHOOK_FEED);
    await this.rewindPastTheLog();
    if (this.checkpoint === null) {
      const head = await this.log.store.headPosition();
      if (head !== null) {
        try {
          await this.outbox.feed(WEBHOOK_FEED, [], null, head);
        } catch (error) {
          if (!(error instanceof FeedCheckpointMovedError)) throw error;
        }
        this.checkpoint = await this.outbox.feedCheckpoint(WEBHOOK_FEED);
      }
    }
    this.subscriptions.clear();
    if (this.checkpoint === null) return;
    let after: bigint | null = null;
    for (;;) {
      const page = await this.log.readAll(after, 1_000, { streamPrefixes: [streams.prefix('webhook')] });
      for (const event of page) if (event.position <= this.checkpoint) subscribe(this.subscriptions, event);
      if (page.length < 1_000 || page[page.length - 1]!.position >= this.checkpoint) break;
      after = page[page.length - 1]!.position;
    }
  }

  /**
   * Feeds one page. At an endpoint's creation, what is fed before it lands first, then the
   * messages still queued under its id are removed: they were a deleted predecessor's (the feed
   * runs behind the log, so it can add them after the DELETE cleared the queue). The checkpoint
   * stays before the creation until that is done, so a failure or a crash in between removes them
   * again; and no lane sends to the endpoint before the feed has passed its creation
   * (src/application/webhooks/delivery-engine.ts).
   */
  async processPage(): Promise<boolean> {
    const { events, through, more, unreadable } = await this.log.readPage(this.checkpoint, PAGE_SIZE, FED_EVENTS);
    // Held at an event its schema refuses (fed up to it): said once per event.
    if (unreadable && this.reportedUnreadable !== unreadable.event.id) {
      this.reportedUnreadable = unreadable.event.id;
      this.logger.error({ err: unreadable, eventId: unreadable.event.id }, 'the webhook feed is held at an event it cannot read');
    }
    if (through === null || through === this.checkpoint) return false;
    let rows: NewOutboxMessage[] = [];
    let fed = false;
    // Due at once, on the service clock (which drives every later attempt time).
    const now = this.clock.now().toISOString();
    try {
      let last = this.checkpoint;
      for (const event of events) {
        if (event.type === 'WebhookEndpointCreated') {
          if (last !== this.checkpoint) await this.feed(rows, last!);
          fed ||= rows.length > 0;
          rows = [];
          await this.outbox.removeEndpoint(event.data.webhook.id);
        }
        const resumed = subscribe(this.subscriptions, event);
        if (resumed !== null) {
          if (last !== this.checkpoint) await this.feed(rows, last!);
          fed ||= rows.length > 0;
          rows = [];
          fed = (await this.resume(resumed.id, resumed.disabledAt, event.position, now)) || fed;
        }
        rows.push(...outboxMessagesFor(event, this.subscriptions, this.ids, this.fulfilment, now));
        last = event.position;
      }
      await this.feed(rows, through);
      fed ||= rows.length > 0;
    } catch (error) {
      // The subscriptions already moved through this page: fold them again up to the checkpoint.
      await this.init();
      if (!(error instanceof FeedCheckpointMovedError)) throw error;
      return false;
    } finally {
      if (fed) this.onFed();
    }
    return more;
  }

  /**
   * An endpoint the delivery engine switched off, switched on again (README, Webhooks): the
   * message it stopped at is due at once, on a fresh retry schedule, the endpoint starts healthy
   * (not disabled again at its first failure), and the messages of the events since the disabling
   * are queued. The feed checkpoint stays before the switch until all of that is done, so a crash
   * midway does it again (a message queued twice is sent again: at least once). Says whether
   * anything was queued.
   */
  private async resume(id: string, disabledAt: bigint, enabledAt: bigint, now: string): Promise<boolean> {
    const head = await this.outbox.head(id);
    if (head) await this.outbox.redeliver(id, head.message_id, now);
    await this.outbox.setFailingSince(id, null);
    let queued = head !== null;
    const endpoint = { id, events: this.subscriptions.get(id)!.events };
    for await (const rows of endpointMessagesBetween(this.log, this.ids, endpoint, { after: disabledAt, until: enabledAt }, now)) {
      if (rows.length > 0) queued = (await this.outbox.requeue(rows, now)) > 0 || queued;
    }
    return queued;
  }

  private async feed(rows: NewOutboxMessage[], through: bigint): Promise<void> {
    await this.outbox.feed(WEBHOOK_FEED, rows, this.checkpoint, through);
    this.checkpoint = through;
  }
}
