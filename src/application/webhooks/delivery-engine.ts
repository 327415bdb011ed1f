import { REWARDS } from '../../../projections/catalog.js';
import { type RewardEntryDoc, USER_REWARDS, usersProjection } from '../../../projections/users.js';
import { type WebhookDoc, WEBHOOKS, webhooksProjection } from '../../../projections/webhooks.js';
import { type EntitlementEntry, entitlementStillHeld } from '../../domain/rewards/partner-entitlement.js';
import type { RewardDefinition } from '../../domain/rewards/reward-schemas.js';
import type { FulfilmentAction } from '../../domain/webhooks/message-catalogue.js';
import { afterFailure, isDue, parseRetryAfter } from '../../domain/webhooks/retry-schedule.js';
import { type AttemptedEndpoint, signingSecrets } from '../../domain/webhooks/webhook-endpoint.js';
import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import type { PartnerEntitlements } from '../../ports/partner-entitlements.js';
import { READ_MODELS_WAIT_MS, type ReadConsistency } from '../../ports/read-consistency.js';
import type { ReadStore } from '../../ports/read-store.js';
import type { OutboxMessage, WebhookOutbox } from '../../ports/webhook-outbox.js';
import type { Metrics } from '../../observability/metrics.js';
import { type PostOutcome, postWithTimeout } from './http-post.js';
import { REVENUECAT_ENDPOINT, WEBHOOK_FEED } from './webhook-feeder.js';
import { checkWebhookUrl, deliveryLookup, type UrlPolicySettings } from './webhook-url-policy.js';
import { signWebhook } from './webhook-signing.js';

interface DeliverySettings extends UrlPolicySettings {
  WEBHOOK_TIMEOUT_MS: number;
  WEBHOOK_RETRY_HOURS: number;
  WEBHOOK_DISABLE_AFTER_HOURS: number;
  /** While requests are being answered, a message waits at most this long after it was enqueued. */
  WEBHOOK_YIELD_MAX_S: number;
}

export interface DeliveryEngineDeps {
  outbox: WebhookOutbox;
  readStore: ReadStore;
  /** Where the read models stand: a revoke's fulfilment reads the user's entries once they include it. */
  consistency: ReadConsistency;
  clock: Clock;
  settings: DeliverySettings;
  metrics: Metrics;
  logger: Logger;
  /** Disables an endpoint with an event (410 Gone, failing continuously), if it is still the one `attempted`. */
  disable(endpointId: string, reason: string, attempted: AttemptedEndpoint): Promise<void>;
  /** RevenueCat when configured. */
  partner: PartnerEntitlements | null;
  /** A random number in [0, 1) for the backoff jitter (injectable). */
  random?: () => number;
  /** This process's HTTP requests: deliveries yield to them (none: never yield). */
  activity?: { readonly busy: boolean };
}

/** How often due messages are looked for when nothing wakes the engine (retries come due on the clock). */
const POLL_MS = 100;
/** How often a lane yielding to requests looks again. */
const YIELD_POLL_MS = 10;
/** Endpoints delivered to at once; each endpoint has one message in flight (its log order). */
const MAX_ENDPOINTS_IN_FLIGHT = 64;

type Attempt = PostOutcome & { permanent: boolean; gone: boolean };

function succeeded(outcome: PostOutcome): boolean {
  return outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
}

/** An attempt that sent nothing (`error` says why): retried on the usual schedule. */
function notSent(error: string): Attempt {
  return { statusCode: null, latencyMs: 0, retryAfter: null, error, permanent: false, gone: false };
}

/** A partner's answer as an attempt: a refusal (4xx other than 408/429) will not change by retrying, so it is recorded and passed. */
function partnerAttempt(outcome: PostOutcome): Attempt {
  const code = outcome.statusCode;
  const permanent = code !== null && code >= 400 && code < 500 && code !== 408 && code !== 429;
  return { ...outcome, permanent, gone: false };
}

/**
 * Delivers the outbox: each endpoint in its own lane, one message at a time in log order
 * (at-least-once: an attempt is recorded after the receiver answered, so a crash repeats it).
 * A failing endpoint's lane waits for its next attempt time; the other lanes go on.
 *
 * Deliveries yield to the API: while this process answers requests, a lane holds its next message
 * until the requests pause, or until the message has waited WEBHOOK_YIELD_MAX_S since it was
 * enqueued. A burst of traffic delays webhooks by seconds, not the API; under sustained load they
 * go at full speed again once that bound is reached, so no message waits for a quiet moment forever.
 */
export class DeliveryEngine {
  private readonly lanes = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private ticking = false;
  private readonly random: () => number;
  /** Where the outbox feed stood when last looked at (it only moves forward). */
  private fedUpTo: bigint | null = null;

  constructor(private readonly deps: DeliveryEngineDeps) {
    this.random = deps.random ?? Math.random;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  /** Stops looking for work and waits for the attempts in flight to be recorded. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await Promise.allSettled([...this.lanes.values()]);
  }

  /** New messages were fed: look now rather than at the next poll. */
  wake(): void {
    if (this.running && !this.ticking) this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
  }

  private async tick(): Promise<void> {
    if (!this.running) return;
    this.ticking = true;
    try {
      const due = await this.deps.outbox.dueEndpoints(this.now());
      for (const endpointId of due) {
        if (this.lanes.size >= MAX_ENDPOINTS_IN_FLIGHT) break;
        if (this.lanes.has(endpointId)) continue;
        const lane = this.drain(endpointId)
          .catch((error: unknown) => this.deps.logger.error({ err: error, endpoint: endpointId }, 'webhook delivery lane failed; it will be retried'))
          .finally(() => this.lanes.delete(endpointId));
        this.lanes.set(endpointId, lane);
      }
    } catch (error) {
      this.deps.logger.error({ err: error }, 'looking for due webhook deliveries failed; retrying');
    } finally {
      this.ticking = false;
      if (this.running) this.schedule(POLL_MS);
    }
  }

  private now(): string {
    return this.deps.clock.now().toISOString();
  }

  /** Delivers the endpoint's due messages in order until none is due (or the endpoint is off). */
  private async drain(endpointId: string): Promise<void> {
    while (this.running) {
      const waited = await this.deps.outbox.head(endpointId);
      if (!waited || !isDue(waited.next_attempt_at, this.now())) return;
      await this.yieldToRequests(waited);
      if (!this.running) return;
      if (endpointId === REVENUECAT_ENDPOINT) {
        if (!this.deps.partner) return;
        await this.record(waited, await this.fulfil(waited), null);
        continue;
      }
      const endpoint = await this.deps.readStore.get<WebhookDoc>(WEBHOOKS, endpointId);
      if (!endpoint) {
        // Deleted, unless the webhooks read model has not reached the endpoint's creation yet (it
        // trails the feed): then its first messages wait, rather than being removed.
        if (await this.deps.consistency.waitFor(waited.position, 0, webhooksProjection.name)) await this.deps.outbox.removeEndpoint(endpointId);
        return;
      }
      if (!endpoint.enabled) return;
      // Nothing goes to an endpoint before the feed has passed its creation: until then, messages
      // of a deleted predecessor with its id may still be queued (the feed removes them there).
      if (!(await this.fedThrough(endpoint.created_position))) return;
      // Still the head after the wait, read after the endpoint: a DELETE meanwhile removed it.
      const message = await this.deps.outbox.head(endpointId);
      if (message?.message_id !== waited.message_id) continue;
      const attempt = await this.send(endpoint, message);
      await this.record(message, attempt, endpoint);
      if (!succeeded(attempt)) return;
    }
  }

  /** Whether the read model `projection` has passed `position` (waiting a while), or is held at a failing batch. */
  private async readModelsReached(position: bigint, projection: string): Promise<boolean> {
    if (await this.deps.consistency.waitFor(position, READ_MODELS_WAIT_MS, projection)) return true;
    const status = (await this.deps.consistency.projections()).find((candidate) => candidate.name === projection);
    return status?.failure != null;
  }

  /** Whether the outbox feed has passed `position` (absent: a read model built before it was kept). */
  private async fedThrough(position: string | undefined): Promise<boolean> {
    if (position === undefined) return true;
    const target = BigInt(position);
    if (this.fedUpTo !== null && this.fedUpTo >= target) return true;
    this.fedUpTo = await this.deps.outbox.feedCheckpoint(WEBHOOK_FEED);
    return this.fedUpTo !== null && this.fedUpTo >= target;
  }

  /** Waits while requests are being answered, up to WEBHOOK_YIELD_MAX_S after the message was enqueued. */
  private async yieldToRequests(message: OutboxMessage): Promise<void> {
    const activity = this.deps.activity;
    if (!activity) return;
    const until = Date.parse(message.enqueued_at) + this.deps.settings.WEBHOOK_YIELD_MAX_S * 1000;
    while (this.running && activity.busy && this.deps.clock.now().getTime() < until) {
      await new Promise((resolve) => setTimeout(resolve, YIELD_POLL_MS));
    }
  }

  private async send(endpoint: WebhookDoc, message: OutboxMessage): Promise<Attempt> {
    try {
      await checkWebhookUrl(endpoint.url, this.deps.settings);
    } catch (error) {
      return notSent((error as Error).message);
    }
    const secrets = signingSecrets(endpoint.secrets, this.deps.clock.now());
    // The signature's timestamp is the wall-clock send time: receivers check it against their clocks.
    const headers = { ...signWebhook(message.message_id, new Date(), message.payload, secrets), 'content-type': 'application/json' };
    const outcome = await postWithTimeout(endpoint.url, headers, message.payload, this.deps.settings.WEBHOOK_TIMEOUT_MS, {
      lookup: deliveryLookup(this.deps.settings),
    });
    return { ...outcome, permanent: false, gone: outcome.statusCode === 410 };
  }

  private async fulfil(message: OutboxMessage): Promise<Attempt> {
    const partner = this.deps.partner!;
    const action = JSON.parse(message.payload) as FulfilmentAction;
    const reward = await this.deps.readStore.get<RewardDefinition>(REWARDS, action.reward_key);
    if (!reward?.entitlement_id) {
      return notSent(`reward ${action.reward_key} has no entitlement_id (yet)`);
    }
    const entitlementId = reward.entitlement_id;
    if (action.action === 'grant') return partnerAttempt(await partner.grant(action.app_user_id, entitlementId, action.expires_at));
    // The user's other entries are read once the read models include this revoke's event (they and
    // the outbox feed follow the log each at its own pace): an entry granted just before it counts.
    // A `users` read model held at a failing batch is not waited for (it waits for an operator):
    // the entries are read as they stand, rather than every fulfilment queueing behind this one.
    if (!(await this.readModelsReached(message.position, usersProjection.name))) {
      return notSent('the users read model is behind this revoke');
    }
    const revoked = await partner.revoke(action.app_user_id, entitlementId);
    if (!succeeded(revoked)) return partnerAttempt(revoked);
    // The revoke ended every grant of the entitlement: grant it again while another entry holds it.
    const held = entitlementStillHeld(await this.entitlementEntries(action.app_user_id), entitlementId, action.grant_id, this.deps.clock.now());
    return partnerAttempt(held ? await partner.grant(action.app_user_id, entitlementId, held.endsAt) : revoked);
  }

  /** The user's live `partner_entitlement` entries, with the entitlement each one's reward grants. */
  private async entitlementEntries(appUserId: string): Promise<EntitlementEntry[]> {
    const { readStore } = this.deps;
    const entries = await readStore.find<RewardEntryDoc>(USER_REWARDS, { where: { app_user_id: appUserId, expired: false, kind: 'partner_entitlement' } });
    const rewards = await readStore.getMany<RewardDefinition>(
      REWARDS,
      entries.map((entry) => entry.reward_key),
    );
    return entries.map((entry) => ({
      entry_id: entry.entry_id,
      entitlement_id: rewards.get(entry.reward_key)?.entitlement_id ?? null,
      expires_at: entry.expires_at,
    }));
  }

  private async record(message: OutboxMessage, attempt: Attempt, endpoint: WebhookDoc | null): Promise<void> {
    const { outbox, metrics, settings, logger } = this.deps;
    const now = this.deps.clock.now();
    const endpointId = message.endpoint_id;
    const delivered = succeeded(attempt);
    const base = {
      due_at: message.next_attempt_at,
      attempted_at: now.toISOString(),
      status_code: attempt.statusCode,
      error: attempt.error,
      latency_ms: attempt.latencyMs,
    };
    if (delivered) {
      await outbox.recordAttempt(endpointId, message.message_id, { ...base, status: 'delivered', next_attempt_at: message.next_attempt_at });
      metrics.webhookDeliveries.inc({ endpoint: endpointId, outcome: 'delivered' });
      if ((await outbox.failingSince(endpointId)) !== null) await outbox.setFailingSince(endpointId, null);
      return;
    }
    const firstAttemptAt = new Date(message.first_attempt_at ?? now.toISOString());
    const verdict = attempt.permanent
      ? ({ status: 'dead' } as const)
      : afterFailure({
          firstAttemptAt,
          now,
          attempts: message.attempts + 1,
          retryAfterMs: parseRetryAfter(attempt.retryAfter, now),
          retryWindowMs: settings.WEBHOOK_RETRY_HOURS * 3_600_000,
          random: this.random(),
        });
    const next = verdict.status === 'failed' ? verdict.nextAttemptAt.toISOString() : message.next_attempt_at;
    await outbox.recordAttempt(endpointId, message.message_id, { ...base, status: verdict.status, next_attempt_at: next });
    metrics.webhookDeliveries.inc({ endpoint: endpointId, outcome: attempt.permanent ? 'refused' : verdict.status });
    // The log names the receiver's status, not what it answered (kept in the delivery's
    // `last_error`, which retention deletes): a receiver may echo the message, personal data
    // included, and no erasure reaches a log. Without an answer, the error is the service's own.
    const error = attempt.statusCode === null ? attempt.error : undefined;
    if (attempt.permanent) {
      logger.error({ endpoint: endpointId, message: message.message_id, status: attempt.statusCode, error }, 'partner refused a fulfilment; recorded as dead');
      return;
    }
    logger.warn(
      { endpoint: endpointId, message: message.message_id, status: attempt.statusCode, error, next_attempt_at: next, verdict: verdict.status },
      'webhook delivery failed',
    );
    if (!endpoint) return;
    // What the receiver answered says nothing about an endpoint deleted and created again under
    // its id, or moved to another URL, while the attempt was in flight.
    const attempted: AttemptedEndpoint = { url: endpoint.url, created_at: endpoint.created_at };
    const current = await this.deps.readStore.get<WebhookDoc>(WEBHOOKS, endpointId);
    if (current?.url !== attempted.url || current.created_at !== attempted.created_at) return;
    if (attempt.gone) {
      await this.deps.disable(endpointId, 'the endpoint answered 410 Gone', attempted);
      return;
    }
    const failingSince = await outbox.failingSince(endpointId);
    if (failingSince === null) await outbox.setFailingSince(endpointId, now.toISOString());
    else if (now.getTime() - Date.parse(failingSince) >= settings.WEBHOOK_DISABLE_AFTER_HOURS * 3_600_000) {
      const reason = `failing continuously since ${failingSince} (WEBHOOK_DISABLE_AFTER_HOURS=${settings.WEBHOOK_DISABLE_AFTER_HOURS})`;
      await this.deps.disable(endpointId, reason, attempted);
      await outbox.setFailingSince(endpointId, null);
    }
  }
}
