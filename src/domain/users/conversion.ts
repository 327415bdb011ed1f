import type { NewDomainEvent } from '../decider.js';
import { type GrantSpec, grantRewards } from '../rewards/grant-rewards.js';
import { evolveUser, type UserState } from './user-state.js';

/** A claimer converts when premium and not on trial; it churns when premium ends after that. */
export function isConverting(state: UserState): boolean {
  return state.referred_by !== null && state.converted_at === null && state.is_premium === true && state.is_trial !== true;
}

export function isChurning(state: UserState): boolean {
  return state.converted_at !== null && state.churned_at === null && state.is_premium === false;
}

/** UserConverted (+ the receiver's conversion rewards) or UserChurned, when the profile says so. */
export function conversionEvents(state: UserState, conversionRewards: GrantSpec[], now: Date): NewDomainEvent[] {
  const referredBy = state.referred_by;
  if (referredBy === null) return [];
  const { claimed_at: _claimedAt, ...fact } = referredBy;
  if (isConverting(state)) {
    const converted: NewDomainEvent = { type: 'UserConverted', data: { converted_at: now.toISOString(), referred_by: fact } };
    const grants = grantRewards(
      evolveUser(state, converted),
      conversionRewards,
      { type: 'conversion', code: fact.code },
      `${fact.claim_id}/conversion`,
      now,
    );
    return [converted, ...grants];
  }
  if (isChurning(state)) {
    return [{ type: 'UserChurned', data: { churned_at: now.toISOString(), referred_by: fact } }];
  }
  return [];
}
