import type { Clock } from '../../ports/clock.js';
import type { WebhookOutbox } from '../../ports/webhook-outbox.js';

/** Messages forgotten per run of the job: one short write, whatever the backlog (the next run goes on). */
const RETENTION_BATCH = 5_000;

/**
 * The maintenance job that keeps the outbox bounded: messages delivered more than
 * `WEBHOOK_RETENTION_DAYS` ago are forgotten, so the outbox holds what is live (open messages,
 * dead ones waiting for an operator) and the recent past, not every message ever sent. Their
 * events stay in the log: `POST /admin/webhooks/{id}/replay` sends them again if need be.
 */
export function webhookRetention(outbox: WebhookOutbox, clock: Clock, retentionDays: number): Promise<number> {
  const before = new Date(clock.now().getTime() - retentionDays * 86_400_000).toISOString();
  return outbox.removeDelivered(before, RETENTION_BATCH);
}
