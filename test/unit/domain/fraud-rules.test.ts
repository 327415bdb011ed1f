import { expect } from 'chai';
import { describe, it } from 'mocha';
import { decideGuardedTake, decideSlotRequests } from '../../../src/domain/codes/claim-slots.js';
import type { FraudRule, FraudRuleKind, RuleAction } from '../../../src/domain/events/fraud-events.js';
import type { DomainEvent } from '../../../src/domain/events/index.js';
import { judgeConversion, judgeParties, judgePaymentCustomerClaimers, judgeReferrerRate, windowAfterClaim } from '../../../src/domain/fraud/claim-rules.js';
import { decideDefineRule, fraudRuleEvolver } from '../../../src/domain/fraud/fraud-rule.js';
import { decideOpenReview, decideReview, reviewEvolver } from '../../../src/domain/fraud/review.js';
import { decideCountReferral, type SenderReward } from '../../../src/domain/users/count-referral.js';
import { decideReleaseHeldRewards } from '../../../src/domain/users/held-rewards.js';
import { userEvolver } from '../../../src/domain/users/user-state.js';
import { deciderSpec } from '../../support/decider-spec.js';
import { at, DAY, event, HOUR, iso, programAssigned, registered, rewardGranted, SECOND, spec, T0 } from '../../support/events.js';

function rule(id: string, kind: FraudRuleKind, params: Record<string, unknown>, action: RuleAction = 'reject'): FraudRule {
  return { id, kind, params, action, enabled: true, created_at: T0.toISOString(), updated_at: null };
}

const parties = (overrides: { claimerCreated?: string; claimerCustomer?: string | null; referrerCustomer?: string | null } = {}) => ({
  claimer: { app_user_id: 'ann', created_at: overrides.claimerCreated ?? iso(-HOUR), payment_customer_id: overrides.claimerCustomer ?? null },
  referrer: { app_user_id: 'bob', payment_customer_id: overrides.referrerCustomer ?? null },
  now: T0,
});

describe('fraud rules (SPEC §13)', () => {
  describe('decideDefineRule', () => {
    const rules = deciderSpec(fraudRuleEvolver);
    const input = { id: 'hourly', kind: 'referrer_claims_per_hour' as const, params: { max: 5 }, action: 'reject' as const, enabled: true };

    it('creates, then updates keeping created_at', () => {
      const { state } = rules
        .given([])
        .when(() => decideDefineRule(null, input, T0))
        .then([{ type: 'FraudRuleCreated', data: { rule: { ...input, created_at: T0.toISOString(), updated_at: null } } }]);
      rules
        .given([{ type: 'FraudRuleCreated', data: { rule: state! } }])
        .when((existing) => decideDefineRule(existing, { ...input, params: { max: 9 }, action: 'hold' }, at(HOUR)))
        .then([
          { type: 'FraudRuleUpdated', data: { rule: { ...input, params: { max: 9 }, action: 'hold', created_at: T0.toISOString(), updated_at: iso(HOUR) } } },
        ]);
    });

    it('refuses another kind for an existing rule: RULE.IMMUTABLE_FIELD at /kind', () => {
      rules
        .given([{ type: 'FraudRuleCreated', data: { rule: { ...input, created_at: T0.toISOString(), updated_at: null } } }])
        .when((existing) => decideDefineRule(existing, { ...input, kind: 'referrer_claims_per_day' }, T0))
        .thenError('RULE.IMMUTABLE_FIELD', '/kind');
    });
  });

  describe('judging a claim', () => {
    it('blocked_users: the claimer or the referrer in the list', () => {
      expect(judgeParties([rule('b', 'blocked_users', { app_user_ids: ['ann'] })], parties()).reject?.rule_id).to.equal('b');
      expect(judgeParties([rule('b', 'blocked_users', { app_user_ids: ['bob'] }, 'hold')], parties()).hold?.rule_id).to.equal('b');
      expect(judgeParties([rule('b', 'blocked_users', { app_user_ids: ['cat'] })], parties())).to.deep.equal({ reject: null, hold: null });
    });

    it('min_seconds_user_to_claim: measured from the registration, strictly less triggers', () => {
      const young = [rule('age', 'min_seconds_user_to_claim', { seconds: 60 })];
      expect(judgeParties(young, parties({ claimerCreated: iso(-59 * SECOND) })).reject?.rule_id).to.equal('age');
      expect(judgeParties(young, parties({ claimerCreated: iso(-60 * SECOND) })).reject).to.equal(null);
      // To the millisecond: one short of the minute still triggers.
      expect(judgeParties(young, parties({ claimerCreated: iso(-60 * SECOND + 1) })).reject?.rule_id).to.equal('age');
    });

    it('same_payment_customer: equal ids only, and an empty or blank id names no customer', () => {
      const same = [rule('self', 'same_payment_customer', {})];
      expect(judgeParties(same, parties({ claimerCustomer: 'cus_1', referrerCustomer: 'cus_1' })).reject?.rule_id).to.equal('self');
      expect(judgeParties(same, parties({ claimerCustomer: 'cus_1', referrerCustomer: 'cus_2' })).reject).to.equal(null);
      expect(judgeParties(same, parties({ claimerCustomer: null, referrerCustomer: null })).reject).to.equal(null);
      expect(judgeParties(same, parties({ claimerCustomer: '', referrerCustomer: '' })).reject).to.equal(null);
      expect(judgeParties(same, parties({ claimerCustomer: ' ', referrerCustomer: ' ' })).reject).to.equal(null);
    });

    it('a reject wins over every hold; among holds the first in id order', () => {
      const verdict = judgeParties(
        [
          rule('a-hold', 'blocked_users', { app_user_ids: ['ann'] }, 'hold'),
          rule('b-hold', 'same_payment_customer', {}, 'hold'),
          rule('c-reject', 'blocked_users', { app_user_ids: ['bob'] }),
        ],
        parties({ claimerCustomer: 'x', referrerCustomer: 'x' }),
      );
      expect(verdict.reject?.rule_id).to.equal('c-reject');
      expect(verdict.hold?.rule_id).to.equal('a-hold');
    });

    it('referrer rate: counts of the current UTC hour and day; a new hour starts from zero', () => {
      let window = windowAfterClaim(undefined, T0);
      window = windowAfterClaim(window, at(SECOND));
      expect(window).to.deep.equal({ hour: '2026-03-10T12', hour_claims: 2, day: '2026-03-10', day_claims: 2 });
      const hourly = [rule('h', 'referrer_claims_per_hour', { max: 2 })];
      expect(judgeReferrerRate(hourly, window, at(2 * SECOND)).reject?.rule_id).to.equal('h');
      expect(judgeReferrerRate(hourly, window, at(HOUR)).reject).to.equal(null);
      const daily = [rule('d', 'referrer_claims_per_day', { max: 3 }, 'hold')];
      const later = windowAfterClaim(window, at(HOUR));
      expect(later).to.deep.equal({ hour: '2026-03-10T13', hour_claims: 1, day: '2026-03-10', day_claims: 3 });
      expect(judgeReferrerRate(daily, later, at(HOUR)).hold?.rule_id).to.equal('d');
      expect(judgeReferrerRate(daily, later, at(12 * HOUR)).hold).to.equal(null);
    });

    it('payment_customer_claimers and min_seconds_claim_to_conversion', () => {
      const shared = [rule('card', 'payment_customer_claimers', { max: 2 })];
      expect(judgePaymentCustomerClaimers(shared, 1).reject).to.equal(null);
      expect(judgePaymentCustomerClaimers(shared, 2).reject?.rule_id).to.equal('card');
      const fast = [rule('fast', 'min_seconds_claim_to_conversion', { seconds: 600 }, 'hold')];
      expect(judgeConversion(fast, iso(0), iso(599 * SECOND)).hold?.rule_id).to.equal('fast');
      expect(judgeConversion(fast, iso(0), iso(600 * SECOND)).hold).to.equal(null);
    });
  });

  describe('the claim slot with rules', () => {
    const take = { claim_id: 'c1', claimer: 'ann', limit: 0, now: T0 };

    it('the limit comes first, then a refusal of the parties, then the rate rules', () => {
      const refused = { rule_id: 'blocked', kind: 'blocked_users' as const, action: 'reject' as const };
      expect(() => decideGuardedTake({ taken: 3, window: undefined }, { ...take, limit: 3, refused }))
        .to.throw()
        .with.property('code', 'CLAIM.LIMIT_REACHED');
      expect(() => decideGuardedTake({ taken: 0, window: undefined }, { ...take, refused }))
        .to.throw()
        .that.deep.includes({ code: 'CLAIM.REJECTED_BY_RULE', source: 'rule:blocked' });
    });

    it('rate rules are decided on the running counts of a batch: never more than max', () => {
      const rules = [rule('h', 'referrer_claims_per_hour', { max: 2 })];
      const { events, result } = decideSlotRequests(
        { taken: 0, window: undefined },
        ['a', 'b', 'c', 'd'].map((claimer) => ({ kind: 'take' as const, claim_id: claimer, claimer, limit: 0, now: T0, rules })),
      );
      expect(events).to.have.length(2);
      expect(result.outcomes.map((outcome) => (outcome.ok ? 'ok' : outcome.error.source))).to.deep.equal(['ok', 'ok', 'rule:h', 'rule:h']);
    });

    it('a hold rule lets the claim take its slot and names the rule', () => {
      const held = decideGuardedTake(
        { taken: 5, window: windowAfterClaim(undefined, T0) },
        { ...take, rules: [rule('h', 'referrer_claims_per_hour', { max: 1 }, 'hold')] },
      );
      expect(held.result.hold).to.deep.equal({ rule_id: 'h', kind: 'referrer_claims_per_hour', action: 'hold' });
      expect(held.events[0]).to.deep.equal(
        event('ClaimSlotTaken', {
          claim_id: 'c1',
          claimer: 'ann',
          taken: 6,
          window: { hour: '2026-03-10T12', hour_claims: 2, day: '2026-03-10', day_claims: 2 },
        }),
      );
    });
  });

  describe('held sender rewards', () => {
    const user = deciderSpec(userEvolver);
    const bob: DomainEvent[] = [registered('bob'), programAssigned('prog', 'BOB234')];
    const fiveCredits: SenderReward = { ...spec('coins', 'credit', { credits: 5 }), activation: { variant: 'claim', amount: 1, limit: 0 } };
    const hold = { rule_id: 'blocked', kind: 'blocked_users' as const, review_id: 'review-1' };
    const countHeld = {
      figure: 'claim' as const,
      claimer: 'ann',
      code: 'BOB234',
      program_id: 'prog',
      senderRewards: [fiveCredits],
      cause_id: 'ev-1',
      cause_position: 10n,
      now: T0,
      hold,
    };
    const held = event('SenderRewardsHeld', {
      ...hold,
      claimer: 'ann',
      code: 'BOB234',
      variant: 'claim',
      count: 1,
      program_id: 'prog',
      rewards: [{ reward: { key: 'coins', kind: 'credit', credits: 5 }, deactivation: { variant: 'never' } }],
    });

    it('a held claim counts, and the rewards due at its count are held instead of granted', () => {
      user
        .given(bob)
        .when((state) => decideCountReferral(state, countHeld))
        .then([event('ReferralClaimCounted', { claimer: 'ann', code: 'BOB234', claims: 1, cause_position: '10' }), held]);
    });

    it('approval grants the held rewards once; deciding again changes nothing', () => {
      const given = [...bob, event('ReferralClaimCounted', { claimer: 'ann', code: 'BOB234', claims: 1, cause_position: '10' }), held];
      const { state, events } = user
        .given(given)
        .when((state) => decideReleaseHeldRewards(state, { review_id: 'review-1', decision: 'approved', now: T0 }))
        .decision();
      expect(events.map((one) => one.type)).to.deep.equal(['HeldRewardsReleased', 'RewardGranted']);
      expect(events[1]!.data).to.deep.include({
        reward_key: 'coins',
        credits: 5,
        cause: { type: 'referrals', variant: 'claim', count: 1, claimer: 'ann', program_id: 'prog' },
      });
      expect(state.held_rewards).to.deep.equal([]);
      user
        .given([...given, ...events])
        .when((again) => decideReleaseHeldRewards(again, { review_id: 'review-1', decision: 'approved', now: T0 }))
        .thenNothing();
    });

    it('approval records the due expiries first, so the ledger sees the expiry before the grant', () => {
      const expiring = rewardGranted({
        grant_id: 'old',
        reward_key: 'coins',
        credits: 10,
        balance_after: 10,
        granted_at: iso(-40 * DAY),
        expires_at: iso(-DAY),
      });
      const { events } = user
        .given([registered('bob', { registered_at: iso(-40 * DAY) }), programAssigned('prog', 'BOB234'), expiring, held])
        .when((state) => decideReleaseHeldRewards(state, { review_id: 'review-1', decision: 'approved', now: T0 }))
        .decision();
      expect(events.map((one) => [one.type, (one.data as { balance_after?: number }).balance_after ?? null])).to.deep.equal([
        ['RewardExpired', 0],
        ['HeldRewardsReleased', null],
        ['RewardGranted', 5],
      ]);
    });

    it('rejection drops them: released, nothing granted', () => {
      user
        .given([...bob, held])
        .when((state) => decideReleaseHeldRewards(state, { review_id: 'review-1', decision: 'rejected', now: T0 }))
        .then([event('HeldRewardsReleased', { ...hold, decision: 'rejected' })]);
    });
  });

  describe('reviews', () => {
    const reviews = deciderSpec(reviewEvolver);
    const opened = {
      review_id: 'r1',
      rule_id: 'blocked',
      kind: 'blocked_users' as const,
      referrer: 'bob',
      claimer: 'ann',
      code: 'BOB234',
      variant: 'claim' as const,
      opened_at: T0.toISOString(),
    };
    const decided = { review_id: 'r1', rule_id: 'blocked', kind: 'blocked_users' as const, referrer: 'bob', decided_at: iso(HOUR), opened_position: '42' };

    it('opens once', () => {
      reviews
        .given([])
        .when((state) => decideOpenReview(state, opened))
        .then([event('ReviewOpened', opened)]);
      reviews
        .given([event('ReviewOpened', opened)])
        .when((state) => decideOpenReview(state, opened))
        .thenNothing();
    });

    it('a pending review is approved or rejected', () => {
      reviews
        .given([event('ReviewOpened', opened)])
        .when((state) => decideReview(state, { decision: 'approved', now: at(HOUR), openedPosition: 42n }))
        .then([event('ReviewApproved', decided)]);
      reviews
        .given([event('ReviewOpened', opened)])
        .when((state) => decideReview(state, { decision: 'rejected', now: at(HOUR), openedPosition: 42n }))
        .then([event('ReviewRejected', decided)]);
    });

    it('the same decision again changes nothing; the other one is REVIEW.ALREADY_DECIDED; an unknown review is NOT_FOUND.REVIEW', () => {
      const approved = [event('ReviewOpened', opened), event('ReviewApproved', decided)];
      reviews
        .given(approved)
        .when((state) => decideReview(state, { decision: 'approved', now: at(2 * HOUR), openedPosition: 43n }))
        .thenNothing();
      reviews
        .given(approved)
        .when((state) => decideReview(state, { decision: 'rejected', now: at(2 * HOUR), openedPosition: 43n }))
        .thenError('REVIEW.ALREADY_DECIDED', 'path:/id');
      reviews
        .given([])
        .when((state) => decideReview(state, { decision: 'approved', now: T0, openedPosition: 0n }))
        .thenError('NOT_FOUND.REVIEW', 'path:/id');
    });
  });
});
