import { inject, injectable } from 'tsyringe';
import { type WebhookDoc, WEBHOOKS } from '../../../projections/webhooks.js';
import type { Config } from '../../config.js';
import { DomainError } from '../../domain/domain-error.js';
import { streams } from '../../domain/events/index.js';
import type { WebhookEndpoint } from '../../domain/events/webhook-events.js';
import {
  type AttemptedEndpoint,
  decideDefineWebhook,
  decideDeleteWebhook,
  decideDisableWebhook,
  decideRotateSecret,
  signingSecrets,
  webhookEndpointEvolver,
  type WebhookEndpointInput,
} from '../../domain/webhooks/webhook-endpoint.js';
import type { Clock } from '../../ports/clock.js';
import type { Ids } from '../../ports/ids.js';
import { ReadModelsBehindError } from '../../ports/read-consistency.js';
import type { ReadStore } from '../../ports/read-store.js';
import { TOKENS } from '../../ports/tokens.js';
import type { DeliveryStatus, OutboxMessage, WebhookOutbox } from '../../ports/webhook-outbox.js';
import { EventLog, type CommandContext } from '../event-log.js';
import { CommandExecutor } from '../command-executor.js';
import { StreamExecutor } from '../stream-executor.js';
import { postWithTimeout } from './http-post.js';
import { endpointMessagesBetween, REVENUECAT_ENDPOINT, WEBHOOK_FEED } from './webhook-feeder.js';
import { checkWebhookUrl, deliveryLookup } from './webhook-url-policy.js';
import { generateWebhookSecret, signWebhook } from './webhook-signing.js';

/** How long a replay waits for the outbox feed to pass the endpoint's creation, and how often it looks. */
const FEED_WAIT_MS = 5_000;
const FEED_POLL_MS = 50;

/** A delivery as the admin API lists it (SPEC §12). */
function deliveryView(message: OutboxMessage) {
  return {
    message_id: message.message_id,
    event_type: message.event_type,
    position: message.position.toString(),
    status: message.status,
    attempts: message.attempts,
    last_status_code: message.last_status_code,
    last_error: message.last_error,
    last_latency_ms: message.last_latency_ms,
    next_attempt_at: message.status === 'pending' || message.status === 'failed' ? message.next_attempt_at : null,
    delivered_at: message.delivered_at,
  };
}

/** The admin API of outgoing webhooks: endpoint configuration (event-sourced), deliveries, replay. */
@injectable()
export class WebhookAdmin {
  constructor(
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(CommandExecutor) private readonly commands: CommandExecutor,
    @inject(EventLog) private readonly log: EventLog,
    @inject(TOKENS.ReadStore) private readonly readStore: ReadStore,
    @inject(TOKENS.WebhookOutbox) private readonly outbox: WebhookOutbox,
    @inject(TOKENS.Config) private readonly config: Config,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Ids) private readonly ids: Ids,
  ) {}

  /**
   * PUT /admin/webhooks/{id}. Re-enabling an endpoint the delivery engine disabled resumes where
   * it stopped, with the messages of the events since the disabling: the outbox feed queues them
   * when it reaches the change (WebhookFeeder#resume), so a crash cannot lose them.
   */
  async define(input: WebhookEndpointInput, given: { events: boolean; description: boolean; enabled: boolean }, context: CommandContext) {
    await checkWebhookUrl(input.url, this.config);
    const executed = await this.commands.execute(
      streams.webhook(input.id),
      webhookEndpointEvolver,
      (state) => decideDefineWebhook(state, input, given, generateWebhookSecret(), this.clock.now()),
      context,
    );
    return executed.result;
  }

  async rotateSecret(id: string, overlapSeconds: number, context: CommandContext): Promise<{ webhook: WebhookEndpoint; secret: string }> {
    const executed = await this.commands.execute(
      streams.webhook(id),
      webhookEndpointEvolver,
      (state) => decideRotateSecret(state, id, generateWebhookSecret(), overlapSeconds, this.clock.now()),
      context,
    );
    return executed.result;
  }

  async delete(id: string, context: CommandContext): Promise<void> {
    // Its messages are removed before the answer waits for the read models: a 503 from that
    // wait (the write recorded) leaves nothing of the endpoint behind, and a repeat is a 404.
    const executed = await this.executor.execute(
      streams.webhook(id),
      webhookEndpointEvolver,
      (state) => decideDeleteWebhook(state, id, this.clock.now()),
      context,
    );
    await this.outbox.removeEndpoint(id);
    await this.commands.afterCommit(executed.position, context);
  }

  /** The delivery engine's disabling (410, failing continuously): an event like any other change. */
  async disable(id: string, reason: string, attempted: AttemptedEndpoint): Promise<void> {
    const context = { correlation_id: this.ids.uuid(), causation_id: `webhook-delivery:${id}`, actor: 'process:webhook-delivery' };
    await this.executor.execute(
      streams.webhook(id),
      webhookEndpointEvolver,
      (state) => decideDisableWebhook(state, id, reason, this.clock.now(), attempted),
      context,
    );
  }

  get(id: string): Promise<WebhookDoc | null> {
    return this.readStore.get<WebhookDoc>(WEBHOOKS, id);
  }

  list(): Promise<WebhookDoc[]> {
    return this.readStore.find<WebhookDoc>(WEBHOOKS, { orderBy: { field: 'created_at', direction: 'asc' } });
  }

  private async existing(id: string): Promise<WebhookDoc> {
    const endpoint = await this.get(id);
    if (!endpoint) throw new DomainError('NOT_FOUND.WEBHOOK', `No webhook endpoint ${id}`, 'path:/id');
    return endpoint;
  }

  /** Sends a signed `webhook.ping` now (not through the outbox) and says how the receiver answered. */
  async ping(id: string) {
    const endpoint = await this.existing(id);
    await checkWebhookUrl(endpoint.url, this.config, { source: null });
    const messageId = this.ids.uuid();
    const body = JSON.stringify({ type: 'webhook.ping', timestamp: this.clock.now().toISOString(), data: { webhook_id: id } });
    const headers = { ...signWebhook(messageId, new Date(), body, signingSecrets(endpoint.secrets, this.clock.now())), 'content-type': 'application/json' };
    const outcome = await postWithTimeout(endpoint.url, headers, body, this.config.WEBHOOK_TIMEOUT_MS, { lookup: deliveryLookup(this.config) });
    const delivered = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
    return { message_id: messageId, delivered, status_code: outcome.statusCode, latency_ms: outcome.latencyMs, error: outcome.error };
  }

  async deliveries(id: string, query: { status?: DeliveryStatus; after?: bigint | null; limit: number }) {
    if (id !== REVENUECAT_ENDPOINT) await this.existing(id);
    // One more than the page, to know whether another follows.
    const found = await this.outbox.list(id, { ...query, limit: query.limit + 1 });
    const page = found.slice(0, query.limit);
    return { deliveries: page.map(deliveryView), next_after: found.length > query.limit ? page[page.length - 1]!.position.toString() : null };
  }

  async redeliver(id: string, messageId: string) {
    if (id !== REVENUECAT_ENDPOINT) await this.existing(id);
    if (!(await this.outbox.redeliver(id, messageId, this.clock.now().toISOString()))) {
      throw new DomainError('NOT_FOUND.DELIVERY', `No delivery ${messageId} for webhook endpoint ${id}`, 'path:/message_id');
    }
    return deliveryView((await this.outbox.get(id, messageId))!);
  }

  /**
   * The feed removes what is queued under an id when it reaches the endpoint's creation
   * (src/application/webhooks/webhook-feeder.ts): a replay queued before then would go with it.
   * So a replay waits (bounded) for the feed to pass the creation; 503 with nothing queued if not.
   */
  private async feedPastCreation(endpoint: WebhookDoc): Promise<void> {
    if (endpoint.created_position === undefined) return;
    const created = BigInt(endpoint.created_position);
    for (let waited = 0; ; waited += FEED_POLL_MS) {
      const fed = await this.outbox.feedCheckpoint(WEBHOOK_FEED);
      if (fed !== null && fed >= created) return;
      if (waited >= FEED_WAIT_MS) break;
      await new Promise((resolve) => setTimeout(resolve, FEED_POLL_MS));
    }
    throw new ReadModelsBehindError("The outbox feed has not reached this endpoint's creation yet; nothing was queued, retry the replay");
  }

  /**
   * Re-enqueues the endpoint's messages from the log after `after_position` and/or recorded at
   * or after `since` (both bounds apply when both are given), with the endpoint's current event
   * filter, up to where the outbox feed stands (later events are fed anyway). Delivered and dead
   * ones go again.
   */
  async replay(id: string, from: { after_position?: bigint; since?: string }) {
    const endpoint = await this.existing(id);
    await this.feedPastCreation(endpoint);
    const until = await this.outbox.feedCheckpoint(WEBHOOK_FEED);
    let requeued = 0;
    let first: string | null = null;
    let last: string | null = null;
    if (until === null) return { requeued, first_position: first, last_position: last };
    const now = this.clock.now().toISOString();
    const range = { after: from.after_position ?? null, until, ...(from.since === undefined ? {} : { since: Date.parse(from.since) }) };
    for await (const rows of endpointMessagesBetween(this.log, this.ids, endpoint, range, now)) {
      if (rows.length === 0) continue;
      requeued += await this.outbox.requeue(rows, now);
      first ??= rows[0]!.position.toString();
      last = rows[rows.length - 1]!.position.toString();
    }
    return { requeued, first_position: first, last_position: last };
  }
}
