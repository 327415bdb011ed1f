import { type WebhookDoc, WEBHOOKS } from '../../../projections/webhooks.js';
import type { ReadStore } from '../../ports/read-store.js';
import type { WebhookOutbox } from '../../ports/webhook-outbox.js';
import { REVENUECAT_ENDPOINT } from './webhook-feeder.js';

const SHOWN_REFUSALS = 10;

/**
 * What /readyz reports about outgoing deliveries (it does not make the service unready):
 * endpoints the engine or an operator disabled, and RevenueCat fulfilments refused for good.
 */
export async function webhookHealth(readStore: ReadStore, outbox: WebhookOutbox, fulfilment: boolean) {
  const disabled = await readStore.find<WebhookDoc>(WEBHOOKS, { where: { enabled: false }, limit: 100 });
  const refusals = fulfilment ? await outbox.list(REVENUECAT_ENDPOINT, { status: 'dead', limit: 1_000 }) : [];
  return {
    disabled_endpoints: disabled.map((endpoint) => ({ id: endpoint.id, url: endpoint.url, since: endpoint.updated_at })),
    revenuecat: fulfilment
      ? {
          refused: refusals.length,
          recent_refusals: refusals.slice(-SHOWN_REFUSALS).map((message) => ({
            message_id: message.message_id,
            action: message.event_type,
            position: message.position.toString(),
            status_code: message.last_status_code,
            error: message.last_error,
          })),
        }
      : null,
  };
}
