import { MESSAGE_TYPES } from '../../domain/webhooks/message-catalogue.js';
import { MAX_OVERLAP_SECONDS } from '../../domain/webhooks/webhook-endpoint.js';
import { dateTime, outDateTime } from './common.js';
import { z } from './zod-openapi.js';

/** Endpoint ids: like program ids, but starting with a letter or digit (`_…` ids are the service's own). */
export const webhookId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, 'must match [A-Za-z0-9][A-Za-z0-9_-]{0,63}')
  .openapi({ example: 'backend' });

/** Whose deliveries: an endpoint, or `_revenuecat` (the RevenueCat fulfilments). */
export const deliveriesOwner = z
  .union([webhookId, z.literal('_revenuecat')])
  .openapi({ type: 'string', example: 'backend', description: 'A webhook endpoint id, or _revenuecat for RevenueCat fulfilments' });

const position = z
  .string()
  .regex(/^\d{1,20}$/, 'must be a log position (digits)')
  .transform((value) => BigInt(value));

export const webhookBody = z
  .object({
    url: z.string().url().max(2000).openapi({ example: 'https://api.example.com/hooks/referrals' }),
    events: z
      .array(z.enum(MESSAGE_TYPES))
      .min(1)
      .max(MESSAGE_TYPES.length)
      .nullable()
      .optional()
      .openapi({ description: 'Message types delivered; null or absent = all' }),
    description: z.string().max(2000).nullable().optional(),
    enabled: z.boolean().optional(),
  })
  .openapi('WebhookRequest');

export const webhookOut = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()).nullable(),
    description: z.string().nullable(),
    enabled: z.boolean(),
    created_at: outDateTime,
    updated_at: outDateTime.nullable(),
    secret: z.string().optional().openapi({ description: 'Only when created or rotated: `whsec_` + base64 of 32 bytes; store it, it is not shown again' }),
  })
  .openapi('Webhook');

export const rotateSecretBody = z.object({ overlap_seconds: z.number().int().min(0).max(MAX_OVERLAP_SECONDS).default(86_400) }).openapi('RotateSecretRequest');

export const deliveriesQuery = z.object({
  status: z.enum(['pending', 'delivered', 'failed', 'dead']).optional(),
  after: position.optional().openapi({ type: 'string', description: 'Exclusive: deliveries of events after this log position' }),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
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

export const replayBody = z
  .object({
    after_position: position.optional().openapi({ type: 'string', description: 'Exclusive log position to replay from' }),
    since: dateTime.optional().openapi({ description: 'Replay events recorded at or after this time' }),
  })
  .refine((body) => (body.after_position === undefined) !== (body.since === undefined), {
    message: 'give exactly one of after_position and since',
    path: ['after_position'],
  })
  .openapi('WebhookReplayRequest');

export const replayOut = z.object({ requeued: z.number().int(), first_position: z.string().nullable(), last_position: z.string().nullable() });

export const pingOut = z.object({
  message_id: z.string(),
  delivered: z.boolean(),
  status_code: z.number().int().nullable(),
  latency_ms: z.number().int(),
  error: z.string().nullable(),
});
