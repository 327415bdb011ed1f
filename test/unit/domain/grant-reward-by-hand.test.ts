import { expect } from 'chai';
import { describe, it } from 'mocha';
import type { GrantSpec } from '../../../src/domain/rewards/grant-and-expire.js';
import { decideGrantReward, type GrantRewardCommand } from '../../../src/domain/users/grant-reward-by-hand.js';
import { decideAbandonClaim } from '../../../src/domain/users/abandon-claim.js';
import { decideAssignRewardValue } from '../../../src/domain/users/assign-reward-value.js';
import { userEvolver } from '../../../src/domain/users/user-state.js';
import { earlierOf } from '../../support/operations.js';
import { deciderSpec } from '../../support/decider-spec.js';
import { at, codeClaimed, DAY, event, interval, iso, registered, rewardGranted, spec, T0 } from '../../support/events.js';

const user = deciderSpec(userEvolver);

function grant(specOrNull: GrantSpec | null, overrides: Partial<GrantRewardCommand> = {}): GrantRewardCommand {
  return { key: specOrNull?.reward.key ?? 'nope', spec: specOrNull, operation_id: null, earlier: null, grant_id_prefix: 'req-1', now: T0, ...overrides };
}

function granted(
  grantId: string,
  key: string,
  kind: 'credit' | 'basic',
  extra: { credits?: number; balance_after?: number; expires_at?: string | null; operation_id?: string | null; at?: string; entry_id?: string } = {},
) {
  return event('RewardGranted', {
    grant_id: grantId,
    entry_id: extra.entry_id ?? grantId,
    reward_key: key,
    kind,
    credits: kind === 'credit' ? (extra.credits ?? 10) : null,
    granted_at: extra.at ?? T0.toISOString(),
    expires_at: extra.expires_at ?? null,
    cause: { type: 'manual', operation_id: extra.operation_id ?? null },
    clawback: 'none',
    balance_after: kind === 'credit' ? (extra.balance_after ?? extra.credits ?? 10) : null,
  });
}

describe('decideGrantReward — manual grants (SPEC §6 POST /rewards/grant)', () => {
  it('NOT_FOUND.USER for an unknown user', () => {
    user
      .given([])
      .when((state) => decideGrantReward(state, grant(spec('vip', 'basic'))))
      .thenError('NOT_FOUND.USER', 'path:/app_user_id');
  });

  it('GRANT.REWARD_NOT_FOUND for an unknown key', () => {
    user
      .given([registered('ann')])
      .when((state) => decideGrantReward(state, grant(null, { key: 'ghost' })))
      .thenError('GRANT.REWARD_NOT_FOUND', '/key');
  });

  it('grants a reward (created) with a manual cause', () => {
    const { result } = user
      .given([registered('ann')])
      .when((state) => decideGrantReward(state, grant(spec('vip', 'basic', { deactivation: interval(3, 'days') }))))
      .then([granted('req-1/0', 'vip', 'basic', { expires_at: iso(3 * DAY) })]);
    expect({ ...result, granted: result.granted.map((grant) => grant.grant_id) }).to.deep.equal({ created: true, granted: ['req-1/0'] });
  });

  it('adds nothing when a basic reward is already active (created = false)', () => {
    const { result } = user
      .given([registered('ann'), granted('old/0', 'vip', 'basic')])
      .when((state) => decideGrantReward(state, grant(spec('vip', 'basic'))))
      .thenNothing();
    expect(result).to.deep.equal({ created: false, granted: [] });
  });

  it('grants a basic reward again after the earlier entry expired, recording the expiry first', () => {
    const { result } = user
      .given([registered('ann'), granted('old/0', 'vip', 'basic', { expires_at: iso(DAY) })])
      .when((state) => decideGrantReward(state, grant(spec('vip', 'basic'), { now: at(DAY) })))
      .then([
        event('RewardExpired', { grant_id: 'old/0', reward_key: 'vip', kind: 'basic', expired_at: iso(DAY), credits_forfeited: null, balance_after: null }),
        granted('req-1/0', 'vip', 'basic', { at: iso(DAY) }),
      ]);
    expect(result.created).to.equal(true);
  });

  it('stacks credit rewards with a running balance_after', () => {
    user
      .given([registered('ann'), granted('old/0', 'coins', 'credit', { credits: 10 })])
      .when((state) => decideGrantReward(state, grant(spec('coins', 'credit', { credits: 10 }))))
      .then([granted('req-1/0', 'coins', 'credit', { credits: 10, balance_after: 20, entry_id: 'old/0' })]);
  });

  it('excludes expired credits from balance_after', () => {
    user
      .given([registered('ann'), granted('old/0', 'coins', 'credit', { credits: 10, expires_at: iso(DAY) })])
      .when((state) => decideGrantReward(state, grant(spec('coins', 'credit', { credits: 3 }), { now: at(2 * DAY) })))
      .then([
        event('RewardExpired', { grant_id: 'old/0', reward_key: 'coins', kind: 'credit', expired_at: iso(DAY), credits_forfeited: 10, balance_after: 0 }),
        granted('req-1/0', 'coins', 'credit', { credits: 3, balance_after: 3, at: iso(2 * DAY) }),
      ]);
  });

  describe('operation_id', () => {
    it('is recorded in the grant cause', () => {
      user
        .given([registered('ann')])
        .when((state) =>
          decideGrantReward(
            state,
            grant(spec('coins', 'credit'), { operation_id: 'op-1', earlier: earlierOf('grant', [registered('ann')], 'op-1'), grant_id_prefix: 'op-derived' }),
          ),
        )
        .then([granted('op-derived/0', 'coins', 'credit', { operation_id: 'op-1' })]);
    });

    it('a repeat with the same key adds nothing (created = false, so 200) and names the original grant', () => {
      const { result } = user
        .given([registered('ann'), granted('op-derived/0', 'coins', 'credit', { operation_id: 'op-1' })])
        .when((state) =>
          decideGrantReward(
            state,
            grant(spec('coins', 'credit'), {
              operation_id: 'op-1',
              earlier: earlierOf('grant', [registered('ann'), granted('op-derived/0', 'coins', 'credit', { operation_id: 'op-1' })], 'op-1'),
              grant_id_prefix: 'other',
              now: at(DAY),
            }),
          ),
        )
        .thenNothing();
      expect({ ...result, granted: result.granted.map((grant) => grant.grant_id) }).to.deep.equal({ created: false, granted: ['op-derived/0'] });
    });

    it('GRANT.OPERATION_ID_REUSED for another key', () => {
      user
        .given([registered('ann'), granted('op-derived/0', 'coins', 'credit', { operation_id: 'op-1' })])
        .when((state) =>
          decideGrantReward(
            state,
            grant(spec('gems', 'credit'), {
              operation_id: 'op-1',
              earlier: earlierOf('grant', [registered('ann'), granted('op-derived/0', 'coins', 'credit', { operation_id: 'op-1' })], 'op-1'),
            }),
          ),
        )
        .thenError('GRANT.OPERATION_ID_REUSED', '/operation_id');
    });

    it('an operation_id a withdrawal used is new to grants: the grant is made (withdrawals and grants keep their ids apart)', () => {
      const withdrawal = event('CreditsWithdrawn', {
        operation_id: 'op-1',
        key: 'coins',
        withdrawn_at: T0.toISOString(),
        credits_requested_to_withdraw: 1,
        credits_withdrawn: 0,
        credits_available_at_start: 0,
        credits_available_at_end: 0,
        debits: [],
      });
      user
        .given([registered('ann'), withdrawal])
        .when((state) =>
          decideGrantReward(
            state,
            grant(spec('coins', 'credit'), {
              operation_id: 'op-1',
              earlier: earlierOf('grant', [registered('ann'), withdrawal], 'op-1'),
              grant_id_prefix: 'op-derived',
            }),
          ),
        )
        .then([granted('op-derived/0', 'coins', 'credit', { operation_id: 'op-1' })]);
    });

    // SPEC §6: "Same operation_id rule as withdrawals" — the first *successful* call with an
    // operation_id is remembered forever. A grant answered 200 (singleton already active,
    // nothing added) is successful, so reusing its operation_id for another key must be refused.
    it('remembers an operation_id whose grant added nothing (200), so another key is GRANT.OPERATION_ID_REUSED', () => {
      const given = [registered('ann'), granted('old/0', 'vip', 'basic')];
      const first = decideGrantReward(user.given(given).state, grant(spec('vip', 'basic'), { operation_id: 'op-7' }));
      expect(first.events.map((candidate) => candidate.type)).to.deep.equal(['RewardGrantSkipped']);
      const state = first.events.reduce(userEvolver.evolve, user.given(given).state);
      const earlier = earlierOf('grant', [...given, ...first.events], 'op-7');
      expect(() => decideGrantReward(state, grant(spec('coins', 'credit'), { operation_id: 'op-7', earlier })))
        .to.throw()
        .with.property('code', 'GRANT.OPERATION_ID_REUSED');
    });

    it('a repeat of an operation_id whose grant added nothing still adds nothing later (after the active entry expired)', () => {
      const given = [registered('ann'), granted('old/0', 'vip', 'basic', { expires_at: iso(DAY) })];
      const first = decideGrantReward(user.given(given).state, grant(spec('vip', 'basic'), { operation_id: 'op-7' }));
      const state = first.events.reduce(userEvolver.evolve, user.given(given).state);
      const earlier = earlierOf('grant', [...given, ...first.events], 'op-7');
      const repeat = decideGrantReward(state, grant(spec('vip', 'basic'), { operation_id: 'op-7', earlier, now: at(2 * DAY) }));
      expect(repeat.events.filter((candidate) => candidate.type === 'RewardGranted')).to.deep.equal([]);
      expect(repeat.result.created).to.equal(false);
    });
  });
});

describe('maintenance deciders', () => {
  const pooled = rewardGranted({ grant_id: 'g1', reward_key: 'code', kind: 'offer_code' });
  const value = { value: 'OFFER-1', link: 'https://apps.example/redeem?code=OFFER-1', expires_at: iso(30 * DAY) };

  describe('decideAssignRewardValue', () => {
    it('gives a pooled code to an entry without one', () => {
      const { result, state } = user
        .given([registered('ann'), pooled])
        .when((state) => decideAssignRewardValue(state, 'g1', value, at(DAY)))
        .then([event('RewardValueAssigned', { grant_id: 'g1', value, assigned_at: iso(DAY) })]);
      expect(result).to.equal(true);
      expect(state.entries[0]).to.deep.include({ value, updated_at: iso(DAY) });
    });

    it("never replaces an entry's code", () => {
      const { result } = user
        .given([registered('ann'), pooled, event('RewardValueAssigned', { grant_id: 'g1', value, assigned_at: T0.toISOString() })])
        .when((state) => decideAssignRewardValue(state, 'g1', { ...value, value: 'OFFER-2' }, at(DAY)))
        .thenNothing();
      expect(result).to.equal(false);
    });

    it('ignores an unknown grant', () => {
      user
        .given([registered('ann'), pooled])
        .when((state) => decideAssignRewardValue(state, 'g9', value, T0))
        .thenNothing();
    });
  });

  describe('decideAbandonClaim (claim repair)', () => {
    it('keeps the slot when the claim reached the user stream', () => {
      const { result } = user
        .given([registered('ann'), codeClaimed({ claim_id: 'c1' })])
        .when((state) => decideAbandonClaim(state, 'c1', 'REF123'))
        .thenNothing();
      expect(result).to.equal('claimed');
    });

    it('abandons a claim that never reached the user stream', () => {
      const { result, state } = user
        .given([registered('ann'), codeClaimed({ claim_id: 'c0' })])
        .when((state) => decideAbandonClaim(state, 'c1', 'REF123'))
        .then([event('ClaimAbandoned', { claim_id: 'c1', code: 'REF123' })]);
      expect(result).to.equal('abandoned');
      expect(state.abandoned_claims).to.deep.equal(['c1']);
    });

    it('abandons once', () => {
      const { result } = user
        .given([registered('ann'), event('ClaimAbandoned', { claim_id: 'c1', code: 'REF123' })])
        .when((state) => decideAbandonClaim(state, 'c1', 'REF123'))
        .thenNothing();
      expect(result).to.equal('abandoned');
    });

    describe('a slot taken moments ago (mayBeInFlight)', () => {
      it('is left to its request while the user has not claimed: the claim may still be recorded', () => {
        const { result } = user
          .given([registered('ann')])
          .when((state) => decideAbandonClaim(state, 'c1', 'REF123', true))
          .thenNothing();
        expect(result).to.equal('pending');
      });

      it('is abandoned when the user has claimed with another claim: this one can never be recorded', () => {
        const { result } = user
          .given([registered('ann'), codeClaimed({ claim_id: 'c0' })])
          .when((state) => decideAbandonClaim(state, 'c1', 'REF123', true))
          .then([event('ClaimAbandoned', { claim_id: 'c1', code: 'REF123' })]);
        expect(result).to.equal('abandoned');
      });

      it('is released when its claim was abandoned already (the release did not happen)', () => {
        const { result } = user
          .given([registered('ann'), event('ClaimAbandoned', { claim_id: 'c1', code: 'REF123' })])
          .when((state) => decideAbandonClaim(state, 'c1', 'REF123', true))
          .thenNothing();
        expect(result).to.equal('abandoned');
      });

      it('keeps the slot of the recorded claim', () => {
        const { result } = user
          .given([registered('ann'), codeClaimed({ claim_id: 'c1' })])
          .when((state) => decideAbandonClaim(state, 'c1', 'REF123', true))
          .thenNothing();
        expect(result).to.equal('claimed');
      });
    });
  });
});

describe('decideGrantReward — any non-credit reward already active is not granted again by hand', () => {
  it('skips an active offer_code reward (200), but stacks credits', () => {
    const active = rewardGranted({ grant_id: 'g-offer', reward_key: 'offer', kind: 'offer_code', credits: null });
    const skipped = user
      .given([registered('ann'), active])
      .when((state) =>
        decideGrantReward(
          state,
          grant(spec('offer', 'offer_code'), { operation_id: 'op-9', earlier: earlierOf('grant', [registered('ann'), active], 'op-9') }),
        ),
      )
      .decision();
    expect(skipped.result).to.deep.equal({ created: false, granted: [] });
    expect(skipped.events.map((event) => event.type)).to.deep.equal(['RewardGrantSkipped']);
  });
});
