import { expect } from 'chai';
import { describe, it } from 'mocha';
import type { NewDomainEvent } from '../../../src/domain/decider.js';
import type { DomainEvent } from '../../../src/domain/events/index.js';
import { addInterval, expiryFor, isActiveAt } from '../../../src/domain/rewards/expiry.js';
import { expireDueRewards, grantRewards } from '../../../src/domain/rewards/grant-and-expire.js';
import { decideExpireRewards } from '../../../src/domain/users/expire-rewards.js';
import { activeEntries, creditBalance, initialUserState, ledgerBalance, userEvolver, type UserState } from '../../../src/domain/users/user-state.js';
import { deciderSpec } from '../../support/decider-spec.js';
import { at, DAY, event, interval, iso, NEVER, registered, rewardGranted, spec, T0 } from '../../support/events.js';

const user = deciderSpec(userEvolver);
const manual = { type: 'manual' as const, operation_id: null };

function stateOf(events: DomainEvent[]): UserState {
  return events.reduce(userEvolver.evolve, initialUserState());
}

function grantIds(events: NewDomainEvent[]): string[] {
  return events.flatMap((candidate) => (candidate.type === 'RewardGranted' ? [candidate.data.grant_id] : []));
}

const utc = (text: string) => new Date(text);

describe('grants, expiry and values (SPEC §5.3)', () => {
  describe('addInterval (calendar arithmetic in UTC)', () => {
    const cases: [string, number, 'days' | 'months' | 'years', string][] = [
      ['2026-03-10T12:00:00.000Z', 7, 'days', '2026-03-17T12:00:00.000Z'],
      ['2026-02-27T08:30:15.123Z', 2, 'days', '2026-03-01T08:30:15.123Z'],
      ['2028-02-28T00:00:00.000Z', 1, 'days', '2028-02-29T00:00:00.000Z'],
      ['2026-03-29T01:30:00.000Z', 1, 'days', '2026-03-30T01:30:00.000Z'],
      ['2026-01-15T10:00:00.000Z', 1, 'months', '2026-02-15T10:00:00.000Z'],
      ['2026-01-31T10:00:00.000Z', 1, 'months', '2026-02-28T10:00:00.000Z'],
      ['2028-01-31T10:00:00.000Z', 1, 'months', '2028-02-29T10:00:00.000Z'],
      ['2026-01-30T23:59:59.999Z', 1, 'months', '2026-02-28T23:59:59.999Z'],
      ['2026-03-31T00:00:00.000Z', 1, 'months', '2026-04-30T00:00:00.000Z'],
      ['2026-05-31T00:00:00.000Z', 1, 'months', '2026-06-30T00:00:00.000Z'],
      ['2026-12-31T12:00:00.000Z', 2, 'months', '2027-02-28T12:00:00.000Z'],
      ['2026-11-30T12:00:00.000Z', 3, 'months', '2027-02-28T12:00:00.000Z'],
      ['2026-03-10T12:00:00.000Z', 13, 'months', '2027-04-10T12:00:00.000Z'],
      ['2026-01-31T00:00:00.000Z', 24, 'months', '2028-01-31T00:00:00.000Z'],
      ['2026-03-10T12:00:00.000Z', 1, 'years', '2027-03-10T12:00:00.000Z'],
      ['2028-02-29T06:00:00.000Z', 1, 'years', '2029-02-28T06:00:00.000Z'],
      ['2028-02-29T06:00:00.000Z', 4, 'years', '2032-02-29T06:00:00.000Z'],
    ];
    for (const [from, duration, period, expected] of cases) {
      it(`${from} + ${duration} ${period} = ${expected}`, () => {
        expect(addInterval(utc(from), duration, period).toISOString()).to.equal(expected);
      });
    }

    it('does not modify its argument', () => {
      const from = utc('2026-01-31T10:00:00.000Z');
      addInterval(from, 1, 'months');
      expect(from.toISOString()).to.equal('2026-01-31T10:00:00.000Z');
    });
  });

  describe('expiryFor / isActiveAt', () => {
    it('never → null', () => {
      expect(expiryFor(NEVER, T0)).to.equal(null);
    });

    it('interval → grant time + interval', () => {
      expect(expiryFor(interval(1, 'years'), T0)).to.equal('2027-03-10T12:00:00.000Z');
      expect(expiryFor(interval(30, 'days'), T0)).to.equal(iso(30 * DAY));
    });

    it('an entry is active until expires_at, not at it', () => {
      expect(isActiveAt(iso(DAY), at(DAY - 1))).to.equal(true);
      expect(isActiveAt(iso(DAY), at(DAY))).to.equal(false);
      expect(isActiveAt(iso(DAY), at(DAY + 1))).to.equal(false);
      expect(isActiveAt(null, at(100_000 * DAY))).to.equal(true);
    });
  });

  describe('grantRewards', () => {
    it('grants each spec with deterministic ids prefix/index, expiry and credits', () => {
      const state = stateOf([registered('ann')]);
      const events = grantRewards(
        state,
        [spec('coins', 'credit', { credits: 3, deactivation: interval(1, 'months') }), spec('code', 'offer_code', { deactivation: interval(10, 'days') })],
        manual,
        'op',
        T0,
      );
      expect(events).to.deep.equal([
        event('RewardGranted', {
          grant_id: 'op/0',
          entry_id: 'op/0',
          reward_key: 'coins',
          kind: 'credit',
          credits: 3,
          granted_at: T0.toISOString(),
          expires_at: '2026-04-10T12:00:00.000Z',
          cause: manual,
          clawback: 'none',
          balance_after: 3,
        }),
        event('RewardGranted', {
          grant_id: 'op/1',
          entry_id: 'op/1',
          reward_key: 'code',
          kind: 'offer_code',
          credits: null,
          granted_at: T0.toISOString(),
          expires_at: iso(10 * DAY),
          cause: manual,
          clawback: 'none',
          balance_after: null,
        }),
      ]);
    });

    it('repeats the same decision for the same input (ids included)', () => {
      const state = stateOf([registered('ann')]);
      const specs = [spec('coins', 'credit'), spec('vip', 'basic')];
      expect(grantRewards(state, specs, manual, 'p', T0)).to.deep.equal(grantRewards(state, specs, manual, 'p', T0));
    });

    for (const kind of ['basic', 'partner_entitlement', 'partner_offering'] as const) {
      it(`does not re-grant an active ${kind} reward (extends nothing, adds nothing)`, () => {
        const state = stateOf([registered('ann'), rewardGranted({ grant_id: 'g', reward_key: 'vip', kind, expires_at: iso(DAY) })]);
        expect(grantRewards(state, [spec('vip', kind, { deactivation: interval(1, 'years') })], manual, 'p', T0)).to.deep.equal([]);
      });

      it(`grants ${kind} again once the earlier entry has expired (recorded or not)`, () => {
        const unrecorded = stateOf([registered('ann'), rewardGranted({ grant_id: 'g', reward_key: 'vip', kind, expires_at: iso(DAY) })]);
        expect(grantIds(grantRewards(unrecorded, [spec('vip', kind)], manual, 'p', at(DAY)))).to.deep.equal(['p/0']);
        const recorded = stateOf([
          registered('ann'),
          rewardGranted({ grant_id: 'g', reward_key: 'vip', kind, expires_at: iso(DAY) }),
          event('RewardExpired', { grant_id: 'g', reward_key: 'vip', kind, expired_at: iso(DAY), credits_forfeited: null, balance_after: null }),
        ]);
        expect(grantIds(grantRewards(recorded, [spec('vip', kind)], manual, 'p', at(2 * DAY)))).to.deep.equal(['p/0']);
      });
    }

    it('grants a singleton only once when it appears twice in one decision', () => {
      const state = stateOf([registered('ann')]);
      expect(grantIds(grantRewards(state, [spec('vip', 'basic'), spec('vip', 'basic')], manual, 'p', T0))).to.deep.equal(['p/0']);
    });

    it('a singleton of another key does not block', () => {
      const state = stateOf([registered('ann'), rewardGranted({ grant_id: 'g', reward_key: 'gold', kind: 'basic' })]);
      expect(grantIds(grantRewards(state, [spec('vip', 'basic')], manual, 'p', T0))).to.deep.equal(['p/0']);
    });

    it('accumulates credits of one reward and expiry in one entry, with a running balance (SPEC §5.3)', () => {
      const state = stateOf([registered('ann'), rewardGranted({ grant_id: 'g', reward_key: 'coins', credits: 10, balance_after: 10 })]);
      const events = grantRewards(state, [spec('coins', 'credit', { credits: 5 }), spec('coins', 'credit', { credits: 5 })], manual, 'p', T0);
      expect(
        events.map((candidate) =>
          candidate.type === 'RewardGranted' ? [candidate.data.grant_id, candidate.data.entry_id, candidate.data.balance_after] : null,
        ),
      ).to.deep.equal([
        ['p/0', 'g', 15],
        ['p/1', 'g', 20],
      ]);
      const after = events.reduce(userEvolver.evolve, state);
      expect(after.entries.map((entry) => [entry.entry_id, entry.credits, entry.created_at, entry.updated_at])).to.deep.equal([
        ['g', 20, T0.toISOString(), T0.toISOString()],
      ]);
      expect(creditBalance(after, 'coins', T0)).to.equal(20);
    });

    it('opens a new credit entry for another expiry of the same reward', () => {
      const state = stateOf([registered('ann'), rewardGranted({ grant_id: 'g', reward_key: 'coins', credits: 10, balance_after: 10 })]);
      const events = grantRewards(
        state,
        [{ ...spec('coins', 'credit', { credits: 5 }), deactivation: { variant: 'interval', duration: 3, period: 'days' } }],
        manual,
        'p',
        T0,
      );
      expect(events.map((candidate) => (candidate.type === 'RewardGranted' ? [candidate.data.entry_id, candidate.data.balance_after] : null))).to.deep.equal([
        ['p/0', 15],
      ]);
      expect(events.reduce(userEvolver.evolve, state).entries.map((entry) => [entry.entry_id, entry.credits])).to.deep.equal([
        ['g', 10],
        ['p/0', 5],
      ]);
    });

    it('adds to a drained entry that is still listed (credits 0 until it expires)', () => {
      const state = stateOf([
        registered('ann'),
        rewardGranted({ grant_id: 'g', reward_key: 'coins', credits: 10, balance_after: 10 }),
        event('CreditsWithdrawn', {
          operation_id: null,
          key: 'coins',
          withdrawn_at: T0.toISOString(),
          credits_requested_to_withdraw: 10,
          credits_withdrawn: 10,
          credits_available_at_start: 10,
          credits_available_at_end: 0,
          debits: [{ grant_id: 'g', credits: 10 }],
        }),
      ]);
      const events = grantRewards(state, [spec('coins', 'credit', { credits: 5 })], manual, 'p', T0);
      expect(events.map((candidate) => (candidate.type === 'RewardGranted' ? [candidate.data.entry_id, candidate.data.balance_after] : null))).to.deep.equal([
        ['g', 5],
      ]);
    });

    it('stacks pooled kinds (each grant waits for its own code)', () => {
      const state = stateOf([registered('ann'), rewardGranted({ grant_id: 'g', reward_key: 'code', kind: 'offer_code' })]);
      expect(grantIds(grantRewards(state, [spec('code', 'offer_code'), spec('promo', 'store_promo_code')], manual, 'p', T0))).to.deep.equal(['p/0', 'p/1']);
    });

    it('a new entry starts without a value', () => {
      const after = grantRewards(stateOf([registered('ann')]), [spec('code', 'offer_code')], manual, 'p', T0).reduce(
        userEvolver.evolve,
        stateOf([registered('ann')]),
      );
      expect(after.entries[0]).to.include({ entry_id: 'p/0', value: null, expires_at: null, created_at: T0.toISOString(), updated_at: null });
    });
  });

  describe('expireDueRewards / decideExpireRewards (the sweep)', () => {
    const history: DomainEvent[] = [
      registered('ann', { registered_at: iso(-60 * DAY) }),
      rewardGranted({ grant_id: 'a', reward_key: 'coins', credits: 10, balance_after: 10, expires_at: iso(-2 * DAY) }),
      rewardGranted({ grant_id: 'b', reward_key: 'coins', credits: 4, balance_after: 14, expires_at: iso(-DAY) }),
      rewardGranted({ grant_id: 'c', reward_key: 'coins', credits: 1, balance_after: 15, expires_at: null }),
      rewardGranted({ grant_id: 'd', reward_key: 'vip', kind: 'basic', expires_at: iso(-DAY) }),
      rewardGranted({ grant_id: 'e', reward_key: 'coins', credits: 2, balance_after: 17, expires_at: iso(DAY) }),
    ];

    it('records each due entry once, with expired_at = expires_at and a running balance_after', () => {
      const { result, state } = user
        .given(history)
        .when((state) => decideExpireRewards(state, T0))
        .then([
          event('RewardExpired', { grant_id: 'a', reward_key: 'coins', kind: 'credit', expired_at: iso(-2 * DAY), credits_forfeited: 10, balance_after: 7 }),
          event('RewardExpired', { grant_id: 'b', reward_key: 'coins', kind: 'credit', expired_at: iso(-DAY), credits_forfeited: 4, balance_after: 3 }),
          event('RewardExpired', { grant_id: 'd', reward_key: 'vip', kind: 'basic', expired_at: iso(-DAY), credits_forfeited: null, balance_after: null }),
        ]);
      expect(result).to.equal(3);
      expect(activeEntries(state, T0).map((entry) => entry.entry_id)).to.deep.equal(['c', 'e']);
      expect(ledgerBalance(state, 'coins')).to.equal(3);
      expect(creditBalance(state, 'coins', T0)).to.equal(3);
    });

    it('expires an entry exactly at its expires_at', () => {
      user
        .given([registered('ann'), rewardGranted({ grant_id: 'a', reward_key: 'vip', kind: 'basic', expires_at: iso(DAY) })])
        .when((state) => decideExpireRewards(state, at(DAY)))
        .then([
          event('RewardExpired', { grant_id: 'a', reward_key: 'vip', kind: 'basic', expired_at: iso(DAY), credits_forfeited: null, balance_after: null }),
        ]);
      user
        .given([registered('ann'), rewardGranted({ grant_id: 'a', reward_key: 'vip', kind: 'basic', expires_at: iso(DAY) })])
        .when((state) => decideExpireRewards(state, at(DAY - 1)))
        .thenNothing();
    });

    it('forfeits only what is left in a partly withdrawn entry', () => {
      user
        .given([
          registered('ann'),
          rewardGranted({ grant_id: 'a', reward_key: 'coins', credits: 10, balance_after: 10, expires_at: iso(DAY) }),
          event('CreditsWithdrawn', {
            operation_id: null,
            key: 'coins',
            withdrawn_at: T0.toISOString(),
            credits_requested_to_withdraw: 6,
            credits_withdrawn: 6,
            credits_available_at_start: 10,
            credits_available_at_end: 4,
            debits: [{ grant_id: 'a', credits: 6 }],
          }),
        ])
        .when((state) => decideExpireRewards(state, at(2 * DAY)))
        .then([event('RewardExpired', { grant_id: 'a', reward_key: 'coins', kind: 'credit', expired_at: iso(DAY), credits_forfeited: 4, balance_after: 0 })]);
    });

    it('does not record an expiry twice', () => {
      const { state } = user
        .given(history)
        .when((state) => decideExpireRewards(state, T0))
        .decision();
      expect(expireDueRewards(state, T0)).to.deep.equal([]);
      expect(decideExpireRewards(state, T0).result).to.equal(0);
    });

    it('keeps balances per key apart', () => {
      user
        .given([
          registered('ann'),
          rewardGranted({ grant_id: 'a', reward_key: 'coins', credits: 10, balance_after: 10 }),
          rewardGranted({ grant_id: 'b', reward_key: 'gems', credits: 3, balance_after: 3, expires_at: iso(DAY) }),
        ])
        .when((state) => decideExpireRewards(state, at(DAY)))
        .then([event('RewardExpired', { grant_id: 'b', reward_key: 'gems', kind: 'credit', expired_at: iso(DAY), credits_forfeited: 3, balance_after: 0 })]);
    });
  });
});
