import type { Decision } from '../decider.js';
import type { PooledValue } from '../events/user-events.js';
import { expireDueRewards } from '../rewards/grant-rewards.js';
import type { UserState } from './user-state.js';

/** Records the expiry of every entry whose time has passed (the background sweep). */
export function decideExpireRewards(state: UserState, now: Date): Decision<number> {
  const events = expireDueRewards(state, now);
  return { events, result: events.length };
}

/** Gives a pooled one-time code to a granted entry that has none yet. */
export function decideAssignRewardValue(state: UserState, grantId: string, value: PooledValue, now: Date): Decision<boolean> {
  // An entry that expired before a code reached it keeps none.
  const entry = state.entries.find((candidate) => candidate.entry_id === grantId);
  if (!entry || entry.value !== null) return { events: [], result: false };
  return { events: [{ type: 'RewardValueAssigned', data: { grant_id: grantId, value, assigned_at: now.toISOString() } }], result: true };
}

/**
 * Repairs a claim whose slot was taken but whose claim never reached the user stream.
 * Result `claimed` means the claim did happen (keep the slot); `abandoned` means release it.
 */
export function decideAbandonClaim(state: UserState, claimId: string, code: string): Decision<'claimed' | 'abandoned'> {
  if (state.referred_by?.claim_id === claimId) return { events: [], result: 'claimed' };
  if (state.abandoned_claims.includes(claimId)) return { events: [], result: 'abandoned' };
  return { events: [{ type: 'ClaimAbandoned', data: { claim_id: claimId, code } }], result: 'abandoned' };
}
