import { MESSAGE_TYPES } from '../../domain/webhooks/message-catalogue.js';
import { MAX_OVERLAP_SECONDS } from '../../domain/webhooks/webhook-endpoint.js';
import { dateTime, logPosition, logPositionDoc, outDateTime, pageLimit } from './common.js';
import { z } from './zod-openapi.js';

/**
 * Endpoint ids: like program ids, but starting with a letter or digit (`_…` ids are the
 * service's own). `inbound` is taken by the inbound notifications' list; the pattern does not
 * say so (a look-ahead would defeat fuzzers' generators), the description does.
 */
export const webhookId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, 'must match [A-Za-z0-9][A-Za-z0-9_-]{0,63}')
  .openapi({ example: 'backend', description: 'Not `inbound`: GET /admin/webhooks/inbound lists inbound notifications' });

/** Whose deliveries: an endpoint, or `_revenuecat` (the RevenueCat fulfilments). */
export const deliveriesOwner = z.union([webhookId, z.literal('_revenuecat')]).openapi({
  type: 'string',
  pattern: '^(?:[A-Za-z0-9][A-Za-z0-9_-]{0,63}|_revenuecat)$',
  example: 'backend',
  description: 'A webhook endpoint id, or _revenuecat for RevenueCat fulfilments',
});

export const webhookBody = z
  .object({
    url: z.string().url().max(2000).openapi({ example: 'https://api.example.com/hooks/referrals' }),
    events: z
      // No maxItems: a type listed twice counts once, so a list may be longer than the catalogue (the body limit bounds it).
      .array(z.enum(MESSAGE_TYPES))
      .min(1)
      .nullable()
      .optional()
      .openapi({ description: 'Message types delivered (a type listed twice counts once); null = all; absent = all on create, unchanged on update' }),
    description: z.string().max(2000).nullable().optional().openapi({ description: 'Absent: null on create, unchanged on update' }),
    enabled: z.boolean().optional().openapi({ description: 'Absent: true on create, unchanged on update' }),
  })
  .openapi('WebhookRequest');

const webhookFields = {
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()).nullable(),
  description: z.string().nullable(),
  enabled: z.boolean(),
  created_at: outDateTime,
  updated_at: outDateTime.nullable(),
};

/** An endpoint as the API shows it: never its secrets. */
export const webhookOut = z.object(webhookFields).openapi('Webhook');

/** An endpoint as its creation and a rotation answer it: with the new signing secret, shown this once. */
export const webhookWithSecretOut = z
  .object({ ...webhookFields, secret: z.string().openapi({ description: '`whsec_` + base64 of 32 bytes; store it, it is not shown again' }) })
  .openapi('WebhookWithSecret');

export const rotateSecretBody = z.object({ overlap_seconds: z.number().int().min(0).max(MAX_OVERLAP_SECONDS).default(86_400) }).openapi('RotateSecretRequest');

export const deliveriesQuery = z.object({
  status: z.enum(['pending', 'delivered', 'failed', 'dead']).optional(),
  after: logPosition
    .optional()
    .openapi({ ...logPositionDoc, description: 'Exclusive: deliveries of events after this log position (`next_after` of the previous page)' }),
  limit: pageLimit(1000, 100),
});

export const deliveryOut = z
  .object({
    message_id: z.string().openapi({ description: 'The message`s webhook-id' }),
    event_type: z.string(),
    position: z.string(),
    status: z.enum(['pending', 'delivered', 'failed', 'dead']),
    attempts: z.number().int(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    last_latency_ms: z.number().int().nullable(),
    next_attempt_at: outDateTime.nullable(),
    delivered_at: outDateTime.nullable(),
  })
  .openapi('WebhookDelivery');

const afterPosition = logPosition.openapi({ ...logPositionDoc, description: 'Exclusive log position to replay from' });
const since = dateTime.openapi({ description: 'Replay the events recorded at or after this time' });

/** One of the two bounds, or both (then both apply). */
export const replayBody = z
  .union([z.object({ after_position: afterPosition, since: since.optional() }), z.object({ after_position: afterPosition.optional(), since })])
  .openapi('WebhookReplayRequest');

export const replayOut = z.object({ requeued: z.number().int(), first_position: z.string().nullable(), last_position: z.string().nullable() });

export const pingOut = z.object({
  message_id: z.string(),
  delivered: z.boolean(),
  status_code: z.number().int().nullable(),
  latency_ms: z.number().int(),
  error: z.string().nullable(),
});

/** What /readyz reports about outgoing deliveries (it does not make the service unready). */
export const webhookHealthOut = z
  .object({
    disabled_endpoints: z.array(z.object({ id: z.string(), url: z.string(), since: outDateTime.nullable() }).strict()),
    revenuecat: z
      .object({
        refused: z.number().int().min(0).openapi({ description: 'Fulfilments RevenueCat refused for good (counted up to 1000)' }),
        recent_refusals: z.array(
          z
            .object({
              message_id: z.string(),
              action: z.string(),
              position: z.string(),
              status_code: z.number().int().nullable(),
              error: z.string().nullable(),
            })
            .strict(),
        ),
      })
      .strict()
      .nullable()
      .openapi({ description: 'null when REVENUECAT_SECRET_API_KEY is not set' }),
  })
  .strict()
  .openapi({ description: 'Disabled webhook endpoints and refused RevenueCat fulfilments; null where not reported' });
