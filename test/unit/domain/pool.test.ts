import { expect } from 'chai';
import { describe, it } from 'mocha';
import type { PoolCode } from '../../../src/domain/events/pool-events.js';
import {
  availableCodes,
  decideAddPoolCodes,
  decideRequestPoolCode,
  decideWithdrawPoolRequest,
  poolEvolver,
  poolFigures,
  poolGrantKey,
} from '../../../src/domain/pools/pool.js';
import { deciderSpec } from '../../support/decider-spec.js';
import { at, DAY, event, iso, T0 } from '../../support/events.js';

const pool = deciderSpec(poolEvolver);

function code(value: string, expiresInDays = 30, link: string | null = `https://apps.example/redeem?code=${value}`): PoolCode {
  return { value, link, expires_at: iso(expiresInDays * DAY) };
}

const added = (...codes: PoolCode[]) => event('PoolCodesAdded', { codes });
const requested = (grantId: string, user = 'ann', expiresAt: string | null = null) =>
  event('PoolCodeRequested', { grant_id: grantId, app_user_id: user, expires_at: expiresAt });
const assigned = (grantId: string, poolCode: PoolCode, user = 'ann') => event('PoolCodeAssigned', { grant_id: grantId, app_user_id: user, code: poolCode });

describe('code pools (SPEC §5.3, §7.5)', () => {
  describe('decideRequestPoolCode', () => {
    it('gives the oldest unused code', () => {
      pool
        .given([added(code('A'), code('B')), added(code('C'))])
        .when((state) => decideRequestPoolCode(state, 'g1', 'ann', null, T0))
        .then([assigned('g1', code('A'))]);
    });

    it('skips codes already given out: each code goes to one grant', () => {
      const { state } = pool
        .given([added(code('A'), code('B')), assigned('g1', code('A'))])
        .when((state) => decideRequestPoolCode(state, 'g2', 'bob', null, T0))
        .then([assigned('g2', code('B'), 'bob')]);
      expect(availableCodes(state, T0)).to.equal(0);
    });

    it('skips pool codes whose own expires_at has passed (and one expiring exactly now)', () => {
      pool
        .given([added(code('OLD', -1), { value: 'NOW', link: null, expires_at: T0.toISOString() }, code('NEW', 1))])
        .when((state) => decideRequestPoolCode(state, 'g1', 'ann', null, T0))
        .then([assigned('g1', code('NEW', 1))]);
    });

    it('waits in line when no usable code is left', () => {
      const { state } = pool
        .given([added(code('A', -1))])
        .when((state) => decideRequestPoolCode(state, 'g1', 'ann', null, T0))
        .then([requested('g1')]);
      expect(state.waiting).to.deep.equal([{ grant_id: 'g1', app_user_id: 'ann', expires_at: null }]);
    });

    it('waits behind earlier waiting grants (grant order)', () => {
      pool
        .given([requested('g1')])
        .when((state) => decideRequestPoolCode(state, 'g2', 'bob', null, T0))
        .then([requested('g2', 'bob')]);
    });

    it('tells grants apart by user: one grant id of two users (one operation_id) gets two codes', () => {
      pool
        .given([added(code('A'), code('B')), assigned('manual:welcome/0', code('A'), 'ann')])
        .when((state) => decideRequestPoolCode(state, 'manual:welcome/0', 'bob', null, T0))
        .then([assigned('manual:welcome/0', code('B'), 'bob')]);
      pool
        .given([requested('manual:welcome/0', 'ann')])
        .when((state) => decideRequestPoolCode(state, 'manual:welcome/0', 'bob', null, T0))
        .then([requested('manual:welcome/0', 'bob')]);
    });

    it('gives a code at once past waiting grants that have expired, and asks nothing for a grant already expired', () => {
      pool
        .given([added(code('A')), requested('gone', 'ann', iso(-DAY))])
        .when((state) => decideRequestPoolCode(state, 'g2', 'bob', null, T0))
        .then([assigned('g2', code('A'), 'bob')]);
      pool
        .given([])
        .when((state) => decideRequestPoolCode(state, 'late', 'cid', iso(-1), T0))
        .thenNothing();
      pool
        .given([])
        .when((state) => decideRequestPoolCode(state, 'waits', 'dan', iso(DAY), T0))
        .then([requested('waits', 'dan', iso(DAY))]);
    });

    it('is idempotent per grant: assigned or waiting grants ask for nothing new', () => {
      pool
        .given([added(code('A'), code('B')), assigned('g1', code('A'))])
        .when((state) => decideRequestPoolCode(state, 'g1', 'ann', null, T0))
        .thenNothing();
      pool
        .given([requested('g1')])
        .when((state) => decideRequestPoolCode(state, 'g1', 'ann', null, T0))
        .thenNothing();
    });
  });

  describe('decideWithdrawPoolRequest', () => {
    const withdrawn = (grantId: string, user = 'ann') =>
      event('PoolRequestWithdrawn', { grant_id: grantId, app_user_id: user, withdrawn_at: T0.toISOString() });

    it('takes a revoked waiting grant out of the line: the next refill serves the grant behind it', () => {
      const { state } = pool
        .given([requested('revoked', 'ann'), requested('live', 'bob')])
        .when((state) => decideWithdrawPoolRequest(state, 'revoked', 'ann', T0))
        .then([withdrawn('revoked', 'ann')]);
      expect(poolFigures(state, T0)).to.include({ waiting: 1 });
      pool
        .given([requested('revoked', 'ann'), requested('live', 'bob'), withdrawn('revoked', 'ann')])
        .when((state) => decideAddPoolCodes(state, [code('R1')], T0))
        .then([added(code('R1')), assigned('live', code('R1'), 'bob')]);
    });

    it('a revoked grant asks no more: a repeated request (a reaction page handled again) gets no code, even with codes free', () => {
      pool
        .given([requested('revoked', 'ann'), withdrawn('revoked', 'ann'), added(code('FREE'))])
        .when((state) => decideRequestPoolCode(state, 'revoked', 'ann', null, T0))
        .thenNothing();
    });

    it('withdraws a grant the pool has not been asked for yet (the pools reaction trails the clawback): its later request gets nothing', () => {
      pool
        .given([requested('g1', 'ann')])
        .when((state) => decideWithdrawPoolRequest(state, 'g1', 'bob', T0))
        .then([withdrawn('g1', 'bob')]);
      pool
        .given([added(code('FREE')), withdrawn('g1', 'bob')])
        .when((state) => decideRequestPoolCode(state, 'g1', 'bob', null, T0))
        .thenNothing();
    });

    it('records nothing for a grant that has its code, or a repeat', () => {
      pool
        .given([added(code('A')), assigned('g1', code('A'))])
        .when((state) => decideWithdrawPoolRequest(state, 'g1', 'ann', T0))
        .thenNothing();
      pool
        .given([requested('g1', 'ann'), withdrawn('g1', 'ann')])
        .when((state) => decideWithdrawPoolRequest(state, 'g1', 'ann', T0))
        .thenNothing();
    });
  });

  describe('decideAddPoolCodes', () => {
    it('adds new codes and reports added/skipped', () => {
      const { result } = pool
        .given([])
        .when((state) => decideAddPoolCodes(state, [code('A'), code('B')], T0))
        .then([added(code('A'), code('B'))]);
      expect(result).to.deep.equal({ added: 2, skipped: 0 });
    });

    it('skips values already in the pool (given out or not) and duplicates within the call', () => {
      const { result } = pool
        .given([added(code('A'), code('B')), assigned('g1', code('A'))])
        .when((state) => decideAddPoolCodes(state, [code('A'), code('B', 99), code('C'), code('C')], T0))
        .then([added(code('C'))]);
      expect(result).to.deep.equal({ added: 1, skipped: 3 });
    });

    it('records nothing when every code is known', () => {
      const { result } = pool
        .given([added(code('A'))])
        .when((state) => decideAddPoolCodes(state, [code('A')], T0))
        .thenNothing();
      expect(result).to.deep.equal({ added: 0, skipped: 1 });
    });

    it('serves waiting grants in grant order, as far as codes go', () => {
      const { state } = pool
        .given([requested('g1', 'ann'), requested('g2', 'bob'), requested('g3', 'cid')])
        .when((state) => decideAddPoolCodes(state, [code('A'), code('B')], T0))
        .then([added(code('A'), code('B')), assigned('g1', code('A'), 'ann'), assigned('g2', code('B'), 'bob')]);
      expect(state.waiting).to.deep.equal([{ grant_id: 'g3', app_user_id: 'cid', expires_at: null }]);
      expect(state.byGrant).to.deep.equal({ [poolGrantKey('ann', 'g1')]: 'A', [poolGrantKey('bob', 'g2')]: 'B' });
    });

    it('does not serve waiting grants with expired codes', () => {
      pool
        .given([requested('g1')])
        .when((state) => decideAddPoolCodes(state, [code('OLD', -1), code('NEW')], T0))
        .then([added(code('OLD', -1), code('NEW')), assigned('g1', code('NEW'))]);
    });

    it('skips a waiting grant whose entry has expired: the next one gets the code, and it counts as waiting no more', () => {
      const { state } = pool
        .given([requested('gone', 'ann', iso(-DAY)), requested('live', 'bob')])
        .when((state) => decideAddPoolCodes(state, [code('E1')], T0))
        .then([added(code('E1')), assigned('live', code('E1'), 'bob')]);
      expect(poolFigures(state, T0)).to.include({ used: 1, waiting: 0 });
    });

    it('serves waiting grants from codes left earlier when called with nothing new', () => {
      // A code that was usable but not handed out (e.g. added while nobody waited) still serves a later waiter.
      pool
        .given([added(code('A')), requested('g1')])
        .when((state) => decideAddPoolCodes(state, [], at(DAY)))
        .then([assigned('g1', code('A'))]);
    });
  });

  describe('availableCodes', () => {
    it('counts unused codes that are still valid', () => {
      const state = pool.given([added(code('A'), code('B'), code('C', -1), code('D', 2)), assigned('g1', code('A'))]).state;
      expect(availableCodes(state, T0)).to.equal(2);
      expect(availableCodes(state, at(2 * DAY))).to.equal(1);
    });
  });
});
