import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A new endpoint signing secret: `whsec_` + base64 of 32 random bytes (SPEC §12). */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Standard Webhooks headers for `body`, signed by every secret given (during a rotation's
 * overlap two `v1,` entries, space-separated), with the `standardwebhooks` library.
 */
export function signWebhook(messageId: string, sentAt: Date, body: string, secrets: readonly string[]): SignedHeaders {
  const signatures = secrets.map((secret) => new Webhook(secret).sign(messageId, sentAt, body));
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
