import type { Decision } from '../decider.js';
import type { UserState } from './user-state.js';

/**
 * Repairs a claim whose slot was taken but whose claim never reached the user stream.
 * Result `claimed` means the claim did happen (keep the slot); `abandoned` means release it.
 * With `mayBeInFlight` (a slot taken moments ago), a claim of a user not yet claimed is left
 * alone (`pending`): its request may still record it. A user claimed with another claim can
 * never record this one, and a claim abandoned before is settled, whatever their age.
 */
export function decideAbandonClaim(state: UserState, claimId: string, code: string, mayBeInFlight = false): Decision<'claimed' | 'abandoned' | 'pending'> {
  if (state.referred_by?.claim_id === claimId) return { events: [], result: 'claimed' };
  if (state.abandoned_claims.includes(claimId)) return { events: [], result: 'abandoned' };
  if (mayBeInFlight && state.referred_by === null) return { events: [], result: 'pending' };
  return { events: [{ type: 'ClaimAbandoned', data: { claim_id: claimId, code } }], result: 'abandoned' };
}
