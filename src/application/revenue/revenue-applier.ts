import { inject, injectable } from 'tsyringe';
import { INBOUND, links, REVENUE_LINKS } from '../../../projections/revenue-index.js';
import type { Config } from '../../config.js';
import { streams } from '../../domain/events/index.js';
import { decideRecordRevenue } from '../../domain/revenue/record-revenue.js';
import { notificationKey, type RevenueNotification } from '../../domain/revenue/revenue-notification.js';
import { type UserState, userEvolver } from '../../domain/users/user-state.js';
import type { Clock } from '../../ports/clock.js';
import { StoreUnavailableError } from '../../ports/event-store.js';
import type { Ids } from '../../ports/ids.js';
import type { ReadStore } from '../../ports/read-store.js';
import { TOKENS } from '../../ports/tokens.js';
import type { CommandContext } from '../event-log.js';
import { CodeResolver } from '../queries/code-resolver.js';
import { StreamExecutor } from '../stream-executor.js';
import { RevenueMatcher } from './revenue-matcher.js';

export type AppliedStatus = 'applied' | 'duplicate' | 'unmatched';

/**
 * Records a received notification on its user's stream, once. Whether it is already recorded
 * comes from the revenue index (read once it has passed the user stream's last event, so a
 * concurrent recording is either seen there or makes the append conflict and re-decide).
 */
@injectable()
export class RevenueApplier {
  constructor(
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(RevenueMatcher) private readonly matcher: RevenueMatcher,
    @inject(CodeResolver) private readonly codes: CodeResolver,
    @inject(TOKENS.ReadStore) private readonly readStore: ReadStore,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Ids) private readonly ids: Ids,
    @inject(TOKENS.Config) private readonly config: Config,
  ) {}

  /** `receivedEventId`: the id of the NotificationReceived event (its record's id derives from it). */
  async apply(
    notification: RevenueNotification,
    receivedEventId: string,
    appUserId: string,
    context: CommandContext,
  ): Promise<{ status: AppliedStatus; position: bigint | null }> {
    const key = notificationKey(notification.provider, notification.notification_id);
    const executed = await this.executor.execute(
      streams.user(appUserId),
      userEvolver,
      (state, prepared: Awaited<ReturnType<RevenueApplier['prepare']>>) => {
        if (!state.exists) return { events: [], result: { status: 'unmatched' as AppliedStatus } };
        return decideRecordRevenue(state, {
          notification,
          event_id: this.ids.derived(receivedEventId, 'record'),
          conversions: this.config.CONVERSIONS_FROM,
          ...prepared,
        });
      },
      context,
      { prepare: ({ state, position }) => this.prepare(state, position, key, notification, appUserId) },
    );
    return { status: executed.result.status, position: executed.position };
  }

  private async prepare(state: UserState, position: bigint | null, key: string, notification: RevenueNotification, appUserId: string) {
    if (!(await this.matcher.indexPassed(position))) throw new StoreUnavailableError('The revenue index is behind; retry');
    const inbound = await this.readStore.get<{ status: string; app_user_id: string | null }>(INBOUND, key);
    const { provider, transaction_id, original_transaction_id } = notification;
    // A purchase: any refund of its transaction or original transaction. A refund: the link it writes itself, from an earlier one.
    const refundKeys =
      notification.kind === 'refund'
        ? transaction_id !== null || original_transaction_id !== null
          ? [links.refund(provider, transaction_id, original_transaction_id)]
          : []
        : [
            ...(transaction_id !== null ? [links.refund(provider, transaction_id, null)] : []),
            ...(original_transaction_id !== null ? [links.refund(provider, null, original_transaction_id)] : []),
          ];
    // A purchase or renewal: a record of its transaction (for any user: one payment counts once), under another notification id.
    const paidKey =
      (notification.kind === 'purchase' || notification.kind === 'renewal') && transaction_id !== null ? links.paid(provider, transaction_id, null) : null;
    const lookedUp = ['purchase', 'renewal', 'refund'].includes(notification.kind) ? [...refundKeys, ...(paidKey === null ? [] : [paidKey])] : [];
    const found =
      lookedUp.length > 0 ? await this.readStore.getMany<{ refunded_minor?: number }>(REVENUE_LINKS, lookedUp) : new Map<string, { refunded_minor?: number }>();
    const refunds = refundKeys.flatMap((refundKey) => (found.has(refundKey) ? [found.get(refundKey)!] : []));
    // A refund: whether the purchase it takes back counted for a code (unknown until that purchase is recorded).
    const refunded = notification.refunded_transaction_id ?? transaction_id;
    const paid =
      notification.kind === 'refund' && (refunded ?? original_transaction_id) !== null
        ? await this.readStore.get<{ attributed: boolean }>(REVENUE_LINKS, links.paid(provider, refunded, original_transaction_id))
        : null;
    return {
      already_recorded: inbound?.status === 'applied' && inbound.app_user_id === appUserId,
      already_refunded: refunds.length > 0,
      already_paid: paidKey !== null && found.has(paidKey),
      refunded_before_minor: notification.kind === 'refund' ? (refunds[0]?.refunded_minor ?? null) : null,
      refunded_purchase_attributed: paid?.attributed ?? null,
      conversionRewards: await this.conversionRewards(state),
      now: this.clock.now(),
    };
  }

  private async conversionRewards(state: UserState) {
    if (state.referred_by === null || state.converted_at !== null || this.config.CONVERSIONS_FROM === 'client') return [];
    const target = await this.codes.claimTarget(await this.codes.resolve(state.referred_by.code));
    return target?.conversionRewards ?? [];
  }
}
