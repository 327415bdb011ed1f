import { inject, injectable } from 'tsyringe';
import { streams } from '../../domain/events/index.js';
import { decideReferralCounts, type ReferralCount, referralCountOf, type SenderReward } from '../../domain/users/count-referral.js';
import { userEvolver } from '../../domain/users/user-state.js';
import type { Clock } from '../../ports/clock.js';
import type { Ids } from '../../ports/ids.js';
import { TOKENS } from '../../ports/tokens.js';
import type { LoggedEvent } from '../event-log.js';
import { CatalogQueries } from '../queries/catalog-queries.js';
import { StreamExecutor } from '../stream-executor.js';
import { type Reaction, reactionContext } from './reaction-runner.js';

/**
 * The referrer's side of a referral: counts each claim, conversion and churn of its claimers
 * in the referrer's stream and grants the sender rewards that become due
 * (`decideReferralCounts`). Event ids derive from the causing event and the referrer remembers
 * the last cause it counted, so handling an event twice changes nothing.
 */
@injectable()
export class ReferralReactions implements Reaction {
  readonly name = 'referrals';
  readonly eventTypes = ['CodeClaimed', 'UserConverted', 'UserChurned'] as const;

  constructor(
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(CatalogQueries) private readonly catalog: CatalogQueries,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Ids) private readonly ids: Ids,
  ) {}

  async handle(event: LoggedEvent): Promise<void> {
    await this.handleBatch([event]);
  }

  /**
   * One append per referrer for all of a page's events about its claimers: the referrer's state
   * is loaded once and each count is decided on the state the previous one left, so a burst of
   * claims on one code costs a few appends, not one per claim.
   */
  async handleBatch(events: LoggedEvent[]): Promise<void> {
    const byReferrer = new Map<string, ReferralCount[]>();
    for (const event of events) {
      const count = referralCountOf(event);
      if (count === null) continue;
      const list = byReferrer.get(count.referredBy.owner_id) ?? [];
      list.push(count);
      byReferrer.set(count.referredBy.owner_id, list);
    }
    for (const [referrer, counts] of byReferrer) await this.count(referrer, counts);
  }

  private async count(referrer: string, counts: ReferralCount[]): Promise<void> {
    const senderRewards = await this.senderRewards(referrer);
    const last = counts[counts.length - 1]!.cause as LoggedEvent;
    await this.executor.execute(
      streams.user(referrer),
      userEvolver,
      (state) => decideReferralCounts(state, counts, senderRewards, this.clock.now(), (...parts) => this.ids.derived(...parts)),
      reactionContext(last, this.name),
    );
  }

  private async senderRewards(referrer: string): Promise<SenderReward[]> {
    const state = await this.catalog.user(referrer);
    const program = state?.program_id ? await this.catalog.program(state.program_id) : null;
    return program ? this.catalog.resolveEntries(program.rewards.sender) : [];
  }
}
