import type { Decision } from '../decider.js';
import type { UserState } from './user-state.js';

/**
 * Repairs a claim whose slot was taken but whose claim never reached the user stream.
 * Result `claimed` means the claim did happen (keep the slot); `abandoned` means release it.
 */
export function decideAbandonClaim(state: UserState, claimId: string, code: string): Decision<'claimed' | 'abandoned'> {
  if (state.referred_by?.claim_id === claimId) return { events: [], result: 'claimed' };
  if (state.abandoned_claims.includes(claimId)) return { events: [], result: 'abandoned' };
  return { events: [{ type: 'ClaimAbandoned', data: { claim_id: claimId, code } }], result: 'abandoned' };
}
