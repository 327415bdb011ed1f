import type { Decision, NewDomainEvent } from '../decider.js';
import type { ClaimHold, HeldGrant, RuleRef } from '../events/fraud-events.js';
import { type DomainEvent, streams } from '../events/index.js';
import type { ReferredByFact } from '../events/user-events.js';
import { expireDueRewards, type GrantSpec, grantRewards } from '../rewards/grant-and-expire.js';
import { REPEATABLE_SENDER_KINDS } from '../rewards/reward-kinds.js';
import type { Activation } from '../rewards/reward-schemas.js';
import { evolveUser, foldUserEvents, type UserState } from './user-state.js';

type ReferralFigure = 'claim' | 'conversion' | 'churn';

export interface SenderReward extends GrantSpec {
  activation: Activation;
}

export interface CountReferralCommand {
  figure: ReferralFigure;
  claimer: string;
  code: string;
  program_id: string | null;
  senderRewards: SenderReward[];
  /** Id and global position of the claimer's event that caused this count. */
  cause_id: string;
  cause_position: bigint;
  now: Date;
  /** A fraud rule put the claim (or conversion) on hold: the rewards now due wait for its review. */
  hold?: ClaimHold | null;
  /** A fraud rule with action `reject` refused the sender rewards of this conversion (it still counts). */
  refused?: RuleRef | null;
}

/** The grant a held reward becomes when its review is approved. */
function heldGrantOf(reward: SenderReward): HeldGrant {
  const { key, kind, credits } = reward.reward;
  return { reward: { key, kind, credits: credits ?? null }, deactivation: reward.deactivation, ...(reward.clawback ? { clawback: reward.clawback } : {}) };
}

/**
 * Whether a sender reward is due when the counted figure reaches `count`: every multiple of
 * `amount`, at most `limit` times (0 = unlimited); kinds without a limit only once, at `amount`.
 */
export function senderRewardDue(reward: SenderReward, count: number): boolean {
  const amount = reward.activation.amount ?? 1;
  if (!REPEATABLE_SENDER_KINDS.includes(reward.reward.kind)) return count === amount;
  const limit = reward.activation.limit ?? 0;
  return count % amount === 0 && (limit === 0 || count / amount <= limit);
}

/** Counts one claim/conversion/churn of a referrer's claimer and grants the sender rewards now due. */
export function decideCountReferral(state: UserState, command: CountReferralCommand): Decision<null> {
  if (!state.exists) return { events: [], result: null };
  if (state.last_cause_position !== null && BigInt(state.last_cause_position) >= command.cause_position) {
    return { events: [], result: null };
  }
  const cause_position = command.cause_position.toString();
  const events: NewDomainEvent[] = [...expireDueRewards(state, command.now)];
  let count: number;
  if (command.figure === 'claim') {
    count = state.stats.claims + 1;
    events.push({ type: 'ReferralClaimCounted', data: { claimer: command.claimer, code: command.code, claims: count, cause_position } });
  } else if (command.figure === 'conversion') {
    count = state.stats.conversions + 1;
    events.push({ type: 'ReferralConversionCounted', data: { claimer: command.claimer, conversions: count, cause_position } });
  } else {
    count = state.stats.churns + 1;
    events.push({ type: 'ReferralChurnCounted', data: { claimer: command.claimer, churns: count, cause_position } });
    return { events, result: null };
  }
  const due = command.senderRewards.filter((reward) => reward.activation.variant === command.figure && senderRewardDue(reward, count));
  const variant = command.figure;
  if (command.hold) {
    const rewards = command.program_id === null ? [] : due.map(heldGrantOf);
    events.push({
      type: 'SenderRewardsHeld',
      data: { ...command.hold, claimer: command.claimer, code: command.code, variant, count, program_id: command.program_id, rewards },
    });
  } else if (command.refused) {
    events.push({ type: 'SenderRewardsRefused', data: { ...command.refused, claimer: command.claimer, code: command.code, variant, count } });
  } else if (due.length > 0 && command.program_id !== null) {
    const current = events.reduce(evolveUser, state);
    events.push(
      ...grantRewards(
        current,
        due,
        { type: 'referrals', variant: command.figure, count, claimer: command.claimer, program_id: command.program_id },
        `${command.cause_id}/sender`,
        command.now,
      ),
    );
  }
  return { events, result: null };
}

/** A claimer's event as the log holds it: what the referral reaction counts. */
export type ReferralCause = DomainEvent & { id: string; position: bigint; stream: string };

/** What a claimer's event counts for its referrer (its owner_id); null when it counts nothing. */
export interface ReferralCount {
  cause: ReferralCause;
  figure: ReferralFigure;
  referredBy: ReferredByFact;
  /** A fraud rule put this claim or conversion on hold. */
  hold?: ClaimHold | null;
  /** A `reject` rule refused this conversion's sender rewards. */
  refused?: RuleRef | null;
}

export function referralCountOf(cause: ReferralCause): ReferralCount | null {
  let count: ReferralCount;
  if (cause.type === 'CodeClaimed') count = { cause, figure: 'claim', referredBy: cause.data, hold: cause.data.hold ?? null };
  else if (cause.type === 'UserConverted') count = { cause, figure: 'conversion', referredBy: cause.data.referred_by };
  else if (cause.type === 'UserChurned') count = { cause, figure: 'churn', referredBy: cause.data.referred_by };
  else return null;
  return count.referredBy.type === 'referral' ? count : null;
}

/**
 * The referral reaction's decision for one referrer: its claimers' counts, in log order, each
 * decided on the state the previous one left. Event ids derive from the causing event
 * (`deriveId`: the Ids port's), so handling a cause twice can never write twice. The result
 * names each event's cause (its id), in the events' order, for the events' metadata.
 */
export function decideReferralCounts(
  referrer: UserState,
  counts: readonly ReferralCount[],
  senderRewards: SenderReward[],
  now: Date,
  deriveId: (...parts: string[]) => string,
): Decision<{ causes: string[] }> {
  const events: NewDomainEvent[] = [];
  const causes: string[] = [];
  let current = referrer;
  for (const { cause, figure, referredBy, hold, refused } of counts) {
    const decision = decideCountReferral(current, {
      figure,
      claimer: streams.idOf('user', cause.stream)!,
      code: referredBy.code,
      program_id: current.program_id,
      senderRewards,
      cause_id: cause.id,
      cause_position: cause.position,
      now,
      hold,
      refused,
    });
    for (const [index, next] of decision.events.entries()) {
      events.push({ ...next, id: deriveId(cause.id, 'referral', String(index)) });
      causes.push(cause.id);
    }
    current = foldUserEvents(current, decision.events);
  }
  return { events, result: { causes } };
}
