import { inject, injectable } from 'tsyringe';
import { appUserIdOf, streams } from '../../domain/events/index.js';
import { judgeConversion } from '../../domain/fraud/claim-rules.js';
import { decideOpenReview, reviewEvolver } from '../../domain/fraud/review.js';
import { decideReferralCounts, type ReferralCount, referralCountOf, type SenderReward } from '../../domain/users/count-referral.js';
import { userEvolver } from '../../domain/users/user-state.js';
import type { Clock } from '../../ports/clock.js';
import type { Ids } from '../../ports/ids.js';
import { TOKENS } from '../../ports/tokens.js';
import type { LoggedEvent } from '../event-log.js';
import { FraudRuleQueries } from '../fraud/fraud-rule-queries.js';
import { ReviewDecisions } from '../fraud/review-decisions.js';
import { CatalogQueries } from '../queries/catalog-queries.js';
import { StreamExecutor } from '../stream-executor.js';
import { type Reaction, reactionContext } from './reaction-runner.js';

/**
 * The referrer's side of a referral: counts each claim, conversion and churn of its claimers
 * in the referrer's stream and grants the sender rewards that become due (or holds them for a
 * review, fraud rules) — `decideReferralCounts` — and finishes decided reviews there. Event ids
 * derive from the causing event and the referrer remembers the last cause it counted, so
 * handling an event twice changes nothing.
 */
@injectable()
export class ReferralReactions implements Reaction {
  readonly name = 'referrals';
  readonly eventTypes = ['CodeClaimed', 'UserConverted', 'UserChurned', 'ReviewApproved', 'ReviewRejected'] as const;

  constructor(
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(CatalogQueries) private readonly catalog: CatalogQueries,
    @inject(FraudRuleQueries) private readonly rules: FraudRuleQueries,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Ids) private readonly ids: Ids,
    @inject(ReviewDecisions) private readonly reviews: ReviewDecisions,
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
      const counted = referralCountOf(event);
      if (counted === null) continue;
      const list = byReferrer.get(counted.referredBy.owner_id) ?? [];
      list.push(counted);
      byReferrer.set(counted.referredBy.owner_id, list);
    }
    if (byReferrer.size > 0) {
      await this.judgeConversions([...byReferrer.values()].flat());
      for (const [referrer, counts] of byReferrer) await this.count(referrer, counts);
    }
    for (const event of events) await this.finishReview(event);
  }

  /**
   * A decided review's release in the referrer's stream (grant or drop the held rewards), when
   * the request that decided it did not get there (a crash between its two appends).
   * Idempotent: after the request did it, this changes nothing.
   */
  private async finishReview(event: LoggedEvent): Promise<void> {
    if (event.type !== 'ReviewApproved' && event.type !== 'ReviewRejected') return;
    await this.reviews.release(event.data.referrer, event.data.review_id, event.type === 'ReviewApproved' ? 'approved' : 'rejected', {
      correlation_id: String(event.metadata.correlation_id),
      causation_id: event.id,
      actor: 'process:referrals',
    });
  }

  /**
   * The rule `min_seconds_claim_to_conversion` (SPEC §13): a conversion sooner than `seconds`
   * after its claim has its sender rewards held for review or refused. Judged by the rules in
   * force when the conversion is counted; the claim time comes from the claimer's state.
   */
  private async judgeConversions(counts: ReferralCount[]): Promise<void> {
    const conversions = counts.filter((counted) => counted.figure === 'conversion');
    if (conversions.length === 0) return;
    const rules = (await this.rules.enabled()).filter((rule) => rule.kind === 'min_seconds_claim_to_conversion');
    if (rules.length === 0) return;
    for (const counted of conversions) {
      if (counted.cause.type !== 'UserConverted') continue;
      const claimer = (await this.executor.load(counted.cause.stream, userEvolver)).state;
      const claimedAt = claimer.referred_by?.claimed_at;
      if (claimedAt === undefined) continue;
      const verdict = judgeConversion(rules, claimedAt, counted.cause.data.converted_at);
      if (verdict.reject) counted.refused = { rule_id: verdict.reject.rule_id, kind: verdict.reject.kind };
      else if (verdict.hold) counted.hold = { rule_id: verdict.hold.rule_id, kind: verdict.hold.kind, review_id: this.ids.derived('review', counted.cause.id) };
    }
  }

  private async count(referrer: string, counts: ReferralCount[]): Promise<void> {
    const senderRewards = await this.senderRewards(referrer);
    const contexts = new Map(counts.map(({ cause }) => [cause.id, reactionContext(cause as LoggedEvent, this.name)]));
    await this.executor.execute(
      streams.user(referrer),
      userEvolver,
      (state) => decideReferralCounts(state, counts, senderRewards, this.clock.now(), (...parts) => this.ids.derived(...parts)),
      reactionContext(counts[counts.length - 1]!.cause as LoggedEvent, this.name),
      // Each count's events name the claim, conversion or churn that caused them.
      { contextsOf: (decision) => decision.result.causes.map((cause) => contexts.get(cause)!) },
    );
    // After the held rewards are in the referrer's stream, so an approval always finds them. Opening
    // is idempotent: after a crash the page is handled again and an open review stays as it is.
    for (const { cause, figure, referredBy, hold } of counts) {
      const event = cause as LoggedEvent;
      if (!hold || figure === 'churn') continue;
      const opened = {
        ...hold,
        referrer,
        claimer: appUserIdOf(event.stream)!,
        code: referredBy.code,
        variant: figure,
        opened_at: this.clock.now().toISOString(),
      };
      await this.executor.execute(streams.review(hold.review_id), reviewEvolver, (state) => decideOpenReview(state, opened), {
        correlation_id: String(event.metadata.correlation_id),
        causation_id: event.id,
        actor: 'process:referrals',
      });
    }
  }

  private async senderRewards(referrer: string): Promise<SenderReward[]> {
    const state = await this.catalog.user(referrer);
    const program = state?.program_id ? await this.catalog.program(state.program_id) : null;
    return program ? this.catalog.resolveEntries(program.rewards.sender) : [];
  }
}
