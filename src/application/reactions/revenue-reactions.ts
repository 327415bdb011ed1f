import { inject, injectable } from 'tsyringe';
import {
  CLAWBACK_GRANTS,
  clawbackClaimer,
  INBOUND,
  links,
  REVENUE_LINKS,
  REVENUE_PENDING,
  type RefundedConversion,
} from '../../../projections/revenue-index.js';
import type { Config } from '../../config.js';
import { appUserIdOf, streams } from '../../domain/events/index.js';
import type { PurchaseRef } from '../../domain/events/revenue-events.js';
import { accountToken } from '../../domain/revenue/account-token.js';
import type { RevenueProvider } from '../../domain/revenue/revenue-notification.js';
import { decideRevokeGrants, type GrantToRevoke } from '../../domain/revenue/revoke-grants.js';
import { POOLED_KINDS } from '../../domain/rewards/reward-kinds.js';
import { userEvolver } from '../../domain/users/user-state.js';
import type { Clock } from '../../ports/clock.js';
import { StoreUnavailableError } from '../../ports/event-store.js';
import type { Ids } from '../../ports/ids.js';
import type { ReadStore } from '../../ports/read-store.js';
import { TOKENS } from '../../ports/tokens.js';
import { type CommandContext, EventLog, type LoggedEvent } from '../event-log.js';
import { RevenueApplier } from '../revenue/revenue-applier.js';
import { RevenueMatcher } from '../revenue/revenue-matcher.js';
import { PoolAssignments } from '../shared-resources/pool-assignments.js';
import { StreamExecutor } from '../stream-executor.js';
import { type Reaction, reactionContext } from './reaction-runner.js';

interface ClawbackGrant extends GrantToRevoke {
  holder: string;
  claimer: string;
  revoked: boolean;
}

/**
 * The revenue process manager (SPEC §11):
 * - every received notification is applied to its user (again: a crash between keeping it and
 *   applying it is repaired; an unmatched one is matched again at its own position);
 * - a user that appears (registration, a new payment_customer_id, a transaction the app
 *   linked to it) gets the unmatched notifications that name it;
 * - a refund of the purchase that converted a referee revokes the grants with clawback
 *   `on_refund` made because of that conversion, on both sides; such a grant made after the
 *   refund (a held sender reward approved late) is revoked as soon as it is made.
 * Everything it appends has ids derived from the causing event, and what is already done is
 * read from the revenue index, so handling an event twice changes nothing.
 */
@injectable()
export class RevenueReactions implements Reaction {
  readonly name = 'revenue';
  readonly eventTypes = ['NotificationReceived', 'UserRegistered', 'UserProfileUpdated', 'TransactionLinked', 'RefundRecorded', 'RewardGranted'] as const;
  /** Resolves once the referral reactions (sender grants of a conversion) have passed a position. */
  referralsPassed: (position: bigint) => Promise<void> = async () => {};

  constructor(
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(EventLog) private readonly log: EventLog,
    @inject(RevenueMatcher) private readonly matcher: RevenueMatcher,
    @inject(RevenueApplier) private readonly applier: RevenueApplier,
    @inject(TOKENS.ReadStore) private readonly readStore: ReadStore,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Ids) private readonly ids: Ids,
    @inject(TOKENS.Config) private readonly config: Config,
    @inject(PoolAssignments) private readonly pools: PoolAssignments,
  ) {}

  async handle(event: LoggedEvent): Promise<void> {
    await this.handleBatch([event]);
  }

  /**
   * A page's events in log order. What a clawback waits for (the referral reactions past its
   * refund, the revenue index past the head) is waited for once for the page, not once per
   * refund: under a burst of refunds the waits, not the revocations, set the pace.
   */
  async handleBatch(events: LoggedEvent[]): Promise<void> {
    const clawbacks = events.filter((event) => event.type === 'RefundRecorded' && event.data.reverses_conversion);
    if (clawbacks.length > 0) await this.clawbackReady(clawbacks[clawbacks.length - 1]!.position);
    for (const event of events) await this.handleOne(event);
  }

  private async handleOne(event: LoggedEvent): Promise<void> {
    const context = reactionContext(event, this.name);
    switch (event.type) {
      case 'NotificationReceived': {
        const { notification } = event.data;
        if (notification.kind === 'other') return;
        const user = event.data.app_user_id ?? (await this.matcher.match(notification, event.position));
        if (user !== null) await this.applier.apply(notification, event.id, user, context);
        return;
      }
      case 'UserRegistered':
      case 'UserProfileUpdated':
      case 'TransactionLinked':
        return this.applyPending(event, context);
      case 'RefundRecorded':
        if (event.data.reverses_conversion) {
          const { provider, notification_id, transaction_id, original_transaction_id } = event.data;
          await this.clawBack(appUserIdOf(event.stream)!, { provider, notification_id, transaction_id, original_transaction_id }, event.id, context);
        }
        return;
      case 'RewardGranted':
        return this.clawBackLateGrant(event, context);
      default:
        return;
    }
  }

  private async applyPending(event: LoggedEvent, context: CommandContext): Promise<void> {
    const user = event.type === 'TransactionLinked' ? event.data.app_user_id : appUserIdOf(event.stream);
    if (user === null) return;
    const keys: string[] = [];
    if (event.type === 'TransactionLinked') {
      keys.push(links.transaction(event.data.provider, event.data.transaction_id));
    } else if (event.type === 'UserRegistered') {
      keys.push(links.user(user), links.token(accountToken(user, this.config.ACCOUNT_TOKEN_NAMESPACE)));
    }
    const customer =
      event.type === 'UserRegistered'
        ? event.data.payment_customer_id
        : event.type === 'UserProfileUpdated'
          ? (event.data.changes.payment_customer_id ?? null)
          : null;
    if (keys.length === 0 && !customer) return;
    if (!(await this.matcher.indexPassed(event.position))) throw new StoreUnavailableError('The revenue index is behind');
    // A customer's notifications go to the user they would match now (SPEC §11): its newest
    // holder, not one who set it and has since changed or cleared it, or passed it on.
    if (customer && (await this.matcher.customerHolderOf(customer))?.app_user_id === user) keys.push(links.customer(customer));
    if (keys.length === 0) return;
    const found = new Map<string, { provider: RevenueProvider; notification_id: string }>();
    for (const key of keys) {
      const pending = await this.readStore.find<{ notification_key: string; provider: RevenueProvider; notification_id: string }>(REVENUE_PENDING, {
        where: { match_key: key },
      });
      for (const item of pending) found.set(item.notification_key, item);
    }
    const waiting: Extract<LoggedEvent, { type: 'NotificationReceived' }>[] = [];
    for (const [notificationKey, item] of found) {
      const inbound = await this.readStore.get<{ status: string }>(INBOUND, notificationKey);
      if (inbound?.status !== 'unmatched') continue;
      const received = await this.log.first(streams.inbound(item.provider, item.notification_id));
      if (received?.type === 'NotificationReceived') waiting.push(received);
    }
    // In the order they arrived, as if the user had been there all along: a refund that came
    // before its purchase is still recorded first (whatever the notifications' ids or keys).
    waiting.sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
    for (const received of waiting) await this.applier.apply(received.data.notification, received.id, user, context);
  }

  /**
   * Sender grants of a conversion come from the referral reactions: a clawback waits until they
   * are past its refund (`through`), then until the index has them.
   */
  private async clawbackReady(through: bigint): Promise<void> {
    await this.referralsPassed(through);
    if (!(await this.matcher.indexPassed())) throw new StoreUnavailableError('The revenue index is behind');
  }

  /**
   * A grant with clawback `on_refund` made because of a conversion whose purchase was refunded
   * before it (a held reward approved after the refund): revoked now, as that refund's clawback
   * revoked the others, under the same event ids (so it is done once whoever gets there first).
   */
  private async clawBackLateGrant(event: Extract<LoggedEvent, { type: 'RewardGranted' }>, context: CommandContext): Promise<void> {
    const claimer = clawbackClaimer(event, appUserIdOf(event.stream));
    if (claimer === null) return;
    if (!(await this.matcher.indexPassed(event.position))) throw new StoreUnavailableError('The revenue index is behind');
    const refunded = await this.readStore.get<RefundedConversion & Record<string, unknown>>(REVENUE_LINKS, links.refundedConversion(claimer));
    // A grant made before the refund is the refund's own clawback's to revoke.
    if (refunded !== null && event.position > BigInt(refunded.position)) await this.clawBack(claimer, refunded.refund, refunded.event_id, context);
  }

  /** After `clawbackReady` for its refund; `refundEventId`: the refund's event, which the revocations' ids derive from. */
  private async clawBack(claimer: string, refund: PurchaseRef, refundEventId: string, context: CommandContext): Promise<void> {
    const grants = (await this.readStore.find(CLAWBACK_GRANTS, { where: { claimer } })) as unknown as ClawbackGrant[];
    const holders = [...new Set(grants.filter((grant) => !grant.revoked).map((grant) => grant.holder))];
    for (const holder of holders) {
      let revoked: GrantToRevoke[] = [];
      await this.executor.execute(
        streams.user(holder),
        userEvolver,
        (state, open: GrantToRevoke[]) =>
          decideRevokeGrants(state, {
            grants: open,
            claimer,
            refund,
            now: this.clock.now(),
            eventId: (grantId) => this.ids.derived(refundEventId, 'clawback', holder, grantId),
          }),
        context,
        {
          prepare: async ({ position }) => {
            if (!(await this.matcher.indexPassed(position))) throw new StoreUnavailableError('The revenue index is behind');
            const current = (await this.readStore.find(CLAWBACK_GRANTS, { where: { claimer, holder } })) as unknown as ClawbackGrant[];
            revoked = current.filter((grant) => !grant.revoked);
            return revoked;
          },
        },
      );
      // Pooled grants still waiting for a code leave their pool's line now, not when the pools
      // reaction gets to the revocation: a refill meanwhile would spend a one-time code on them.
      // (The pools reaction does it too; withdrawing is idempotent.)
      for (const grant of revoked.filter((one) => POOLED_KINDS.includes(one.kind))) {
        await this.pools.withdraw(grant.reward_key, grant.grant_id, holder, context);
      }
    }
  }
}
