import { expect } from 'chai';
import { describe, it } from 'mocha';
import type { DomainEvent } from '../../../src/domain/events/index.js';
import { type ClaimCodeCommand, decideClaimCode } from '../../../src/domain/users/claim-code.js';
import { creditBalance, userEvolver } from '../../../src/domain/users/user-state.js';
import { deciderSpec } from '../../support/decider-spec.js';
import { at, claimTarget, DAY, event, interval, iso, MINUTE, programAssigned, registered, rewardGranted, spec, T0 } from '../../support/events.js';

const user = deciderSpec(userEvolver);

function claim(overrides: Partial<ClaimCodeCommand> = {}): ClaimCodeCommand {
  return { claim_id: 'claim-9', code: 'BOB234', target: claimTarget(), now: T0, windowDays: 7, ...overrides };
}

/** Ann, created now (window open), with her own referral code ANN234. */
const ann: DomainEvent[] = [registered('ann'), programAssigned('prog', 'ANN234')];

const earlierClaim = event('CodeClaimed', {
  claim_id: 'claim-1',
  code: 'PROMO1',
  type: 'promo',
  owner_id: 'PROMO1',
  program_id: null,
  claimed_at: T0.toISOString(),
});

describe('decideClaimCode (SPEC §5.1)', () => {
  describe('checks, in order, first failure wins', () => {
    it('2. NOT_FOUND.USER for an unknown user, before the code is looked at', () => {
      user
        .given([])
        .when((state) => decideClaimCode(state, claim({ target: null })))
        .thenError('NOT_FOUND.USER', 'path:/app_user_id');
    });

    it('3. CLAIM.CODE_NOT_FOUND for an unknown code, even when the user has already claimed', () => {
      user
        .given([...ann, earlierClaim])
        .when((state) => decideClaimCode(state, claim({ target: null })))
        .thenError('CLAIM.CODE_NOT_FOUND', '/code');
    });

    it('4. CLAIM.ALREADY_CLAIMED before own code, window and activity', () => {
      user
        .given([registered('ann', { first_seen_at: iso(-30 * DAY) }), programAssigned('prog', 'ANN234'), earlierClaim])
        .when((state) =>
          decideClaimCode(
            state,
            claim({ code: 'ANN234', target: claimTarget({ code: 'ANN234', owner_id: 'ann', owner_app_user_id: 'ann', is_active: false }) }),
          ),
        )
        .thenError('CLAIM.ALREADY_CLAIMED', '/code');
    });

    it('4. CLAIM.ALREADY_CLAIMED even for the very code the user claimed', () => {
      user
        .given([...ann, earlierClaim])
        .when((state) =>
          decideClaimCode(
            state,
            claim({ code: 'PROMO1', target: claimTarget({ code: 'PROMO1', type: 'promo', owner_id: 'PROMO1', owner_app_user_id: null }) }),
          ),
        )
        .thenError('CLAIM.ALREADY_CLAIMED');
    });

    it("5. CLAIM.OWN_CODE for the user's own referral code, before window and activity", () => {
      user
        .given([registered('ann', { first_seen_at: iso(-30 * DAY) }), programAssigned('prog', 'ANN234')])
        .when((state) =>
          decideClaimCode(
            state,
            claim({ code: 'ANN234', target: claimTarget({ code: 'ANN234', owner_id: 'ann', owner_app_user_id: 'ann', is_active: false }) }),
          ),
        )
        .thenError('CLAIM.OWN_CODE', '/code');
    });

    it('5. CLAIM.OWN_CODE for a code of an affiliate linked to the user', () => {
      user
        .given(ann)
        .when((state) =>
          decideClaimCode(
            state,
            claim({
              code: 'ANNSHOW',
              target: claimTarget({ code: 'ANNSHOW', type: 'affiliate', owner_id: 'aff-1', program_id: null, owner_app_user_id: 'ann' }),
            }),
          ),
        )
        .thenError('CLAIM.OWN_CODE', '/code');
    });

    it("5. an affiliate linked to another user is not the user's own code", () => {
      user
        .given(ann)
        .when((state) =>
          decideClaimCode(
            state,
            claim({
              code: 'BOBSHOW',
              target: claimTarget({ code: 'BOBSHOW', type: 'affiliate', owner_id: 'aff-2', program_id: null, owner_app_user_id: 'bob' }),
            }),
          ),
        )
        .then([
          event('CodeClaimed', { claim_id: 'claim-9', code: 'BOBSHOW', type: 'affiliate', owner_id: 'aff-2', program_id: null, claimed_at: T0.toISOString() }),
        ]);
    });

    it('5. a user without a referral code can claim an affiliate code that has no linked user', () => {
      user
        .given([registered('ann')])
        .when((state) =>
          decideClaimCode(
            state,
            claim({ code: 'SHOW', target: claimTarget({ code: 'SHOW', type: 'affiliate', owner_id: 'aff-3', program_id: null, owner_app_user_id: null }) }),
          ),
        )
        .then([
          event('CodeClaimed', { claim_id: 'claim-9', code: 'SHOW', type: 'affiliate', owner_id: 'aff-3', program_id: null, claimed_at: T0.toISOString() }),
        ]);
    });

    it('6. CLAIM.NOT_ELIGIBLE exactly at the window end (first_seen_at + window days)', () => {
      user
        .given([registered('ann', { first_seen_at: iso(-7 * DAY) })])
        .when((state) => decideClaimCode(state, claim()))
        .thenError('CLAIM.NOT_ELIGIBLE', '/code');
    });

    it('6. CLAIM.NOT_ELIGIBLE after the window end, before the activity check', () => {
      user
        .given([registered('ann', { first_seen_at: iso(-8 * DAY) })])
        .when((state) => decideClaimCode(state, claim({ target: claimTarget({ is_active: false }) })))
        .thenError('CLAIM.NOT_ELIGIBLE', '/code');
    });

    it('6. eligible 1 ms before the window end', () => {
      user
        .given([registered('ann', { first_seen_at: new Date(T0.getTime() - 7 * DAY + 1).toISOString() })])
        .when((state) => decideClaimCode(state, claim()))
        .then([
          event('CodeClaimed', { claim_id: 'claim-9', code: 'BOB234', type: 'referral', owner_id: 'bob', program_id: 'prog', claimed_at: T0.toISOString() }),
        ]);
    });

    it('6. the window runs from the creation time when first_seen_at was never sent', () => {
      user
        .given([registered('ann', { registered_at: iso(-7 * DAY) })])
        .when((state) => decideClaimCode(state, claim()))
        .thenError('CLAIM.NOT_ELIGIBLE');
      user
        .given([registered('ann', { registered_at: iso(-7 * DAY + MINUTE) })])
        .when((state) => decideClaimCode(state, claim()))
        .decision();
    });

    it('6. the window length is CLAIM_WINDOW_DAYS', () => {
      user
        .given([registered('ann', { first_seen_at: iso(-10 * DAY) })])
        .when((state) => decideClaimCode(state, claim({ windowDays: 10 })))
        .thenError('CLAIM.NOT_ELIGIBLE');
      user
        .given([registered('ann', { first_seen_at: iso(-10 * DAY) })])
        .when((state) => decideClaimCode(state, claim({ windowDays: 11 })))
        .decision();
    });

    it('7. CLAIM.CODE_INACTIVE for an inactive code', () => {
      user
        .given(ann)
        .when((state) => decideClaimCode(state, claim({ target: claimTarget({ is_active: false }) })))
        .thenError('CLAIM.CODE_INACTIVE', '/code');
    });

    it('refuses a claim whose slot was released by the repair (CLAIM.SLOT_LOST)', () => {
      user
        .given([...ann, event('ClaimAbandoned', { claim_id: 'claim-9', code: 'BOB234' })])
        .when((state) => decideClaimCode(state, claim()))
        .thenError('CLAIM.SLOT_LOST');
    });
  });

  describe('success', () => {
    it('records the claim and grants the receiver claim rewards in order', () => {
      const { result, state } = user
        .given(ann)
        .when((state) =>
          decideClaimCode(
            state,
            claim({
              target: claimTarget({
                claimRewards: [spec('coins', 'credit', { credits: 3 }), spec('trial', 'basic', { deactivation: interval(14, 'days') })],
              }),
            }),
          ),
        )
        .then([
          event('CodeClaimed', { claim_id: 'claim-9', code: 'BOB234', type: 'referral', owner_id: 'bob', program_id: 'prog', claimed_at: T0.toISOString() }),
          event('RewardGranted', {
            grant_id: 'claim-9/0',
            entry_id: 'claim-9/0',
            reward_key: 'coins',
            kind: 'credit',
            credits: 3,
            granted_at: T0.toISOString(),
            expires_at: null,
            cause: { type: 'claim', code: 'BOB234', claim_id: 'claim-9' },
            clawback: 'none',
            balance_after: 3,
          }),
          event('RewardGranted', {
            grant_id: 'claim-9/1',
            entry_id: 'claim-9/1',
            reward_key: 'trial',
            kind: 'basic',
            credits: null,
            granted_at: T0.toISOString(),
            expires_at: iso(14 * DAY),
            cause: { type: 'claim', code: 'BOB234', claim_id: 'claim-9' },
            clawback: 'none',
            balance_after: null,
          }),
        ]);
      expect(result.granted.map((grant) => grant.grant_id)).to.deep.equal(['claim-9/0', 'claim-9/1']);
      expect(state.referred_by).to.deep.equal({
        claim_id: 'claim-9',
        code: 'BOB234',
        type: 'referral',
        owner_id: 'bob',
        program_id: 'prog',
        claimed_at: T0.toISOString(),
      });
    });

    it('closes eligibility: a second claim is ALREADY_CLAIMED', () => {
      const { state } = user
        .given(ann)
        .when((state) => decideClaimCode(state, claim()))
        .decision();
      expect(() =>
        decideClaimCode(
          state,
          claim({ claim_id: 'claim-10', code: 'OTHER1', target: claimTarget({ code: 'OTHER1', owner_id: 'carl', owner_app_user_id: 'carl' }) }),
        ),
      )
        .to.throw()
        .with.property('code', 'CLAIM.ALREADY_CLAIMED');
    });

    it('records promo claims with the promo code as owner and no program', () => {
      user
        .given(ann)
        .when((state) =>
          decideClaimCode(
            state,
            claim({ code: 'SPRING', target: claimTarget({ code: 'SPRING', type: 'promo', owner_id: 'SPRING', program_id: null, owner_app_user_id: null }) }),
          ),
        )
        .then([
          event('CodeClaimed', { claim_id: 'claim-9', code: 'SPRING', type: 'promo', owner_id: 'SPRING', program_id: null, claimed_at: T0.toISOString() }),
        ]);
    });

    it('converts a claimer who is already premium without trial, with conversion rewards', () => {
      const { result } = user
        .given([registered('ann', { is_premium: true, is_trial: false })])
        .when((state) =>
          decideClaimCode(
            state,
            claim({ target: claimTarget({ claimRewards: [spec('trial', 'basic')], conversionRewards: [spec('coins', 'credit', { credits: 4 })] }) }),
          ),
        )
        .then([
          event('CodeClaimed', { claim_id: 'claim-9', code: 'BOB234', type: 'referral', owner_id: 'bob', program_id: 'prog', claimed_at: T0.toISOString() }),
          event('RewardGranted', {
            grant_id: 'claim-9/0',
            entry_id: 'claim-9/0',
            reward_key: 'trial',
            kind: 'basic',
            credits: null,
            granted_at: T0.toISOString(),
            expires_at: null,
            cause: { type: 'claim', code: 'BOB234', claim_id: 'claim-9' },
            clawback: 'none',
            balance_after: null,
          }),
          event('UserConverted', {
            converted_at: T0.toISOString(),
            referred_by: { claim_id: 'claim-9', code: 'BOB234', type: 'referral', owner_id: 'bob' },
            source: 'client',
            purchase: null,
            program_id: 'prog',
          }),
          event('RewardGranted', {
            grant_id: 'claim-9/conversion/0',
            entry_id: 'claim-9/conversion/0',
            reward_key: 'coins',
            kind: 'credit',
            credits: 4,
            granted_at: T0.toISOString(),
            expires_at: null,
            cause: { type: 'conversion', code: 'BOB234' },
            clawback: 'none',
            balance_after: 4,
          }),
        ]);
      // rewards_granted lists the claim's rewards; the conversion's are in the user's rewards.
      expect(result.granted.map((grant) => grant.grant_id)).to.deep.equal(['claim-9/0']);
    });

    it('does not convert a premium claimer on trial', () => {
      user
        .given([registered('ann', { is_premium: true, is_trial: true })])
        .when((state) => decideClaimCode(state, claim({ target: claimTarget({ conversionRewards: [spec('coins', 'credit')] }) })))
        .then([
          event('CodeClaimed', { claim_id: 'claim-9', code: 'BOB234', type: 'referral', owner_id: 'bob', program_id: 'prog', claimed_at: T0.toISOString() }),
        ]);
    });

    it('does not re-grant a basic claim reward the user already holds actively', () => {
      const { result } = user
        .given([registered('ann'), rewardGranted({ grant_id: 'm/0', reward_key: 'trial', kind: 'basic' })])
        .when((state) => decideClaimCode(state, claim({ target: claimTarget({ claimRewards: [spec('trial', 'basic')] }) })))
        .then([
          event('CodeClaimed', { claim_id: 'claim-9', code: 'BOB234', type: 'referral', owner_id: 'bob', program_id: 'prog', claimed_at: T0.toISOString() }),
        ]);
      expect(result.granted).to.deep.equal([]);
    });

    it("records due expiries first, so a claim credit reward's balance_after counts only active credits", () => {
      // SPEC §7.7: the ledger's balance_after must equal the user's active credits of the key.
      const { state } = user
        .given([
          registered('ann', { registered_at: iso(-2 * DAY) }),
          rewardGranted({ grant_id: 'old', reward_key: 'coins', credits: 7, balance_after: 7, granted_at: iso(-2 * DAY), expires_at: iso(-DAY) }),
        ])
        .when((state) => decideClaimCode(state, claim({ target: claimTarget({ claimRewards: [spec('coins', 'credit', { credits: 3 })] }) })))
        .then([
          event('RewardExpired', { grant_id: 'old', reward_key: 'coins', kind: 'credit', expired_at: iso(-DAY), credits_forfeited: 7, balance_after: 0 }),
          event('CodeClaimed', { claim_id: 'claim-9', code: 'BOB234', type: 'referral', owner_id: 'bob', program_id: 'prog', claimed_at: T0.toISOString() }),
          event('RewardGranted', {
            grant_id: 'claim-9/0',
            entry_id: 'claim-9/0',
            reward_key: 'coins',
            kind: 'credit',
            credits: 3,
            granted_at: T0.toISOString(),
            expires_at: null,
            cause: { type: 'claim', code: 'BOB234', claim_id: 'claim-9' },
            clawback: 'none',
            balance_after: 3,
          }),
        ]);
      expect(creditBalance(state, 'coins', T0)).to.equal(3);
    });

    it('claims at the command time', () => {
      user
        .given(ann)
        .when((state) => decideClaimCode(state, claim({ now: at(MINUTE) })))
        .then([event('CodeClaimed', { claim_id: 'claim-9', code: 'BOB234', type: 'referral', owner_id: 'bob', program_id: 'prog', claimed_at: iso(MINUTE) })]);
    });
  });
});
