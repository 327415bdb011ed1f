import { expect } from 'chai';
import { describe, it } from 'mocha';
import type { DomainEvent } from '../../../src/domain/events/index.js';
import { creditBalance, userEvolver } from '../../../src/domain/users/user-state.js';
import { decideWithdrawCredits, type WithdrawCreditsCommand } from '../../../src/domain/users/withdraw-credits.js';
import { earlierOf } from '../../support/operations.js';
import { deciderSpec } from '../../support/decider-spec.js';
import { at, DAY, event, iso, registered, rewardGranted, T0 } from '../../support/events.js';

const user = deciderSpec(userEvolver);

function withdraw(overrides: Partial<WithdrawCreditsCommand> = {}): WithdrawCreditsCommand {
  return { key: 'coins', amount: 1, operation_id: null, earlier: null, isCreditReward: true, now: T0, ...overrides };
}

function withdrawn(data: {
  amount: number;
  withdrawn: number;
  start: number;
  debits: { grant_id: string; credits: number }[];
  operation_id?: string | null;
  key?: string;
  at?: string;
}) {
  return event('CreditsWithdrawn', {
    operation_id: data.operation_id ?? null,
    key: data.key ?? 'coins',
    withdrawn_at: data.at ?? T0.toISOString(),
    credits_requested_to_withdraw: data.amount,
    credits_withdrawn: data.withdrawn,
    credits_available_at_start: data.start,
    credits_available_at_end: data.start - data.withdrawn,
    debits: data.debits,
  });
}

/** Granted in this order; drain order must be c (soonest), d (same expiry, granted later), b, then a (never). */
const wallet: DomainEvent[] = [
  registered('ann', { registered_at: iso(-10 * DAY) }),
  rewardGranted({ grant_id: 'a', credits: 5, balance_after: 5, granted_at: iso(-10 * DAY), expires_at: null }),
  rewardGranted({ grant_id: 'b', credits: 5, balance_after: 10, granted_at: iso(-9 * DAY), expires_at: iso(30 * DAY) }),
  rewardGranted({ grant_id: 'c', credits: 5, balance_after: 15, granted_at: iso(-8 * DAY), expires_at: iso(10 * DAY) }),
  rewardGranted({ grant_id: 'd', credits: 5, balance_after: 20, granted_at: iso(-7 * DAY), expires_at: iso(10 * DAY) }),
  rewardGranted({ grant_id: 'x', reward_key: 'gems', credits: 50, balance_after: 50, granted_at: iso(-7 * DAY) }),
];

describe('decideWithdrawCredits (SPEC §6)', () => {
  describe('errors', () => {
    it('NOT_FOUND.USER for an unknown user', () => {
      user
        .given([])
        .when((state) => decideWithdrawCredits(state, withdraw()))
        .thenError('NOT_FOUND.USER', 'path:/app_user_id');
    });

    it('WITHDRAW.REWARD_NOT_FOUND when the key is not a credit reward (unknown or another kind)', () => {
      user
        .given(wallet)
        .when((state) => decideWithdrawCredits(state, withdraw({ key: 'vip', isCreditReward: false })))
        .thenError('WITHDRAW.REWARD_NOT_FOUND', '/key');
    });
  });

  describe('drain order: earliest expires_at first, null last, then oldest grant', () => {
    it('drains c, d, b, a for a withdrawal of everything', () => {
      const { result, state } = user
        .given(wallet)
        .when((state) => decideWithdrawCredits(state, withdraw({ amount: 20 })))
        .then([
          withdrawn({
            amount: 20,
            withdrawn: 20,
            start: 20,
            debits: [
              { grant_id: 'c', credits: 5 },
              { grant_id: 'd', credits: 5 },
              { grant_id: 'b', credits: 5 },
              { grant_id: 'a', credits: 5 },
            ],
          }),
        ]);
      expect(result).to.deep.equal({ credits_available_at_start: 20, credits_available_at_end: 0, credits_requested_to_withdraw: 20, credits_withdrawn: 20 });
      expect(creditBalance(state, 'gems', T0)).to.equal(50);
    });

    it('takes part of an entry and leaves the rest', () => {
      const { state } = user
        .given(wallet)
        .when((state) => decideWithdrawCredits(state, withdraw({ amount: 7 })))
        .then([
          withdrawn({
            amount: 7,
            withdrawn: 7,
            start: 20,
            debits: [
              { grant_id: 'c', credits: 5 },
              { grant_id: 'd', credits: 2 },
            ],
          }),
        ]);
      expect(state.entries.filter((entry) => entry.reward_key === 'coins').map((entry) => [entry.entry_id, entry.credits])).to.deep.equal([
        ['a', 5],
        ['b', 5],
        ['c', 0],
        ['d', 3],
      ]);
      expect(creditBalance(state, 'coins', T0)).to.equal(13);
    });

    it('keeps drained entries listed with 0 credits until they expire', () => {
      const { state } = user
        .given(wallet)
        .when((state) => decideWithdrawCredits(state, withdraw({ amount: 5 })))
        .decision();
      const drained = state.entries.find((entry) => entry.entry_id === 'c');
      expect(drained).to.include({ credits: 0, updated_at: T0.toISOString() });
    });

    it('orders by the expiry instant, not by grant order', () => {
      user
        .given([
          registered('ann'),
          rewardGranted({ grant_id: 'late', credits: 1, balance_after: 1, expires_at: iso(20 * DAY) }),
          rewardGranted({ grant_id: 'soon', credits: 1, balance_after: 2, expires_at: iso(2 * DAY) }),
          rewardGranted({ grant_id: 'never', credits: 1, balance_after: 3, expires_at: null }),
          rewardGranted({ grant_id: 'mid', credits: 1, balance_after: 4, expires_at: iso(10 * DAY) }),
        ])
        .when((state) => decideWithdrawCredits(state, withdraw({ amount: 4 })))
        .then([
          withdrawn({
            amount: 4,
            withdrawn: 4,
            start: 4,
            debits: [
              { grant_id: 'soon', credits: 1 },
              { grant_id: 'mid', credits: 1 },
              { grant_id: 'late', credits: 1 },
              { grant_id: 'never', credits: 1 },
            ],
          }),
        ]);
    });

    it('drains never-expiring entries oldest first', () => {
      user
        .given([
          registered('ann'),
          rewardGranted({ grant_id: 'first', credits: 2, balance_after: 2 }),
          rewardGranted({ grant_id: 'second', credits: 2, balance_after: 4 }),
        ])
        .when((state) => decideWithdrawCredits(state, withdraw({ amount: 3 })))
        .then([
          withdrawn({
            amount: 3,
            withdrawn: 3,
            start: 4,
            debits: [
              { grant_id: 'first', credits: 2 },
              { grant_id: 'second', credits: 1 },
            ],
          }),
        ]);
    });

    it('skips empty entries', () => {
      user
        .given([
          registered('ann'),
          rewardGranted({ grant_id: 'first', credits: 2, balance_after: 2, expires_at: iso(DAY) }),
          rewardGranted({ grant_id: 'second', credits: 2, balance_after: 4, expires_at: iso(2 * DAY) }),
          withdrawn({ amount: 2, withdrawn: 2, start: 4, debits: [{ grant_id: 'first', credits: 2 }] }),
        ])
        .when((state) => decideWithdrawCredits(state, withdraw({ amount: 2 })))
        .then([withdrawn({ amount: 2, withdrawn: 2, start: 2, debits: [{ grant_id: 'second', credits: 2 }] })]);
    });
  });

  describe('amounts', () => {
    it('withdraws what is available when more is requested', () => {
      const { result } = user
        .given(wallet)
        .when((state) => decideWithdrawCredits(state, withdraw({ amount: 2_147_483_647 })))
        .decision();
      expect(result).to.deep.equal({
        credits_available_at_start: 20,
        credits_available_at_end: 0,
        credits_requested_to_withdraw: 2_147_483_647,
        credits_withdrawn: 20,
      });
    });

    it('succeeds with 0 withdrawn when nothing is available', () => {
      const { result } = user
        .given([registered('ann')])
        .when((state) => decideWithdrawCredits(state, withdraw({ amount: 3 })))
        .then([withdrawn({ amount: 3, withdrawn: 0, start: 0, debits: [] })]);
      expect(result).to.deep.equal({ credits_available_at_start: 0, credits_available_at_end: 0, credits_requested_to_withdraw: 3, credits_withdrawn: 0 });
    });

    it('never lets a balance go negative over repeated withdrawals', () => {
      let state = user.given(wallet).state;
      for (let i = 0; i < 5; i += 1) {
        const decision = decideWithdrawCredits(state, withdraw({ amount: 6 }));
        state = decision.events.reduce(userEvolver.evolve, state);
      }
      expect(creditBalance(state, 'coins', T0)).to.equal(0);
      expect(state.entries.every((entry) => (entry.credits ?? 0) >= 0)).to.equal(true);
    });
  });

  describe('expiry', () => {
    it('records due expiries first and does not withdraw from expired entries', () => {
      const { result } = user
        .given(wallet)
        .when((state) => decideWithdrawCredits(state, withdraw({ amount: 20, now: at(10 * DAY) })))
        .then([
          event('RewardExpired', { grant_id: 'c', reward_key: 'coins', kind: 'credit', expired_at: iso(10 * DAY), credits_forfeited: 5, balance_after: 15 }),
          event('RewardExpired', { grant_id: 'd', reward_key: 'coins', kind: 'credit', expired_at: iso(10 * DAY), credits_forfeited: 5, balance_after: 10 }),
          withdrawn({
            amount: 20,
            withdrawn: 10,
            start: 10,
            at: iso(10 * DAY),
            debits: [
              { grant_id: 'b', credits: 5 },
              { grant_id: 'a', credits: 5 },
            ],
          }),
        ]);
      expect(result.credits_available_at_end).to.equal(0);
    });

    it('does not use an entry whose expiry is already recorded', () => {
      user
        .given([
          registered('ann'),
          rewardGranted({ grant_id: 'a', credits: 5, balance_after: 5, expires_at: iso(DAY) }),
          event('RewardExpired', { grant_id: 'a', reward_key: 'coins', kind: 'credit', expired_at: iso(DAY), credits_forfeited: 5, balance_after: 0 }),
        ])
        .when((state) => decideWithdrawCredits(state, withdraw({ amount: 5, now: at(2 * DAY) })))
        .then([withdrawn({ amount: 5, withdrawn: 0, start: 0, at: iso(2 * DAY), debits: [] })]);
    });
  });

  describe('operation_id', () => {
    const first = withdrawn({
      amount: 7,
      withdrawn: 7,
      start: 20,
      operation_id: 'op-1',
      debits: [
        { grant_id: 'c', credits: 5 },
        { grant_id: 'd', credits: 2 },
      ],
    });

    it('is recorded with the withdrawal', () => {
      user
        .given(wallet)
        .when((state) => decideWithdrawCredits(state, withdraw({ amount: 7, operation_id: 'op-1', earlier: earlierOf('withdraw', wallet, 'op-1') })))
        .then([first]);
    });

    it('a repeat with the same key and amount debits nothing and returns the stored result', () => {
      const { result, state } = user
        .given([...wallet, first])
        .when((state) =>
          decideWithdrawCredits(state, withdraw({ amount: 7, operation_id: 'op-1', earlier: earlierOf('withdraw', [...wallet, first], 'op-1'), now: at(DAY) })),
        )
        .thenNothing();
      expect(result).to.deep.equal({ credits_available_at_start: 20, credits_available_at_end: 13, credits_requested_to_withdraw: 7, credits_withdrawn: 7 });
      expect(creditBalance(state, 'coins', at(DAY))).to.equal(13);
    });

    it('a repeat returns the stored result even when it withdrew 0', () => {
      const { result } = user
        .given([
          registered('ann'),
          withdrawn({ amount: 4, withdrawn: 0, start: 0, operation_id: 'op-0', debits: [] }),
          rewardGranted({ grant_id: 'g', credits: 9, balance_after: 9 }),
        ])
        .when((state) =>
          decideWithdrawCredits(
            state,
            withdraw({
              amount: 4,
              operation_id: 'op-0',
              earlier: earlierOf(
                'withdraw',
                [
                  registered('ann'),
                  withdrawn({ amount: 4, withdrawn: 0, start: 0, operation_id: 'op-0', debits: [] }),
                  rewardGranted({ grant_id: 'g', credits: 9, balance_after: 9 }),
                ],
                'op-0',
              ),
            }),
          ),
        )
        .thenNothing();
      expect(result.credits_withdrawn).to.equal(0);
    });

    it('WITHDRAW.OPERATION_ID_REUSED for another amount', () => {
      user
        .given([...wallet, first])
        .when((state) =>
          decideWithdrawCredits(state, withdraw({ amount: 8, operation_id: 'op-1', earlier: earlierOf('withdraw', [...wallet, first], 'op-1') })),
        )
        .thenError('WITHDRAW.OPERATION_ID_REUSED', '/operation_id');
    });

    it('WITHDRAW.OPERATION_ID_REUSED for another key', () => {
      user
        .given([...wallet, first])
        .when((state) =>
          decideWithdrawCredits(state, withdraw({ key: 'gems', amount: 7, operation_id: 'op-1', earlier: earlierOf('withdraw', [...wallet, first], 'op-1') })),
        )
        .thenError('WITHDRAW.OPERATION_ID_REUSED', '/operation_id');
    });

    it('WITHDRAW.OPERATION_ID_REUSED for another key that names no credit reward: the remembered id answers first', () => {
      user
        .given([...wallet, first])
        .when((state) =>
          decideWithdrawCredits(
            state,
            withdraw({
              key: 'premium-week',
              isCreditReward: false,
              amount: 7,
              operation_id: 'op-1',
              earlier: earlierOf('withdraw', [...wallet, first], 'op-1'),
            }),
          ),
        )
        .thenError('WITHDRAW.OPERATION_ID_REUSED', '/operation_id');
    });

    it('a repeat returns the stored result even when its key no longer names a credit reward', () => {
      const { result } = user
        .given([...wallet, first])
        .when((state) =>
          decideWithdrawCredits(
            state,
            withdraw({ isCreditReward: false, amount: 7, operation_id: 'op-1', earlier: earlierOf('withdraw', [...wallet, first], 'op-1') }),
          ),
        )
        .thenNothing();
      expect(result.credits_withdrawn).to.equal(7);
    });

    it('an operation_id a manual grant used is new to withdrawals: the withdrawal is made (withdrawals and grants keep their ids apart)', () => {
      const manual = rewardGranted({ grant_id: 'm/0', credits: 1, balance_after: 21, cause: { type: 'manual', operation_id: 'op-2' } });
      const { events } = user
        .given([...wallet, manual])
        .when((state) =>
          decideWithdrawCredits(state, withdraw({ amount: 7, operation_id: 'op-2', earlier: earlierOf('withdraw', [...wallet, manual], 'op-2') })),
        )
        .decision();
      expect(events.map((event) => event.type)).to.deep.equal(['CreditsWithdrawn']);
      expect(events[0]!.data).to.include({ operation_id: 'op-2', credits_withdrawn: 7 });
    });

    it('another operation_id is a new withdrawal', () => {
      user
        .given([...wallet, first])
        .when((state) =>
          decideWithdrawCredits(state, withdraw({ amount: 7, operation_id: 'op-9', earlier: earlierOf('withdraw', [...wallet, first], 'op-9') })),
        )
        .then([
          withdrawn({
            amount: 7,
            withdrawn: 7,
            start: 13,
            operation_id: 'op-9',
            debits: [
              { grant_id: 'd', credits: 3 },
              { grant_id: 'b', credits: 4 },
            ],
          }),
        ]);
    });
  });
});
