import type { Decision, Evolver, NewDomainEvent } from '../decider.js';
import { DomainError } from '../domain-error.js';
import type { WebhookEndpoint } from '../events/webhook-events.js';
import { isActiveAt } from '../rewards/expiry.js';

/** One `webhook-{id}` stream folded: the endpoint (null when never created or deleted) and its secrets. */
export interface WebhookEndpointState {
  endpoint: WebhookEndpoint | null;
  /**
   * The current secret (`expires_at` null) and, after a rotation, the one it replaced until its
   * overlap ends: two at most, newest first. A secret with `expires_at` in the past no longer signs.
   */
  secrets: { secret: string; expires_at: string | null }[];
}

export const webhookEndpointEvolver: Evolver<WebhookEndpointState> = {
  name: 'webhook-endpoint',
  // 2: a rotation sets the endpoint's updated_at. 3: a rotation retires every secret but the one it replaces.
  version: 3,
  initialState: () => ({ endpoint: null, secrets: [] }),
  evolve(state, event) {
    switch (event.type) {
      case 'WebhookEndpointCreated':
        return { endpoint: event.data.webhook, secrets: [{ secret: event.data.secret, expires_at: null }] };
      case 'WebhookEndpointUpdated':
        return { ...state, endpoint: event.data.webhook };
      case 'WebhookSecretRotated':
        return {
          endpoint: state.endpoint ? { ...state.endpoint, updated_at: event.data.rotated_at } : null,
          secrets: [
            { secret: event.data.secret, expires_at: null },
            ...state.secrets.filter((secret) => secret.expires_at === null).map((secret) => ({ ...secret, expires_at: event.data.previous_expires_at })),
          ],
        };
      case 'WebhookEndpointDisabled':
        return state.endpoint ? { ...state, endpoint: { ...state.endpoint, enabled: false, updated_at: event.data.disabled_at } } : state;
      case 'WebhookEndpointDeleted':
        return { endpoint: null, secrets: [] };
      default:
        return state;
    }
  },
};

/** The secrets that sign at `now`: the current one, and the one it replaced while its overlap lasts. */
export function signingSecrets(secrets: WebhookEndpointState['secrets'], now: Date): string[] {
  return secrets.filter((secret) => isActiveAt(secret.expires_at, now)).map((secret) => secret.secret);
}

export interface WebhookEndpointInput {
  id: string;
  url: string;
  events: string[] | null;
  description: string | null;
  enabled: boolean;
}

function notFound(id: string): DomainError {
  return new DomainError('NOT_FOUND.WEBHOOK', `No webhook endpoint ${id}`, 'path:/id');
}

/**
 * PUT /admin/webhooks/{id}: create (with `newSecret`, shown once) or update. `events`,
 * `description` and `enabled` left out of an update keep their values (`given` says which were sent).
 */
export function decideDefineWebhook(
  state: WebhookEndpointState,
  input: WebhookEndpointInput,
  given: { events: boolean; description: boolean; enabled: boolean },
  newSecret: string,
  now: Date,
): Decision<{ created: boolean; webhook: WebhookEndpoint; secret: string | null }> {
  const existing = state.endpoint;
  if (!existing) {
    const webhook: WebhookEndpoint = { ...input, created_at: now.toISOString(), updated_at: null };
    return { events: [{ type: 'WebhookEndpointCreated', data: { webhook, secret: newSecret } }], result: { created: true, webhook, secret: newSecret } };
  }
  const webhook: WebhookEndpoint = {
    ...existing,
    url: input.url,
    events: given.events ? input.events : existing.events,
    description: given.description ? input.description : existing.description,
    enabled: given.enabled ? input.enabled : existing.enabled,
  };
  const changed = JSON.stringify(webhook) !== JSON.stringify(existing);
  if (!changed) return { events: [], result: { created: false, webhook: existing, secret: null } };
  const updated = { ...webhook, updated_at: now.toISOString() };
  return { events: [{ type: 'WebhookEndpointUpdated', data: { webhook: updated } }], result: { created: false, webhook: updated, secret: null } };
}

export const MAX_OVERLAP_SECONDS = 604_800;

/**
 * POST /admin/webhooks/{id}/rotate-secret: `newSecret` signs from now, the secret it replaces until
 * now + overlap (SPEC §12: both sign, two `v1,` entries), and any older one no longer.
 */
export function decideRotateSecret(
  state: WebhookEndpointState,
  id: string,
  newSecret: string,
  overlapSeconds: number,
  now: Date,
): Decision<{ webhook: WebhookEndpoint; secret: string }> {
  if (!state.endpoint) throw notFound(id);
  const previousExpiresAt = new Date(now.getTime() + overlapSeconds * 1000).toISOString();
  const rotated: NewDomainEvent = {
    type: 'WebhookSecretRotated',
    data: { id, secret: newSecret, rotated_at: now.toISOString(), previous_expires_at: previousExpiresAt },
  };
  // The endpoint as the rotation leaves it (its updated_at moves), as a GET then shows it.
  return { events: [rotated], result: { webhook: webhookEndpointEvolver.evolve(state, rotated).endpoint!, secret: newSecret } };
}

/** DELETE /admin/webhooks/{id}. */
export function decideDeleteWebhook(state: WebhookEndpointState, id: string, now: Date): Decision<null> {
  if (!state.endpoint) throw notFound(id);
  return { events: [{ type: 'WebhookEndpointDeleted', data: { id, deleted_at: now.toISOString() } }], result: null };
}

/** The endpoint as a delivery attempt found it: its generation (`created_at`) and the URL it was sent to. */
export type AttemptedEndpoint = Pick<WebhookEndpoint, 'url' | 'created_at'>;

/**
 * The delivery engine disables an endpoint (410 Gone, or failing continuously) for an attempt
 * made to `attempted`; a no-op when already off, or when the endpoint is no longer the one the
 * attempt went to (deleted and created again under its id, or moved to another URL meanwhile).
 */
export function decideDisableWebhook(state: WebhookEndpointState, id: string, reason: string, now: Date, attempted: AttemptedEndpoint): Decision<null> {
  if (!state.endpoint?.enabled) return { events: [], result: null };
  if (state.endpoint.url !== attempted.url || state.endpoint.created_at !== attempted.created_at) return { events: [], result: null };
  return { events: [{ type: 'WebhookEndpointDisabled', data: { id, disabled_at: now.toISOString(), reason } }], result: null };
}
