import { expect } from 'chai';
import { describe, it } from 'mocha';
import { CREDIT_LEDGER, creditLedgerProjection, lastLedgerSeqAt } from '../../../projections/credit-ledger.js';
import { sortablePosition } from '../../../projections/projection.js';
import type { Doc } from '../../../projections/projection.js';
import type { Decision } from '../../../src/domain/decider.js';
import { decideGrantReward } from '../../../src/domain/users/grant-reward-by-hand.js';
import { decideExpireRewards } from '../../../src/domain/users/expire-rewards.js';
import { creditBalance, initialUserState, userEvolver, type UserState } from '../../../src/domain/users/user-state.js';
import { decideWithdrawCredits } from '../../../src/domain/users/withdraw-credits.js';
import { at, DAY, event, interval, iso, logged, projected, registered, rewardGranted, rewardRevoked, spec, T0, TestLog } from '../../support/events.js';

interface Row extends Doc {
  kind: string;
  key: string;
  delta: number;
  balance_after: number;
  position: string;
}

function rows(docs: Record<string, Doc>): Row[] {
  return (Object.values(docs) as Row[]).sort((a, b) => (BigInt(a.position) < BigInt(b.position) ? -1 : 1));
}

describe('credit_ledger projection (SPEC §7.7)', () => {
  it('zero-pads positions so they sort as numbers; the last seq at a position sorts after its rows and before the next', () => {
    expect(sortablePosition(7n)).to.equal('00000000000000000007');
    expect(sortablePosition(18_446_744_073_709_551_615n)).to.equal('18446744073709551615');
    expect(sortablePosition(9n) < sortablePosition(10n)).to.equal(true);
    expect(sortablePosition(9n) < lastLedgerSeqAt(9n) && lastLedgerSeqAt(9n) < sortablePosition(10n)).to.equal(true);
  });

  it('writes one row per credit grant with its cause', () => {
    const recorded = logged(
      'user-ann',
      rewardGranted({ grant_id: 'c1/0', reward_key: 'coins', credits: 5, balance_after: 5, cause: { type: 'claim', code: 'BOB234', claim_id: 'c1' } }),
      { id: 'ev-7', position: 7n, recordedAt: at(DAY), metadata: { correlation_id: 'req-7' } },
    );
    expect(projected(creditLedgerProjection, [recorded])).to.deep.equal({
      [`${CREDIT_LEDGER}/ev-7`]: {
        app_user_id: 'ann',
        seq: '00000000000000000007',
        at: iso(DAY),
        event_id: 'ev-7',
        position: '7',
        request_id: 'req-7',
        kind: 'grant',
        key: 'coins',
        delta: 5,
        balance_after: 5,
        operation_id: null,
        grant_id: 'c1/0',
        entry_id: 'c1/0',
        cause: { type: 'claim', description: 'claim of code BOB234 by ann', code: 'BOB234', claim_id: 'c1' },
      },
    });
  });

  it('writes withdrawal rows with the operation id and expiry rows with the forfeited credits', () => {
    const log = new TestLog();
    log.append(
      'user-ann',
      event('CreditsWithdrawn', {
        operation_id: 'op-1',
        key: 'coins',
        withdrawn_at: T0.toISOString(),
        credits_requested_to_withdraw: 9,
        credits_withdrawn: 4,
        credits_available_at_start: 4,
        credits_available_at_end: 0,
        debits: [{ grant_id: 'g1', credits: 4 }],
      }),
      event('RewardExpired', { grant_id: 'g2', reward_key: 'coins', kind: 'credit', expired_at: iso(DAY), credits_forfeited: 3, balance_after: 1 }),
    );
    const [withdrawal, expiry] = rows(projected(creditLedgerProjection, log.events));
    expect(withdrawal).to.deep.include({
      kind: 'withdraw',
      key: 'coins',
      delta: -4,
      balance_after: 0,
      operation_id: 'op-1',
      debits: [{ grant_id: 'g1', credits: 4 }],
    });
    expect(withdrawal?.cause).to.deep.include({ type: 'withdrawal', requested: 9 });
    expect(expiry).to.deep.include({ kind: 'expire', key: 'coins', delta: -3, balance_after: 1, operation_id: null, grant_id: 'g2' });
  });

  it('a credit clawback is one row, and one more shortfall row when even 1 credit was already spent', () => {
    const revoked = (grantId: string, shortfall: number) =>
      rewardRevoked({
        grant_id: grantId,
        kind: 'credit',
        credits_granted: 10,
        debits: [{ grant_id: grantId, credits: 10 - shortfall }],
        shortfall,
        balance_after: 0,
      });
    const log = new TestLog();
    log.append('user-ann', revoked('g1', 0), revoked('g2', 1));
    const rows = Object.values(projected(creditLedgerProjection, log.events)) as { kind: string; grant_id: string; shortfall?: number }[];
    expect(rows.map(({ kind, grant_id, shortfall }) => [kind, grant_id, shortfall ?? null])).to.have.deep.members([
      ['clawback', 'g1', null],
      ['clawback', 'g2', null],
      ['shortfall', 'g2', 1],
    ]);
  });

  it('leaves out non-credit grants and expiries', () => {
    const log = new TestLog();
    log.append(
      'user-ann',
      rewardGranted({ grant_id: 'g1', reward_key: 'vip', kind: 'basic', expires_at: iso(DAY) }),
      event('RewardExpired', { grant_id: 'g1', reward_key: 'vip', kind: 'basic', expired_at: iso(DAY), credits_forfeited: null, balance_after: null }),
      registered('ann'),
    );
    expect(projected(creditLedgerProjection, log.events)).to.deep.equal({});
  });

  it("chains: every row's balance_after = previous balance_after + delta, ending at the user's active credits", () => {
    // Drive the real deciders through grants, withdrawals and expiries of two keys.
    const log = new TestLog();
    let state: UserState = initialUserState();
    const apply = <R>(decision: Decision<R>): R => {
      log.append('user-ann', ...decision.events);
      state = decision.events.reduce(userEvolver.evolve, state);
      return decision.result;
    };
    apply({ events: [registered('ann')], result: null });
    const grant = (key: string, credits: number, days: number | null, now: Date, prefix: string) =>
      apply(
        decideGrantReward(state, {
          key,
          spec: spec(key, 'credit', { credits, ...(days === null ? {} : { deactivation: interval(days, 'days') }) }),
          operation_id: null,
          earlier: null,
          grant_id_prefix: prefix,
          now,
        }),
      );
    const withdraw = (key: string, amount: number, now: Date) =>
      apply(decideWithdrawCredits(state, { key, amount, operation_id: null, earlier: null, isCreditReward: true, now }));

    grant('coins', 10, 5, T0, 'g1');
    grant('coins', 7, null, at(1000), 'g2');
    grant('gems', 3, 2, at(2000), 'g3');
    withdraw('coins', 12, at(DAY));
    grant('coins', 4, 30, at(2 * DAY), 'g4');
    withdraw('gems', 1, at(3 * DAY)); // gems expired at day 2: recorded first, nothing to withdraw
    apply(decideExpireRewards(state, at(6 * DAY))); // coins g1 (drained to 0) expires at day 5
    withdraw('coins', 100, at(7 * DAY));

    const ledger = rows(projected(creditLedgerProjection, log.events));
    // `+ 0` turns the -0 of an empty withdrawal/expiry into 0 (JSON shows both as 0).
    expect(ledger.map((row) => [row.kind, row.key, row.delta + 0, row.balance_after])).to.deep.equal([
      ['grant', 'coins', 10, 10],
      ['grant', 'coins', 7, 17],
      ['grant', 'gems', 3, 3],
      ['withdraw', 'coins', -12, 5],
      ['grant', 'coins', 4, 9],
      ['expire', 'gems', -3, 0],
      ['withdraw', 'gems', 0, 0],
      ['expire', 'coins', 0, 9],
      ['withdraw', 'coins', -9, 0],
    ]);
    for (const key of ['coins', 'gems']) {
      let balance = 0;
      for (const row of ledger.filter((candidate) => candidate.key === key)) {
        expect(row.balance_after, `${key} at ${row.position}`).to.equal(balance + row.delta);
        balance = row.balance_after;
      }
      expect(balance, key).to.equal(creditBalance(state, key, at(7 * DAY)));
    }
  });
});
