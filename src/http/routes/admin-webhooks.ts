import type { DependencyContainer } from 'tsyringe';
import type { WebhookDoc } from '../../../projections/webhooks.js';
import { WebhookAdmin } from '../../application/webhooks/webhook-admin.js';
import { commandContext } from '../context.js';
import { ApiError } from '../errors.js';
import { type AnyRoute, route } from '../route.js';
import { uuid } from '../schemas/common.js';
import { z } from '../schemas/zod-openapi.js';
import {
  deliveriesOwner,
  deliveriesQuery,
  deliveryOut,
  pingOut,
  replayBody,
  replayOut,
  rotateSecretBody,
  webhookBody,
  webhookId,
  webhookOut,
  webhookWithSecretOut,
} from '../schemas/webhooks.js';

const TAG = 'admin: webhooks';

/** The stored endpoint as the API shows it: never its secrets (a new secret only when just made), nor where it was created in the log. */
function webhookView(
  endpoint: Omit<WebhookDoc, 'secrets' | 'created_position'> & { secrets?: unknown; created_position?: unknown },
  secret: string | null = null,
) {
  const { secrets: _secrets, created_position: _created, ...shown } = endpoint;
  return secret === null ? shown : { ...shown, secret };
}

/** SPEC §12: outgoing webhook endpoints, their deliveries, redelivery and replay (secret key). */
export function adminWebhookRoutes(container: DependencyContainer): AnyRoute[] {
  const webhooks = container.resolve(WebhookAdmin);
  const params = z.object({ id: webhookId });
  const one = z.object({ data: z.object({ webhook: webhookOut }) });
  const oneWithSecret = z.object({ data: z.object({ webhook: webhookWithSecretOut }) });
  const notFound = (id: string) => new ApiError('NOT_FOUND.WEBHOOK', `No webhook endpoint ${id}`, 'path:/id');
  const common = { tags: [TAG], auth: 'secret' as const };

  return [
    route({
      ...common,
      method: 'put',
      path: '/admin/webhooks/{id}',
      operationId: 'putWebhook',
      summary: 'Create (201, with the signing secret shown once) or update (200) a webhook endpoint',
      params,
      body: webhookBody,
      responses: { 201: { description: 'Created, with its signing secret', schema: oneWithSecret }, 200: { description: 'Updated', schema: one } },
      // `inbound` as the id: that path is the inbound notifications' list, GET only.
      errors: ['WEBHOOK.URL_NOT_ALLOWED', 'METHOD_NOT_ALLOWED'],
      async handle({ params: { id }, body, res }) {
        const { created, webhook, secret } = await webhooks.define(
          { id, url: body.url, events: body.events ? [...new Set(body.events)] : null, description: body.description ?? null, enabled: body.enabled ?? true },
          { events: body.events !== undefined, description: body.description !== undefined, enabled: body.enabled !== undefined },
          commandContext(res),
        );
        return { status: created ? 201 : 200, body: { data: { webhook: webhookView(webhook, secret) } } };
      },
    }),
    route({
      ...common,
      method: 'get',
      path: '/admin/webhooks/{id}',
      operationId: 'getWebhook',
      summary: 'Get a webhook endpoint',
      params,
      responses: { 200: { description: 'Found', schema: one } },
      errors: ['NOT_FOUND.WEBHOOK'],
      async handle({ params: { id } }) {
        const endpoint = await webhooks.get(id);
        if (!endpoint) throw notFound(id);
        return { status: 200, body: { data: { webhook: webhookView(endpoint) } } };
      },
    }),
    route({
      ...common,
      method: 'delete',
      path: '/admin/webhooks/{id}',
      operationId: 'deleteWebhook',
      summary: 'Delete a webhook endpoint and its pending deliveries',
      params,
      responses: { 204: { description: 'Deleted' } },
      errors: ['NOT_FOUND.WEBHOOK', 'METHOD_NOT_ALLOWED'],
      async handle({ params: { id }, res }) {
        await webhooks.delete(id, commandContext(res));
        return { status: 204 };
      },
    }),
    route({
      ...common,
      method: 'get',
      path: '/admin/webhooks',
      operationId: 'listWebhooks',
      summary: 'List webhook endpoints',
      responses: { 200: { description: 'All of them', schema: z.object({ data: z.object({ webhooks: z.array(webhookOut) }) }) } },
      errors: [],
      async handle() {
        return { status: 200, body: { data: { webhooks: (await webhooks.list()).map((endpoint) => webhookView(endpoint)) } } };
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/admin/webhooks/{id}/rotate-secret',
      operationId: 'rotateWebhookSecret',
      summary: 'Make a new signing secret (shown once); the one it replaces keeps signing for overlap_seconds, an older one no longer',
      params,
      body: rotateSecretBody,
      responses: { 200: { description: 'Rotated, with the new signing secret', schema: oneWithSecret } },
      errors: ['NOT_FOUND.WEBHOOK'],
      async handle({ params: { id }, body: { overlap_seconds }, res }) {
        const { webhook, secret } = await webhooks.rotateSecret(id, overlap_seconds, commandContext(res));
        return { status: 200, body: { data: { webhook: webhookView(webhook, secret) } } };
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/admin/webhooks/{id}/ping',
      operationId: 'pingWebhook',
      summary: 'Send a signed webhook.ping now and report how the endpoint answered',
      params,
      responses: { 200: { description: 'Sent', schema: z.object({ data: z.object({ ping: pingOut }) }) } },
      errors: ['NOT_FOUND.WEBHOOK', 'WEBHOOK.URL_NOT_ALLOWED'],
      async handle({ params: { id } }) {
        return { status: 200, body: { data: { ping: await webhooks.ping(id) } } };
      },
    }),
    route({
      ...common,
      method: 'get',
      path: '/admin/webhooks/{id}/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: "The endpoint's deliveries in log order, paged by position (_revenuecat: RevenueCat fulfilments)",
      params: z.object({ id: deliveriesOwner }),
      query: deliveriesQuery,
      responses: {
        200: {
          description: 'A page of deliveries',
          schema: z.object({ data: z.object({ deliveries: z.array(deliveryOut), next_after: z.string().nullable() }) }),
        },
      },
      errors: ['NOT_FOUND.WEBHOOK'],
      async handle({ params: { id }, query }) {
        return { status: 200, body: { data: await webhooks.deliveries(id as string, query) } };
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/admin/webhooks/{id}/deliveries/{message_id}/redeliver',
      operationId: 'redeliverWebhookMessage',
      summary: 'Deliver one message again (now, attempts from zero)',
      params: z.object({ id: deliveriesOwner, message_id: uuid }),
      responses: { 200: { description: 'Queued', schema: z.object({ data: z.object({ delivery: deliveryOut }) }) } },
      errors: ['NOT_FOUND.WEBHOOK', 'NOT_FOUND.DELIVERY'],
      async handle({ params: { id, message_id } }) {
        return { status: 200, body: { data: { delivery: await webhooks.redeliver(id as string, message_id) } } };
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/admin/webhooks/{id}/replay',
      operationId: 'replayWebhook',
      summary: "Re-enqueue the endpoint's messages from a log position or a time",
      params,
      body: replayBody,
      responses: { 200: { description: 'Re-enqueued', schema: z.object({ data: replayOut }) } },
      errors: ['NOT_FOUND.WEBHOOK'],
      async handle({ params: { id }, body }) {
        return { status: 200, body: { data: await webhooks.replay(id, body) } };
      },
    }),
  ];
}
