import { z } from 'zod';
import { isoDateTime } from '../rewards/reward-schemas.js';

/** Events of the `webhook-{id}` stream: an outgoing webhook endpoint's configuration (SPEC §12). */

const webhookEndpointSchema = z.object({
  id: z.string(),
  url: z.string(),
  /** Message types delivered; null = all. */
  events: z.array(z.string()).nullable(),
  description: z.string().nullable(),
  enabled: z.boolean(),
  created_at: isoDateTime,
  updated_at: isoDateTime.nullable(),
});
export type WebhookEndpoint = z.infer<typeof webhookEndpointSchema>;

export const webhookEvents = {
  /** Carries the first signing secret: the log is readable with the secret key only, like the secret itself. */
  WebhookEndpointCreated: z.object({ webhook: webhookEndpointSchema, secret: z.string() }),
  WebhookEndpointUpdated: z.object({ webhook: webhookEndpointSchema }),
  /** A new secret signs from now on; the previous ones keep signing until `previous_expires_at`. */
  WebhookSecretRotated: z.object({ id: z.string(), secret: z.string(), rotated_at: isoDateTime, previous_expires_at: isoDateTime }),
  /** Disabled by the delivery engine (410 Gone, or failing continuously), not by an operator. */
  WebhookEndpointDisabled: z.object({ id: z.string(), disabled_at: isoDateTime, reason: z.string() }),
  WebhookEndpointDeleted: z.object({ id: z.string(), deleted_at: isoDateTime }),
};
