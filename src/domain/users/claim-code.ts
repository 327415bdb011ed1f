import type { GrantedFact } from '../events/user-events.js';
import type { Decision } from '../decider.js';
import { DomainError, userNotFound } from '../domain-error.js';
import type { CodeType } from '../events/code-events.js';
import type { ClaimHold } from '../events/fraud-events.js';
import { expireDueRewards, type GrantSpec, grantRewards } from '../rewards/grant-and-expire.js';
import { type ConversionsFrom, conversionEvents } from './conversion.js';
import { claimWindowOpen, evolveUser, type UserState } from './user-state.js';

/** What the code resolves to, as far as the claimer is concerned. */
export interface ClaimTarget {
  code: string;
  type: CodeType;
  owner_id: string;
  program_id: string | null;
  /** The app user behind the code (referrer, or the user an affiliate is linked to). */
  owner_app_user_id: string | null;
  is_active: boolean;
  claimRewards: GrantSpec[];
  conversionRewards: GrantSpec[];
}

export interface ClaimCodeCommand {
  claim_id: string;
  code: string;
  /** null when no referral, promo or affiliate has this code. */
  target: ClaimTarget | null;
  now: Date;
  windowDays: number;
  /** CONVERSIONS_FROM (SPEC §11): what counts a claimer that is already premium as converted. */
  conversions?: ConversionsFrom;
  /** A fraud rule with action `hold` let the claim through (SPEC §13): recorded on the claim. */
  hold?: ClaimHold | null;
}

/**
 * Checks SPEC §5.1 steps 2–7 in order (the limit, step 8, is the code stream's rule) and
 * records the claim with the receiver's claim rewards.
 */
export function decideClaimCode(state: UserState, command: ClaimCodeCommand): Decision<{ granted: GrantedFact[] }> {
  checkClaim(state, command);
  const target = command.target!;
  const { now } = command;
  const claimed = {
    type: 'CodeClaimed' as const,
    data: {
      claim_id: command.claim_id,
      code: target.code,
      type: target.type,
      owner_id: target.owner_id,
      program_id: target.program_id,
      claimed_at: now.toISOString(),
      ...(command.hold ? { hold: command.hold } : {}),
    },
  };
  const expiries = expireDueRewards(state, now);
  let current = evolveUser(expiries.reduce(evolveUser, state), claimed);
  const grants = grantRewards(current, target.claimRewards, { type: 'claim', code: target.code, claim_id: command.claim_id }, command.claim_id, now);
  current = grants.reduce(evolveUser, current);
  const conversion = conversionEvents(current, target.conversionRewards, now, command.conversions);
  const events = [...expiries, claimed, ...grants, ...conversion];
  // rewards_granted lists the claim's rewards (SPEC §5.1); conversion rewards granted at the same
  // time (an already-premium claimer) show in the user's rewards.
  const granted = grants.flatMap((event) => (event.type === 'RewardGranted' ? [event.data] : []));
  return { events, result: { granted } };
}

/** Steps 2–7 of SPEC §5.1, first failure wins. */
export function checkClaim(state: UserState, command: ClaimCodeCommand): void {
  if (!state.exists) throw userNotFound();
  const { target } = command;
  if (target === null) throw new DomainError('CLAIM.CODE_NOT_FOUND', `Code ${JSON.stringify(command.code)} does not exist`, '/code');
  if (state.referred_by !== null) throw new DomainError('CLAIM.ALREADY_CLAIMED', 'The user has already claimed a code', '/code');
  if (target.code === state.referral_code || target.owner_app_user_id === state.app_user_id) {
    throw new DomainError('CLAIM.OWN_CODE', 'A user cannot claim its own code', '/code');
  }
  if (!claimWindowOpen(state, command.windowDays, command.now)) {
    throw new DomainError('CLAIM.NOT_ELIGIBLE', 'The claim window of this user has closed', '/code');
  }
  if (!target.is_active) throw new DomainError('CLAIM.CODE_INACTIVE', `Code ${target.code} is not active`, '/code');
  if (state.abandoned_claims.includes(command.claim_id)) {
    throw new DomainError('CLAIM.SLOT_LOST', 'The claim slot was released; retry with a new claim', '/code');
  }
}
