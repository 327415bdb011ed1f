import type { Decision, NewDomainEvent } from '../decider.js';
import type { HeldGrant } from '../events/fraud-events.js';
import type { ReviewDecision } from '../fraud/review.js';
import { expireDueRewards, type GrantSpec, grantRewards } from '../rewards/grant-and-expire.js';
import { evolveUser, type UserState } from './user-state.js';

function grantSpecOf(held: HeldGrant): GrantSpec {
  const { key, kind, credits } = held.reward;
  return { ...held, reward: { key, kind, ...(credits === null ? {} : { credits }) } };
}

export interface ReleaseHeldRewardsCommand {
  review_id: string;
  decision: ReviewDecision;
  now: Date;
}

/**
 * A review of a held claim was decided: in the referrer's stream the held rewards are granted
 * (approved) or dropped (rejected), once. The referrer's state knows which reviews still hold
 * rewards, so deciding again (a retried request, the review reaction after a crash, dozens of
 * concurrent approvals) finds nothing held and changes nothing.
 */
export function decideReleaseHeldRewards(state: UserState, command: ReleaseHeldRewardsCommand): Decision<{ granted: number }> {
  const held = state.held_rewards.find((one) => one.review_id === command.review_id);
  if (!state.exists || held === undefined) return { events: [], result: { granted: 0 } };
  const { review_id, rule_id, kind } = held;
  const events: NewDomainEvent[] = [...expireDueRewards(state, command.now)];
  events.push({ type: 'HeldRewardsReleased', data: { review_id, rule_id, kind, decision: command.decision } });
  if (command.decision === 'rejected' || held.program_id === null || held.rewards.length === 0) return { events, result: { granted: 0 } };
  const current = events.reduce(evolveUser, state);
  const grants = grantRewards(
    current,
    held.rewards.map(grantSpecOf),
    { type: 'referrals', variant: held.variant, count: held.count, claimer: held.claimer, program_id: held.program_id },
    `${review_id}/approved`,
    command.now,
  );
  return { events: [...events, ...grants], result: { granted: grants.length } };
}
