import { Router } from 'express';
import type { DependencyContainer } from 'tsyringe';
import type { WebhookDoc } from '../../../projections/webhooks.js';
import { WebhookAdmin } from '../../application/webhooks/webhook-admin.js';
import { requireSecretKey } from '../auth.js';
import { commandContext } from '../context.js';
import { ApiError, methodNotAllowed } from '../errors.js';
import type { ApiDescription } from '../openapi.js';
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
} from '../schemas/webhooks.js';
import { parseBody, parsePathParam, parseQuery } from '../validation.js';

const TAG = 'admin: webhooks';

/** The stored endpoint as the API shows it: never its secrets (a new secret only when just made). */
function webhookView(endpoint: Omit<WebhookDoc, 'secrets'> & { secrets?: unknown }, secret: string | null = null) {
  const { secrets: _secrets, ...shown } = endpoint;
  return secret === null ? shown : { ...shown, secret };
}

/** SPEC §12: outgoing webhook endpoints, their deliveries, redelivery and replay (secret key). */
export function adminWebhooksRouter(container: DependencyContainer, api: ApiDescription): Router {
  const router = Router();
  router.use('/webhooks', requireSecretKey);
  const webhooks = container.resolve(WebhookAdmin);
  const params = z.object({ id: webhookId });
  const one = z.object({ data: z.object({ webhook: webhookOut }) });
  const idOf = (req: Parameters<typeof parsePathParam>[0]) => parsePathParam(req, 'id', webhookId) as string;
  const notFound = (id: string) => new ApiError(404, 'NOT_FOUND.WEBHOOK', `No webhook endpoint ${id}`, 'path:/id');

  api.operation({
    method: 'put',
    path: '/admin/webhooks/{id}',
    operationId: 'putWebhook',
    summary: 'Create (201, with the signing secret shown once) or update (200) a webhook endpoint',
    tags: [TAG],
    params,
    body: webhookBody,
    responses: { 201: { description: 'Created', schema: one }, 200: { description: 'Updated', schema: one } },
    errors: ['WEBHOOK.URL_NOT_ALLOWED'],
    auth: 'secret',
  });
  api.operation({
    method: 'get',
    path: '/admin/webhooks/{id}',
    operationId: 'getWebhook',
    summary: 'Get a webhook endpoint',
    tags: [TAG],
    params,
    responses: { 200: { description: 'Found', schema: one } },
    errors: ['NOT_FOUND.WEBHOOK'],
    auth: 'secret',
  });
  api.operation({
    method: 'delete',
    path: '/admin/webhooks/{id}',
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook endpoint and its pending deliveries',
    tags: [TAG],
    params,
    responses: { 204: { description: 'Deleted' } },
    errors: ['NOT_FOUND.WEBHOOK'],
    auth: 'secret',
  });
  router
    .route('/webhooks/:id')
    .put(async (req, res) => {
      const id = idOf(req);
      const body = parseBody(req, webhookBody);
      const { created, webhook, secret } = await webhooks.define(
        { id, url: body.url, events: body.events ?? null, description: body.description ?? null, enabled: body.enabled ?? true },
        { events: body.events !== undefined, description: body.description !== undefined, enabled: body.enabled !== undefined },
        commandContext(res),
      );
      res.status(created ? 201 : 200).json({ data: { webhook: webhookView(webhook, secret) } });
    })
    .get(async (req, res) => {
      const id = idOf(req);
      const endpoint = await webhooks.get(id);
      if (!endpoint) throw notFound(id);
      res.json({ data: { webhook: webhookView(endpoint) } });
    })
    .delete(async (req, res) => {
      await webhooks.delete(idOf(req), commandContext(res));
      res.status(204).end();
    })
    .all(methodNotAllowed(['GET', 'PUT', 'DELETE']));

  api.operation({
    method: 'get',
    path: '/admin/webhooks',
    operationId: 'listWebhooks',
    summary: 'List webhook endpoints',
    tags: [TAG],
    responses: { 200: { description: 'All of them', schema: z.object({ data: z.object({ webhooks: z.array(webhookOut) }) }) } },
    errors: [],
    auth: 'secret',
  });
  router
    .route('/webhooks')
    .get(async (_req, res) => void res.json({ data: { webhooks: (await webhooks.list()).map((endpoint) => webhookView(endpoint)) } }))
    .all(methodNotAllowed(['GET']));

  api.operation({
    method: 'post',
    path: '/admin/webhooks/{id}/rotate-secret',
    operationId: 'rotateWebhookSecret',
    summary: 'Make a new signing secret (shown once); the previous ones keep signing for overlap_seconds',
    tags: [TAG],
    params,
    body: rotateSecretBody,
    responses: { 200: { description: 'Rotated', schema: one } },
    errors: ['NOT_FOUND.WEBHOOK'],
    auth: 'secret',
  });
  router
    .route('/webhooks/:id/rotate-secret')
    .post(async (req, res) => {
      const id = idOf(req);
      const { overlap_seconds } = parseBody(req, rotateSecretBody);
      const { webhook, secret } = await webhooks.rotateSecret(id, overlap_seconds, commandContext(res));
      res.json({ data: { webhook: webhookView(webhook, secret) } });
    })
    .all(methodNotAllowed(['POST']));

  api.operation({
    method: 'post',
    path: '/admin/webhooks/{id}/ping',
    operationId: 'pingWebhook',
    summary: 'Send a signed webhook.ping now and report how the endpoint answered',
    tags: [TAG],
    params,
    responses: { 200: { description: 'Sent', schema: z.object({ data: z.object({ ping: pingOut }) }) } },
    errors: ['NOT_FOUND.WEBHOOK', 'WEBHOOK.URL_NOT_ALLOWED'],
    auth: 'secret',
  });
  router
    .route('/webhooks/:id/ping')
    .post(async (req, res) => void res.json({ data: { ping: await webhooks.ping(idOf(req)) } }))
    .all(methodNotAllowed(['POST']));

  api.operation({
    method: 'get',
    path: '/admin/webhooks/{id}/deliveries',
    operationId: 'listWebhookDeliveries',
    summary: "The endpoint's deliveries in log order, paged by position (_revenuecat: RevenueCat fulfilments)",
    tags: [TAG],
    params: z.object({ id: deliveriesOwner }),
    query: deliveriesQuery,
    responses: {
      200: {
        description: 'A page of deliveries',
        schema: z.object({ data: z.object({ deliveries: z.array(deliveryOut), next_after: z.string().nullable() }) }),
      },
    },
    errors: ['NOT_FOUND.WEBHOOK'],
    auth: 'secret',
  });
  router
    .route('/webhooks/:id/deliveries')
    .get(async (req, res) => {
      const id = parsePathParam(req, 'id', deliveriesOwner) as string;
      const query = parseQuery(req, deliveriesQuery);
      res.json({ data: await webhooks.deliveries(id, query) });
    })
    .all(methodNotAllowed(['GET']));

  const messageParams = z.object({ id: deliveriesOwner, message_id: z.string().uuid() });
  api.operation({
    method: 'post',
    path: '/admin/webhooks/{id}/deliveries/{message_id}/redeliver',
    operationId: 'redeliverWebhookMessage',
    summary: 'Deliver one message again (now, attempts from zero)',
    tags: [TAG],
    params: messageParams,
    responses: { 200: { description: 'Queued', schema: z.object({ data: z.object({ delivery: deliveryOut }) }) } },
    errors: ['NOT_FOUND.WEBHOOK', 'NOT_FOUND.DELIVERY'],
    auth: 'secret',
  });
  router
    .route('/webhooks/:id/deliveries/:message_id/redeliver')
    .post(async (req, res) => {
      const id = parsePathParam(req, 'id', deliveriesOwner) as string;
      const messageId = parsePathParam(req, 'message_id', z.string().uuid()) as string;
      res.json({ data: { delivery: await webhooks.redeliver(id, messageId) } });
    })
    .all(methodNotAllowed(['POST']));

  api.operation({
    method: 'post',
    path: '/admin/webhooks/{id}/replay',
    operationId: 'replayWebhook',
    summary: "Re-enqueue the endpoint's messages from a log position or a time",
    tags: [TAG],
    params,
    body: replayBody,
    responses: { 200: { description: 'Re-enqueued', schema: z.object({ data: replayOut }) } },
    errors: ['NOT_FOUND.WEBHOOK'],
    auth: 'secret',
  });
  router
    .route('/webhooks/:id/replay')
    .post(async (req, res) => {
      const id = idOf(req);
      const body = parseBody(req, replayBody);
      res.json({ data: await webhooks.replay(id, body) });
    })
    .all(methodNotAllowed(['POST']));

  return router;
}
