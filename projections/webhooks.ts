import type { WebhookEndpoint } from '../src/domain/events/webhook-events.js';
import { webhookEndpointEvolver, type WebhookEndpointState } from '../src/domain/webhooks/webhook-endpoint.js';
import { foldsWith, type Projection } from './projection.js';

export const WEBHOOKS = 'webhooks';

/** The stored endpoint: what GET shows plus the secrets the delivery engine signs with (never shown). */
export type WebhookDoc = WebhookEndpoint & { secrets: WebhookEndpointState['secrets'] };

/** Outgoing webhook endpoints, folded with the same evolver the command side uses. */
export const webhooksProjection: Projection = {
  name: 'webhooks',
  // The evolver's version (2) plus this file's own 0: bump the 0 when this file changes what it writes.
  ...foldsWith(0, [webhookEndpointEvolver]),
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
    const { secrets = [], ...endpoint } = current ?? {};
    const state: WebhookEndpointState = { endpoint: current ? (endpoint as WebhookEndpoint) : null, secrets };
    const next = webhookEndpointEvolver.evolve(state, event);
    return next.endpoint ? { ...next.endpoint, secrets: next.secrets } : null;
  },
};
