import { inject, injectable } from 'tsyringe';
import { streams } from '../../domain/events/index.js';
import { decideReceiveNotification, inboundEvolver } from '../../domain/revenue/inbound-notification.js';
import { notificationKey, type RevenueNotification, type RevenueProvider } from '../../domain/revenue/revenue-notification.js';
import type { Clock } from '../../ports/clock.js';
import type { Ids } from '../../ports/ids.js';
import type { Logger } from '../../ports/logger.js';
import type { RateLimitStore } from '../../ports/rate-limit-store.js';
import { WriteRecordedError } from '../../ports/read-consistency.js';
import { TOKENS } from '../../ports/tokens.js';
import type { CommandContext } from '../event-log.js';
import { CommandExecutor } from '../command-executor.js';
import { CustomerErasureLock } from '../privacy/customer-erasure-lock.js';
import { StreamExecutor } from '../stream-executor.js';
import { RevenueApplier } from './revenue-applier.js';
import { RevenueMatcher } from './revenue-matcher.js';

export type InboundStatus = 'applied' | 'duplicate' | 'unmatched';

/** Refused notifications kept per provider and minute (RevenueInbox.reject). */
export const REJECTIONS_KEPT_PER_MINUTE = 10;

/**
 * Takes in a verified notification (SPEC §11): keeps it in its own stream, whose id derives from
 * the provider's notification id (a repeat or a concurrent copy finds the stream there and
 * changes nothing), then records it on its user's stream when the user is known. An unmatched
 * notification stays kept; the revenue reaction applies it when its user appears.
 */
@injectable()
export class RevenueInbox {
  constructor(
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(RevenueMatcher) private readonly matcher: RevenueMatcher,
    @inject(RevenueApplier) private readonly applier: RevenueApplier,
    @inject(CommandExecutor) private readonly commands: CommandExecutor,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Ids) private readonly ids: Ids,
    @inject(CustomerErasureLock) private readonly customerLock: CustomerErasureLock,
    @inject(TOKENS.RateLimitStore) private readonly rateLimits: RateLimitStore,
    @inject(TOKENS.Logger) private readonly logger: Logger,
  ) {}

  async receive(notification: RevenueNotification, context: CommandContext): Promise<InboundStatus> {
    const key = notificationKey(notification.provider, notification.notification_id);
    const receivedId = this.ids.derived('inbound', key);
    // Matched and kept in one step with respect to an erasure of the customer's user (CustomerErasureLock).
    const customers = notification.match.customer_id ? [notification.match.customer_id] : [];
    const { appUserId, received } = await this.customerLock.run(customers, async () => {
      const appUserId = notification.kind === 'other' ? null : await this.matcher.match(notification);
      const received = await this.executor.execute(
        streams.inbound(notification.provider, notification.notification_id),
        inboundEvolver,
        (state) => decideReceiveNotification(state, notification, appUserId, receivedId, this.clock.now()),
        { ...context, causation_id: context.causation_id },
      );
      return { appUserId, received };
    });
    if (!received.result.first) {
      // Received before and matched then: it may not be applied yet (the process died between the
      // two appends). Applying it now (once: the applier knows what is recorded) keeps the order
      // the provider sent things in: a refund sent after this answer finds its purchase recorded.
      const matched = received.result.app_user_id;
      if (matched !== null && notification.kind !== 'other') {
        const applied = await this.applier.apply(notification, receivedId, matched, { ...context, causation_id: receivedId });
        await this.commands.afterCommit(applied.position ?? received.position, context);
      }
      return 'duplicate';
    }
    let position = received.position;
    let status: InboundStatus = notification.kind === 'other' ? 'applied' : 'unmatched';
    if (appUserId !== null && notification.kind !== 'other') {
      const applied = await this.applier.apply(notification, receivedId, appUserId, { ...context, causation_id: receivedId });
      status = applied.status === 'unmatched' ? 'unmatched' : 'applied';
      position = applied.position ?? position;
    }
    await this.commands.afterCommit(position, context);
    return status;
  }

  /**
   * A refused notification, kept without its payload (who sent what is not trusted). The routes
   * take no key, so anyone can send these: at most REJECTIONS_KEPT_PER_MINUTE are kept per
   * provider (counted across instances), enough to diagnose a wrong secret; the rest are answered
   * alike and not kept, so a flood cannot grow the log without bound. Once a minute says so in the log.
   * One the provider signed (`authenticated`: for another app, package or environment) is always
   * kept, outside that budget (a flood cannot hide it), once per notification id: anyone holding
   * one can send it again.
   */
  async reject(
    provider: RevenueProvider,
    reason: string,
    context: CommandContext,
    authenticated: { notificationId: string | null } | null = null,
  ): Promise<void> {
    const now = this.clock.now().getTime();
    const { points } = authenticated !== null ? { points: 0 } : await this.rateLimits.hit(`inbound-rejections:${provider}`, 1, 60_000, now);
    if (points > REJECTIONS_KEPT_PER_MINUTE) {
      if (points === REJECTIONS_KEPT_PER_MINUTE + 1) {
        this.logger.warn({ provider, kept: REJECTIONS_KEPT_PER_MINUTE }, 'rejected notifications past the budget this minute are answered 401 and not kept');
      }
      return;
    }
    // A notification the provider signed (for another app, or another environment) can be sent
    // again by anyone holding it: kept once per notification id, in a stream named after it.
    const notificationId = authenticated?.notificationId ?? null;
    const id = notificationId === null ? this.ids.uuid() : this.ids.derived('inbound-rejected', provider, notificationId);
    const event = {
      id,
      type: 'NotificationRejected' as const,
      data: {
        provider,
        received_at: this.clock.now().toISOString(),
        reason: reason.slice(0, 500),
        notification_id: notificationId,
      },
    };
    const { position } = await this.executor.executeOnLatest(streams.inboundRejected(id), (kept) => ({ events: kept ? [] : [event], result: null }), context);
    if (position === null) return;
    // The answer is the 401 whatever the read models show: one that does not show the rejection
    // yet is no reason to tell the sender to send again.
    await this.commands.afterCommit(position, context).catch((error: unknown) => {
      if (!(error instanceof WriteRecordedError)) throw error;
    });
  }
}
