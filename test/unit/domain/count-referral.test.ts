import { expect } from 'chai';
import { describe, it } from 'mocha';
import type { DomainEvent } from '../../../src/domain/events/index.js';
import type { RewardKind } from '../../../src/domain/rewards/reward-kinds.js';
import type { Activation } from '../../../src/domain/rewards/reward-schemas.js';
import {
  type CountReferralCommand,
  decideCountReferral,
  referralCountOf,
  type SenderReward,
  senderRewardDue,
} from '../../../src/domain/users/count-referral.js';
import { userEvolver } from '../../../src/domain/users/user-state.js';
import { deciderSpec } from '../../support/decider-spec.js';
import { codeClaimed, DAY, event, iso, programAssigned, registered, rewardGranted, spec, T0 } from '../../support/events.js';

const user = deciderSpec(userEvolver);

function sender(key: string, kind: RewardKind, activation: Activation, credits?: number): SenderReward {
  return { ...spec(key, kind, credits === undefined ? {} : { credits }), activation };
}

/** Counts 1..upTo at which the reward is due. */
function dueAt(reward: SenderReward, upTo: number): number[] {
  return Array.from({ length: upTo }, (_, index) => index + 1).filter((count) => senderRewardDue(reward, count));
}

function count(overrides: Partial<CountReferralCommand> = {}): CountReferralCommand {
  return {
    figure: 'claim',
    claimer: 'ann',
    code: 'BOB234',
    program_id: 'prog',
    senderRewards: [],
    cause_id: 'ev-1',
    cause_position: 100n,
    now: T0,
    ...overrides,
  };
}

const bob: DomainEvent[] = [registered('bob'), programAssigned('prog', 'BOB234')];

function claimCounted(claims: number, position: number, claimer = `c${claims}`) {
  return event('ReferralClaimCounted', { claimer, code: 'BOB234', claims, cause_position: String(position) });
}

describe('sender rewards (SPEC §5.2)', () => {
  describe('referralCountOf', () => {
    it("counts a referral code's claim for its owner, and never a promo or affiliate code's (an affiliate id may equal an app_user_id)", () => {
      // As recorded: the reaction reads events from the log.
      const recorded = <E extends DomainEvent>(one: E) => ({ ...one, id: `ev-${one.type}`, position: 7n, stream: 'user-ann' });
      expect(referralCountOf(recorded(codeClaimed({ type: 'referral', owner_id: 'alice' })))).to.include({ figure: 'claim' });
      for (const type of ['promo', 'affiliate'] as const) expect(referralCountOf(recorded(codeClaimed({ type, owner_id: 'alice' }))), type).to.equal(null);
      const referredBy = { claim_id: 'c1', code: 'ALICECO', type: 'affiliate' as const, owner_id: 'alice' };
      const converted = event('UserConverted', { converted_at: T0.toISOString(), referred_by: referredBy, source: 'client', purchase: null, program_id: null });
      expect(referralCountOf(recorded(converted))).to.equal(null);
      expect(referralCountOf(recorded(event('UserChurned', { churned_at: T0.toISOString(), referred_by: referredBy, program_id: null })))).to.equal(null);
    });
  });

  describe('senderRewardDue', () => {
    it('grants a repeatable kind at every multiple of amount, at most limit times', () => {
      expect(dueAt(sender('coins', 'credit', { variant: 'claim', amount: 2, limit: 3 }), 12)).to.deep.equal([2, 4, 6]);
    });

    it('grants at every multiple when limit = 0 (unlimited)', () => {
      expect(dueAt(sender('coins', 'credit', { variant: 'claim', amount: 3, limit: 0 }), 12)).to.deep.equal([3, 6, 9, 12]);
    });

    it('grants on every count with amount 1 up to the limit', () => {
      expect(dueAt(sender('code', 'offer_code', { variant: 'conversion', amount: 1, limit: 2 }), 5)).to.deep.equal([1, 2]);
      expect(dueAt(sender('code', 'store_promo_code', { variant: 'conversion', amount: 1, limit: 1 }), 5)).to.deep.equal([1]);
    });

    for (const kind of ['basic', 'partner_entitlement', 'partner_offering'] as const) {
      it(`grants ${kind} once, when the count first reaches amount`, () => {
        expect(dueAt(sender('once', kind, { variant: 'claim', amount: 3 }), 12)).to.deep.equal([3]);
      });
    }

    it('ignores a limit given to a once-only kind', () => {
      expect(dueAt(sender('once', 'basic', { variant: 'claim', amount: 2, limit: 5 }), 12)).to.deep.equal([2]);
    });
  });

  describe('decideCountReferral', () => {
    it('counts a claim and grants the claim-variant sender rewards that are due', () => {
      const { state } = user
        .given([...bob, claimCounted(1, 50)])
        .when((state) =>
          decideCountReferral(
            state,
            count({
              senderRewards: [
                sender('coins', 'credit', { variant: 'claim', amount: 2, limit: 0 }, 20),
                sender('badge', 'basic', { variant: 'claim', amount: 3 }),
                sender('bonus', 'credit', { variant: 'conversion', amount: 1, limit: 0 }, 99),
              ],
            }),
          ),
        )
        .then([
          event('ReferralClaimCounted', { claimer: 'ann', code: 'BOB234', claims: 2, cause_position: '100' }),
          event('RewardGranted', {
            grant_id: 'ev-1/sender/0',
            entry_id: 'ev-1/sender/0',
            reward_key: 'coins',
            kind: 'credit',
            credits: 20,
            granted_at: T0.toISOString(),
            expires_at: null,
            cause: { type: 'referrals', variant: 'claim', count: 2, claimer: 'ann', program_id: 'prog' },
            clawback: 'none',
            balance_after: 20,
          }),
        ]);
      expect(state.stats).to.deep.equal({ claims: 2, conversions: 0, churns: 0 });
      expect(state.last_cause_position).to.equal('100');
    });

    it('two sender entries of one reward are each granted by their own activation and limit (a tier, and a bonus at the 5th claim)', () => {
      const tiers = [
        sender('coins', 'credit', { variant: 'claim', amount: 1, limit: 3 }, 10),
        sender('coins', 'credit', { variant: 'claim', amount: 5, limit: 1 }, 50),
      ];
      let { state } = user.given(bob);
      const grantedAt: number[][] = [];
      for (let claims = 1; claims <= 10; claims += 1) {
        const decision = decideCountReferral(state, count({ senderRewards: tiers, cause_id: `ev-${claims}`, cause_position: BigInt(100 + claims) }));
        const credits = decision.events.flatMap((one) => (one.type === 'RewardGranted' ? [one.data.credits as number] : []));
        if (credits.length > 0) grantedAt.push([claims, ...credits]);
        state = decision.events.reduce(userEvolver.evolve, state);
      }
      expect(grantedAt).to.deep.equal([
        [1, 10],
        [2, 10],
        [3, 10],
        [5, 50],
      ]);
    });

    it('counts a conversion and grants conversion-variant rewards only', () => {
      const { state } = user
        .given([...bob, claimCounted(1, 50)])
        .when((state) =>
          decideCountReferral(
            state,
            count({
              figure: 'conversion',
              senderRewards: [
                sender('coins', 'credit', { variant: 'claim', amount: 1, limit: 0 }, 20),
                sender('vip', 'partner_entitlement', { variant: 'conversion', amount: 1 }),
              ],
            }),
          ),
        )
        .then([
          event('ReferralConversionCounted', { claimer: 'ann', conversions: 1, cause_position: '100' }),
          event('RewardGranted', {
            grant_id: 'ev-1/sender/0',
            entry_id: 'ev-1/sender/0',
            reward_key: 'vip',
            kind: 'partner_entitlement',
            credits: null,
            granted_at: T0.toISOString(),
            expires_at: null,
            cause: { type: 'referrals', variant: 'conversion', count: 1, claimer: 'ann', program_id: 'prog' },
            clawback: 'none',
            balance_after: null,
          }),
        ]);
      expect(state.stats).to.deep.equal({ claims: 1, conversions: 1, churns: 0 });
    });

    it('counts a churn without granting anything', () => {
      const { state } = user
        .given([...bob, claimCounted(1, 50)])
        .when((state) =>
          decideCountReferral(state, count({ figure: 'churn', senderRewards: [sender('coins', 'credit', { variant: 'claim', amount: 1, limit: 0 })] })),
        )
        .then([event('ReferralChurnCounted', { claimer: 'ann', churns: 1, cause_position: '100' })]);
      expect(state.stats.churns).to.equal(1);
    });

    it('grants nothing when no reward is due at this count', () => {
      user
        .given(bob)
        .when((state) => decideCountReferral(state, count({ senderRewards: [sender('coins', 'credit', { variant: 'claim', amount: 2, limit: 0 })] })))
        .then([event('ReferralClaimCounted', { claimer: 'ann', code: 'BOB234', claims: 1, cause_position: '100' })]);
    });

    it('stops granting after limit grants', () => {
      user
        .given([...bob, claimCounted(1, 1), claimCounted(2, 2)])
        .when((state) =>
          decideCountReferral(state, count({ cause_position: 3n, senderRewards: [sender('coins', 'credit', { variant: 'claim', amount: 1, limit: 2 })] })),
        )
        .then([event('ReferralClaimCounted', { claimer: 'ann', code: 'BOB234', claims: 3, cause_position: '3' })]);
    });

    it('stacks repeated credit grants with a running balance_after', () => {
      user
        .given([
          ...bob,
          claimCounted(1, 1),
          rewardGranted({
            grant_id: 'ev-0/sender/0',
            reward_key: 'coins',
            credits: 10,
            balance_after: 10,
            cause: { type: 'referrals', variant: 'claim', count: 1, claimer: 'c1', program_id: 'prog' },
          }),
        ])
        .when((state) =>
          decideCountReferral(state, count({ cause_position: 2n, senderRewards: [sender('coins', 'credit', { variant: 'claim', amount: 1, limit: 0 }, 10)] })),
        )
        .then([
          event('ReferralClaimCounted', { claimer: 'ann', code: 'BOB234', claims: 2, cause_position: '2' }),
          event('RewardGranted', {
            grant_id: 'ev-1/sender/0',
            entry_id: 'ev-0/sender/0',
            reward_key: 'coins',
            kind: 'credit',
            credits: 10,
            granted_at: T0.toISOString(),
            expires_at: null,
            cause: { type: 'referrals', variant: 'claim', count: 2, claimer: 'ann', program_id: 'prog' },
            clawback: 'none',
            balance_after: 20,
          }),
        ]);
    });

    it('records due expiries before counting (so the ledger sees them first)', () => {
      user
        .given([
          registered('bob', { registered_at: iso(-40 * DAY) }),
          rewardGranted({ grant_id: 'old', reward_key: 'coins', credits: 10, balance_after: 10, granted_at: iso(-40 * DAY), expires_at: iso(-10 * DAY) }),
        ])
        .when((state) => decideCountReferral(state, count({ senderRewards: [sender('coins', 'credit', { variant: 'claim', amount: 1, limit: 0 }, 5)] })))
        .then([
          event('RewardExpired', { grant_id: 'old', reward_key: 'coins', kind: 'credit', expired_at: iso(-10 * DAY), credits_forfeited: 10, balance_after: 0 }),
          event('ReferralClaimCounted', { claimer: 'ann', code: 'BOB234', claims: 1, cause_position: '100' }),
          event('RewardGranted', {
            grant_id: 'ev-1/sender/0',
            entry_id: 'ev-1/sender/0',
            reward_key: 'coins',
            kind: 'credit',
            credits: 5,
            granted_at: T0.toISOString(),
            expires_at: null,
            cause: { type: 'referrals', variant: 'claim', count: 1, claimer: 'ann', program_id: 'prog' },
            clawback: 'none',
            balance_after: 5,
          }),
        ]);
    });

    describe('idempotency by cause_position', () => {
      it('ignores a cause at the last counted position', () => {
        user
          .given([...bob, claimCounted(1, 100)])
          .when((state) => decideCountReferral(state, count({ cause_position: 100n })))
          .thenNothing();
      });

      it('ignores a cause below the last counted position, whatever the figure', () => {
        user
          .given([...bob, claimCounted(1, 100)])
          .when((state) => decideCountReferral(state, count({ figure: 'conversion', cause_position: 99n })))
          .thenNothing();
      });

      it('counts a cause after the last counted position', () => {
        user
          .given([...bob, claimCounted(1, 100)])
          .when((state) => decideCountReferral(state, count({ cause_position: 101n })))
          .then([event('ReferralClaimCounted', { claimer: 'ann', code: 'BOB234', claims: 2, cause_position: '101' })]);
      });

      it('compares positions as 64-bit integers, not as strings', () => {
        // As strings "9" > "10"; as numbers 10 is later.
        user
          .given([...bob, claimCounted(1, 9)])
          .when((state) => decideCountReferral(state, count({ cause_position: 10n })))
          .then([event('ReferralClaimCounted', { claimer: 'ann', code: 'BOB234', claims: 2, cause_position: '10' })]);
        user
          .given([...bob, event('ReferralClaimCounted', { claimer: 'x', code: 'BOB234', claims: 1, cause_position: '9007199254740993' })])
          .when((state) => decideCountReferral(state, count({ cause_position: 9007199254740992n })))
          .thenNothing();
      });
    });

    it('does nothing for an unknown referrer', () => {
      user
        .given([])
        .when((state) => decideCountReferral(state, count()))
        .thenNothing();
    });

    it('counts but grants nothing without a program', () => {
      user
        .given(bob)
        .when((state) =>
          decideCountReferral(state, count({ program_id: null, senderRewards: [sender('coins', 'credit', { variant: 'claim', amount: 1, limit: 0 })] })),
        )
        .then([event('ReferralClaimCounted', { claimer: 'ann', code: 'BOB234', claims: 1, cause_position: '100' })]);
    });

    it('does not re-grant a singleton sender reward that is still active', () => {
      user
        .given([...bob, claimCounted(2, 1), rewardGranted({ grant_id: 'm/0', reward_key: 'badge', kind: 'basic' })])
        .when((state) => decideCountReferral(state, count({ senderRewards: [sender('badge', 'basic', { variant: 'claim', amount: 3 })] })))
        .then([event('ReferralClaimCounted', { claimer: 'ann', code: 'BOB234', claims: 3, cause_position: '100' })]);
    });
  });
});
