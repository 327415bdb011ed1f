import { expect } from 'chai';
import { describe, it } from 'mocha';
import type { PoolCode } from '../../../src/domain/events/pool-events.js';
import { POOL_CODES, POOL_GRANTS, poolGrantId, poolIndexProjection } from '../../../projections/pool-index.js';
import { type DomainEvent, streams } from '../../../src/domain/events/index.js';
import {
  availableCodes,
  decideAddPoolCodes,
  decideLineChanges,
  decideRequestPoolCode,
  decideWithdrawPoolRequest,
  type KnownGrant,
  type LineChange,
  poolEvolver,
  poolGrantKey,
  poolFigures,
} from '../../../src/domain/pools/pool.js';
import { deciderSpec } from '../../support/decider-spec.js';
import { at, DAY, event, iso, logged, projected, T0 } from '../../support/events.js';

const pool = deciderSpec(poolEvolver);

function code(value: string, expiresInDays = 30, link: string | null = `https://apps.example/redeem?code=${value}`): PoolCode {
  return { value, link, expires_at: iso(expiresInDays * DAY) };
}

const REWARD = 'coins';

/** What the pool index holds after `history` (projections/pool-index.ts), as the pool's commands look it up. */
function indexOf(history: DomainEvent[]) {
  const docs = projected(
    poolIndexProjection,
    history.map((recorded, index) => logged(streams.pool(REWARD), recorded, { position: BigInt(index + 1), revision: index })),
  );
  return {
    grant: (user: string, grantId: string) => (docs[`${POOL_GRANTS}/${poolGrantId(REWARD, user, grantId)}`] as KnownGrant | undefined) ?? null,
    values: () =>
      new Set(
        Object.keys(docs)
          .filter((key) => key.startsWith(`${POOL_CODES}/`))
          .map((key) => (JSON.parse(key.slice(POOL_CODES.length + 1)) as string[])[1]!),
      ),
  };
}

/** A request for a grant made at log position `position` (by default after every grant in `history`). */
const requestOn = (history: DomainEvent[], grantId: string, user: string, expiresAt: string | null, position = 10_000n) =>
  pool
    .given(history)
    .when((state) =>
      decideRequestPoolCode(state, { grant_id: grantId, app_user_id: user, expires_at: expiresAt, position }, T0, indexOf(history).grant(user, grantId)),
    );
const withdrawOn = (history: DomainEvent[], grantId: string, user: string) =>
  pool.given(history).when(() => decideWithdrawPoolRequest(grantId, user, T0, indexOf(history).grant(user, grantId)));
const addOn = (history: DomainEvent[], codes: PoolCode[], now: Date) =>
  pool.given(history).when((state) => decideAddPoolCodes(state, codes, indexOf(history).values(), now));

const added = (...codes: PoolCode[]) => event('PoolCodesAdded', { codes });
/** `grantPosition` null: a request recorded before positions were kept (first in line, in arrival order). */
const requested = (grantId: string, user = 'ann', expiresAt: string | null = null, grantPosition: string | null = null) =>
  event('PoolCodeRequested', { grant_id: grantId, app_user_id: user, expires_at: expiresAt, grant_position: grantPosition });
const assigned = (grantId: string, poolCode: PoolCode, user = 'ann') => event('PoolCodeAssigned', { grant_id: grantId, app_user_id: user, code: poolCode });

describe('code pools (SPEC §5.3, §7.5)', () => {
  describe('decideRequestPoolCode', () => {
    it('a request for an earlier grant takes its place in line ahead of later grants that asked first (SPEC §5.3: grant order)', () => {
      // A manual grant (position 50) asked before the pools reaction asked for a sender grant made earlier (20).
      requestOn([requested('late', 'bob', null, '50')], 'early', 'ann', null, 20n).then([requested('early', 'ann', null, '20')]);
      addOn([requested('late', 'bob', null, '50'), requested('early', 'ann', null, '20')], [code('A')], T0).then([
        added(code('A')),
        assigned('early', code('A')),
      ]);
      // Requests recorded before positions were kept came first; a retry that could not tell its grant's position goes last.
      const line = [
        requested('old', 'olga'),
        requested('c', 'cy', null, '30'),
        requested('a', 'ann', null, '10'),
        requested('b', 'bob', null, '30'),
        requested('retry', 'rita'),
      ];
      addOn(line, [code('A'), code('B'), code('C'), code('D'), code('E')], T0).then([
        added(code('A'), code('B'), code('C'), code('D'), code('E')),
        assigned('old', code('A'), 'olga'),
        assigned('a', code('B')),
        assigned('c', code('C'), 'cy'),
        assigned('b', code('D'), 'bob'),
        assigned('retry', code('E'), 'rita'),
      ]);
    });

    it('gives the oldest unused code', () => {
      requestOn([added(code('A'), code('B')), added(code('C'))], 'g1', 'ann', null).then([assigned('g1', code('A'))]);
    });

    it('skips codes already given out: each code goes to one grant', () => {
      const { state } = requestOn([added(code('A'), code('B')), assigned('g1', code('A'))], 'g2', 'bob', null).then([assigned('g2', code('B'), 'bob')]);
      expect(availableCodes(state, T0)).to.equal(0);
    });

    it('skips pool codes whose own expires_at has passed (and one expiring exactly now)', () => {
      requestOn([added(code('OLD', -1), { value: 'NOW', link: null, expires_at: T0.toISOString() }, code('NEW', 1))], 'g1', 'ann', null).then([
        assigned('g1', code('NEW', 1)),
      ]);
    });

    it('waits in line when no usable code is left', () => {
      const { state } = requestOn([added(code('A', -1))], 'g1', 'ann', null).then([requested('g1', 'ann', null, '10000')]);
      expect(state.waiting).to.deep.equal([{ grant_id: 'g1', app_user_id: 'ann', expires_at: null, grant_position: '10000' }]);
    });

    it('waits behind earlier waiting grants (grant order)', () => {
      requestOn([requested('g1')], 'g2', 'bob', null).then([requested('g2', 'bob', null, '10000')]);
    });

    it('tells grants apart by user: one grant id of two users (one operation_id) gets two codes', () => {
      requestOn([added(code('A'), code('B')), assigned('manual:welcome/0', code('A'), 'ann')], 'manual:welcome/0', 'bob', null).then([
        assigned('manual:welcome/0', code('B'), 'bob'),
      ]);
      requestOn([requested('manual:welcome/0', 'ann')], 'manual:welcome/0', 'bob', null).then([requested('manual:welcome/0', 'bob', null, '10000')]);
    });

    it('gives a code at once past waiting grants that have expired, and asks nothing for a grant already expired', () => {
      requestOn([added(code('A')), requested('gone', 'ann', iso(-DAY))], 'g2', 'bob', null).then([assigned('g2', code('A'), 'bob')]);
      requestOn([], 'late', 'cid', iso(-1)).thenNothing();
      requestOn([], 'waits', 'dan', iso(DAY)).then([requested('waits', 'dan', iso(DAY), '10000')]);
    });

    it('is idempotent per grant: assigned or waiting grants ask for nothing new', () => {
      requestOn([added(code('A'), code('B')), assigned('g1', code('A'))], 'g1', 'ann', null).thenNothing();
      requestOn([requested('g1')], 'g1', 'ann', null).thenNothing();
    });
  });

  describe('decideWithdrawPoolRequest', () => {
    const withdrawn = (grantId: string, user = 'ann') =>
      event('PoolRequestWithdrawn', { grant_id: grantId, app_user_id: user, withdrawn_at: T0.toISOString() });

    it('takes a revoked waiting grant out of the line: the next refill serves the grant behind it', () => {
      const { state } = withdrawOn([requested('revoked', 'ann'), requested('live', 'bob')], 'revoked', 'ann').then([withdrawn('revoked', 'ann')]);
      expect(poolFigures(state, T0)).to.include({ waiting: 1 });
      addOn([requested('revoked', 'ann'), requested('live', 'bob'), withdrawn('revoked', 'ann')], [code('R1')], T0).then([
        added(code('R1')),
        assigned('live', code('R1'), 'bob'),
      ]);
    });

    it('a revoked grant asks no more: a repeated request (a reaction page handled again) gets no code, even with codes free', () => {
      requestOn([requested('revoked', 'ann'), withdrawn('revoked', 'ann'), added(code('FREE'))], 'revoked', 'ann', null).thenNothing();
    });

    it('withdraws a grant the pool has not been asked for yet (the pools reaction trails the clawback): its later request gets nothing', () => {
      withdrawOn([requested('g1', 'ann')], 'g1', 'bob').then([withdrawn('g1', 'bob')]);
      requestOn([added(code('FREE')), withdrawn('g1', 'bob')], 'g1', 'bob', null).thenNothing();
    });

    it('records nothing for a grant that has its code, or a repeat', () => {
      withdrawOn([added(code('A')), assigned('g1', code('A'))], 'g1', 'ann').thenNothing();
      withdrawOn([requested('g1', 'ann'), withdrawn('g1', 'ann')], 'g1', 'ann').thenNothing();
    });
  });

  describe('decideLineChanges (a page of the pools reaction: one decision per pool)', () => {
    const withdrawn = (grantId: string, user = 'ann') =>
      event('PoolRequestWithdrawn', { grant_id: grantId, app_user_id: user, withdrawn_at: T0.toISOString() });
    const request = (grantId: string, user: string, position: bigint): LineChange => ({
      kind: 'request',
      grant_id: grantId,
      app_user_id: user,
      expires_at: null,
      position,
    });
    const withdraw = (grantId: string, user: string): LineChange => ({ kind: 'withdraw', grant_id: grantId, app_user_id: user });
    const changesOn = (history: DomainEvent[], changes: LineChange[]) => {
      const index = indexOf(history);
      const known = new Map(
        changes.flatMap((change) => {
          const grant = index.grant(change.app_user_id, change.grant_id);
          return grant ? [[poolGrantKey(change.app_user_id, change.grant_id), grant] as const] : [];
        }),
      );
      return pool.given(history).when((state) => decideLineChanges(state, changes, T0, known));
    };

    it('decides each change on the state the ones before it left, as one command each would: codes while they last, then the line', () => {
      const { result } = changesOn([added(code('A'), code('B'))], [request('g1', 'ann', 11n), request('g2', 'bob', 12n), request('g3', 'cid', 13n)]).then([
        assigned('g1', code('A'), 'ann'),
        assigned('g2', code('B'), 'bob'),
        requested('g3', 'cid', null, '13'),
      ]);
      expect(result).to.deep.equal({ codes: [code('A'), code('B'), null], causes: [0, 1, 2] });
    });

    it('a grant asked for twice in one decision gets one code; one revoked after its request leaves the line', () => {
      const { result } = changesOn(
        [added(code('A'))],
        [request('g1', 'ann', 11n), request('g1', 'ann', 11n), request('g2', 'bob', 12n), withdraw('g2', 'bob')],
      ).then([assigned('g1', code('A'), 'ann'), requested('g2', 'bob', null, '12'), withdrawn('g2', 'bob')]);
      // The repeat answers with the code the first request got, as a repeated command does.
      expect(result).to.deep.equal({ codes: [code('A'), code('A'), null, null], causes: [0, 2, 3] });
    });

    it('what the pool index knows counts: an assigned grant gets its code again and nothing new; a withdrawn one asks no more', () => {
      const history = [added(code('A'), code('B')), assigned('g1', code('A'), 'ann'), requested('g2', 'bob'), withdrawn('g2', 'bob')];
      const { result } = changesOn(history, [request('g1', 'ann', 11n), request('g2', 'bob', 12n), withdraw('g1', 'ann')]).thenNothing();
      expect(result).to.deep.equal({ codes: [code('A'), null, null], causes: [] });
    });
  });

  describe('decideAddPoolCodes', () => {
    it('adds new codes and reports added/skipped', () => {
      const { result } = addOn([], [code('A'), code('B')], T0).then([added(code('A'), code('B'))]);
      expect(result).to.deep.equal({ added: 2, skipped: 0 });
    });

    it('skips values already in the pool (given out or not) and duplicates within the call', () => {
      const { result } = addOn([added(code('A'), code('B')), assigned('g1', code('A'))], [code('A'), code('B', 99), code('C'), code('C')], T0).then([
        added(code('C')),
      ]);
      expect(result).to.deep.equal({ added: 1, skipped: 3 });
    });

    it('records nothing when every code is known', () => {
      const { result } = addOn([added(code('A'))], [code('A')], T0).thenNothing();
      expect(result).to.deep.equal({ added: 0, skipped: 1 });
    });

    it('serves waiting grants in grant order, as far as codes go', () => {
      const { state } = addOn([requested('g1', 'ann'), requested('g2', 'bob'), requested('g3', 'cid')], [code('A'), code('B')], T0).then([
        added(code('A'), code('B')),
        assigned('g1', code('A'), 'ann'),
        assigned('g2', code('B'), 'bob'),
      ]);
      expect(state.waiting).to.deep.equal([{ grant_id: 'g3', app_user_id: 'cid', expires_at: null, grant_position: null }]);
      expect(state).to.include({ used: 2 });
    });

    it('does not serve waiting grants with expired codes', () => {
      addOn([requested('g1')], [code('OLD', -1), code('NEW')], T0).then([added(code('OLD', -1), code('NEW')), assigned('g1', code('NEW'))]);
    });

    it('skips a waiting grant whose entry has expired: the next one gets the code, and it counts as waiting no more', () => {
      const { state } = addOn([requested('gone', 'ann', iso(-DAY)), requested('live', 'bob')], [code('E1')], T0).then([
        added(code('E1')),
        assigned('live', code('E1'), 'bob'),
      ]);
      expect(poolFigures(state, T0)).to.include({ used: 1, waiting: 0 });
    });

    it('serves waiting grants from codes left earlier when called with nothing new', () => {
      // A code that was usable but not handed out (e.g. added while nobody waited) still serves a later waiter.
      addOn([added(code('A')), requested('g1')], [], at(DAY)).then([assigned('g1', code('A'))]);
    });
  });

  describe('availableCodes', () => {
    it('counts unused codes that are still valid', () => {
      const state = pool.given([added(code('A'), code('B'), code('C', -1), code('D', 2)), assigned('g1', code('A'))]).state;
      expect(availableCodes(state, T0)).to.equal(2);
      expect(availableCodes(state, at(2 * DAY))).to.equal(1);
    });
  });

  describe('decision state (issue #10: bounded by what is live, not by history)', () => {
    it('holds only the free codes and the waiting grants, however many codes went out', () => {
      const codes = Array.from({ length: 5_000 }, (_, index) => code(`C${index}`));
      const history = [added(...codes), ...codes.slice(0, 4_990).map((given, index) => assigned(`g${index}`, given, `u${index}`))];
      const { state } = pool.given(history);
      expect(state.free.map((free) => free.value)).to.deep.equal(codes.slice(4_990).map((free) => free.value));
      expect(JSON.stringify(state).length).to.be.below(2_000);
      expect(poolFigures(state, T0)).to.deep.equal({ available: 10, used: 4_990, expired: 0, waiting: 0 });
    });

    it('keeps the codes a later code was handed out past (a clock that was ahead passed over valid ones), counted as expired while they are', () => {
      const { state } = pool.given([added(code('OLD', -1), code('A'), code('LATER', -2)), assigned('g1', code('A'))]);
      expect(state.free.map((free) => free.value)).to.deep.equal(['OLD', 'LATER']);
      expect(poolFigures(state, T0)).to.deep.equal({ available: 0, used: 1, expired: 2, waiting: 0 });
    });

    it('a clock 5 days ahead passed over a code valid 2 more days: once the clock is right, it is handed out (clock probe)', () => {
      const soon = code('Q1', 2);
      const later = code('Q2', 10);
      // Decided at T0 + 5 days: Q1 looked expired, Q2 went out.
      const ahead = pool
        .given([added(soon, later)])
        .when((state) => decideRequestPoolCode(state, { grant_id: 'g1', app_user_id: 'k1', expires_at: null, position: 1n }, at(5 * DAY), null));
      ahead.then([assigned('g1', later, 'k1')]);
      requestOn([added(soon, later), assigned('g1', later, 'k1')], 'g2', 'k2', null).then([assigned('g2', soon, 'k2')]);
    });

    it('keeps at most 100 codes passed over as expired, dropping the oldest added', () => {
      const expired = Array.from({ length: 1_200 }, (_, index) => code(`X${index}`, -1));
      const { state } = pool.given([added(...expired, code('A'), code('B')), assigned('g1', code('A'))]);
      expect(state.free).to.have.length(101);
      expect(state.free[0]!.value).to.equal('X1100');
      expect(poolFigures(state, T0)).to.deep.equal({ available: 1, used: 1, expired: 1_200, waiting: 0 });
    });
  });
});
