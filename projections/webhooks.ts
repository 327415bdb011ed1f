import type { WebhookEndpoint } from '../src/domain/events/webhook-events.js';
import { webhookEndpointEvolver, type WebhookEndpointState } from '../src/domain/webhooks/webhook-endpoint.js';
import { foldsWith, type Projection } from './projection.js';

export const WEBHOOKS = 'webhooks';

/**
 * The stored endpoint: what GET shows, plus what the delivery engine needs and never shows: the
 * secrets it signs with, and the log position of the endpoint's creation (`created_position`), so
 * that a message queued for an endpoint deleted since, whose id this one took, is never sent to it.
 */
export type WebhookDoc = WebhookEndpoint & { secrets: WebhookEndpointState['secrets']; created_position: string };

/** Outgoing webhook endpoints, folded with the same evolver the command side uses. */
export const webhooksProjection: Projection = {
  name: 'webhooks',
  // The evolver's version (3) plus this file's own 1: bump it when this file changes what it writes.
  // 1: `created_position`.
  ...foldsWith(1, [webhookEndpointEvolver]),
  collections: [{ name: WEBHOOKS, indexes: ['created_at'] }],
  eventTypes: ['WebhookEndpointCreated', 'WebhookEndpointUpdated', 'WebhookSecretRotated', 'WebhookEndpointDisabled', 'WebhookEndpointDeleted'],
  targets: (event) => {
    switch (event.type) {
      case 'WebhookEndpointCreated':
      case 'WebhookEndpointUpdated':
        return [{ collection: WEBHOOKS, id: event.data.webhook.id }];
      case 'WebhookSecretRotated':
      case 'WebhookEndpointDisabled':
      case 'WebhookEndpointDeleted':
        return [{ collection: WEBHOOKS, id: event.data.id }];
      default:
        return [];
    }
  },
  evolve: (_ref, doc, event) => {
    const current = doc as WebhookDoc | null;
    const { secrets = [], created_position, ...endpoint } = current ?? {};
    const state: WebhookEndpointState = { endpoint: current ? (endpoint as WebhookEndpoint) : null, secrets };
    const next = webhookEndpointEvolver.evolve(state, event);
    if (!next.endpoint) return null;
    const createdAt = event.type === 'WebhookEndpointCreated' ? event.position.toString() : (created_position ?? '0');
    return { ...next.endpoint, secrets: next.secrets, created_position: createdAt };
  },
};
