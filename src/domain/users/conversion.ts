import type { NewDomainEvent } from '../decider.js';
import { type GrantSpec, grantRewards } from '../rewards/grant-and-expire.js';
import { evolveUser, type UserState } from './user-state.js';

/**
 * What counts a conversion or a churn (CONVERSIONS_FROM, SPEC §11): the client's is_premium
 * (`client`, the seed's behaviour), verified store/billing revenue only (`verified`), or the
 * first of either (`both`; a conversion is never counted twice).
 */
export const CONVERSION_SOURCES = ['client', 'verified', 'both'] as const;
export type ConversionsFrom = (typeof CONVERSION_SOURCES)[number];

function clientPremium(state: UserState): boolean {
  return state.is_premium === true && state.is_trial !== true;
}

/** Which source, allowed by the policy, says the user is a paying premium user now; null: none. */
function premiumSource(state: UserState, policy: ConversionsFrom): 'client' | 'verified' | null {
  if (policy !== 'client' && state.verified_premium === true) return 'verified';
  if (policy !== 'verified' && clientPremium(state)) return 'client';
  return null;
}

/** A claimer converts when premium and not on trial; it churns when premium ends after that. */
export function isConverting(state: UserState, policy: ConversionsFrom = 'client'): boolean {
  return state.referred_by !== null && state.converted_at === null && premiumSource(state, policy) !== null;
}

export function isChurning(state: UserState, policy: ConversionsFrom = 'client'): boolean {
  if (state.converted_at === null || state.churned_at !== null) return false;
  return (policy !== 'verified' && state.is_premium === false) || (policy !== 'client' && state.verified_premium === false);
}

/** UserConverted (+ the receiver's conversion rewards) or UserChurned, when the profile says so. */
export function conversionEvents(state: UserState, conversionRewards: GrantSpec[], now: Date, policy: ConversionsFrom = 'client'): NewDomainEvent[] {
  const referredBy = state.referred_by;
  if (referredBy === null) return [];
  const { claimed_at: _claimedAt, program_id, ...fact } = referredBy;
  if (isConverting(state, policy)) {
    const source = premiumSource(state, policy)!;
    const converted: NewDomainEvent = {
      type: 'UserConverted',
      data: {
        converted_at: now.toISOString(),
        referred_by: fact,
        source,
        purchase: source === 'verified' ? state.verified_purchase : null,
        program_id: program_id ?? null,
      },
    };
    const grants = grantRewards(evolveUser(state, converted), conversionRewards, { type: 'conversion', code: fact.code }, `${fact.claim_id}/conversion`, now);
    return [converted, ...grants];
  }
  if (isChurning(state, policy)) {
    return [{ type: 'UserChurned', data: { churned_at: now.toISOString(), referred_by: fact, program_id: program_id ?? null } }];
  }
  return [];
}
