import { expect } from 'chai';
import { describe, it } from 'mocha';
import { USERS, usersProjection } from '../../../projections/users.js';
import { userEvents } from '../../../src/domain/events/user-events.js';
import { codeClaimed, event, iso, logged, programAssigned, registered, rewardGranted, T0, TestLog, DAY, projected } from '../../support/events.js';

describe('users projection', () => {
  it('handles every user event type', () => {
    expect([...usersProjection.eventTypes].sort()).to.deep.equal(Object.keys(userEvents).sort());
    expect(usersProjection.collections.map((collection) => collection.name)).to.deep.equal([USERS]);
  });

  it('targets the user document of the stream, and nothing outside user streams', () => {
    expect(usersProjection.targets(logged('user-ann', registered('ann')))).to.deep.equal([{ collection: USERS, id: 'ann' }]);
    expect(usersProjection.targets(logged('user-a-b:c', registered('a-b:c')))).to.deep.equal([{ collection: USERS, id: 'a-b:c' }]);
    expect(usersProjection.targets(logged('code-ANN234', event('CodeReserved', { code: 'ANN234', type: 'referral', owner_id: 'ann' })))).to.deep.equal([]);
  });

  it('folds a user stream into the user document', () => {
    const log = new TestLog();
    log.append('user-ann', registered('ann', { is_premium: false, metadata: { a: 1 }, first_seen_at: iso(-DAY) }), programAssigned('prog', 'ANN234'));
    log.append('user-bob', registered('bob'));
    log.append(
      'user-ann',
      event('UserProfileUpdated', { changes: { is_premium: true, payment_customer_id: 'cus_1' } }),
      codeClaimed({ claim_id: 'c1', code: 'BOB234', owner_id: 'bob', claimed_at: iso(DAY) }),
      event('UserConverted', { converted_at: iso(DAY), referred_by: { claim_id: 'c1', code: 'BOB234', type: 'referral', owner_id: 'bob' }, source: 'client', purchase: null, program_id: null }),
      rewardGranted({ grant_id: 'c1/0', reward_key: 'coins', credits: 10, balance_after: 10, expires_at: iso(30 * DAY), cause: { type: 'claim', code: 'BOB234', claim_id: 'c1' } }),
      event('CreditsWithdrawn', {
        operation_id: 'op-1',
        key: 'coins',
        withdrawn_at: iso(2 * DAY),
        credits_requested_to_withdraw: 4,
        credits_withdrawn: 4,
        credits_available_at_start: 10,
        credits_available_at_end: 6,
        debits: [{ grant_id: 'c1/0', credits: 4 }],
      }),
    );
    log.append('user-bob', event('ReferralClaimCounted', { claimer: 'ann', code: 'BOB234', claims: 1, cause_position: '5' }));

    const docs = projected(usersProjection, log.events);
    expect(Object.keys(docs).sort()).to.deep.equal(['users/ann', 'users/bob']);
    expect(docs['users/ann']).to.deep.equal({
      exists: true,
      app_user_id: 'ann',
      created_at: T0.toISOString(),
      is_trial: null,
      is_premium: true,
      first_seen_at: iso(-DAY),
      metadata: { a: 1 },
      payment_customer_id: 'cus_1',
      program_id: 'prog',
      referral_code: 'ANN234',
      referred_by: { claim_id: 'c1', code: 'BOB234', type: 'referral', owner_id: 'bob', claimed_at: iso(DAY) },
      converted_at: iso(DAY),
      churned_at: null,
      stats: { claims: 0, conversions: 0, churns: 0 },
      last_cause_position: null,
      grants: [
        {
          grant_id: 'c1/0',
          reward_key: 'coins',
          kind: 'credit',
          credits: 6,
          value: null,
          expires_at: iso(30 * DAY),
          created_at: T0.toISOString(),
          updated_at: iso(2 * DAY),
          expired: false,
        },
      ],
      operations: {
        'op-1': {
          kind: 'withdraw',
          key: 'coins',
          amount: 4,
          result: { credits_available_at_start: 10, credits_available_at_end: 6, credits_requested_to_withdraw: 4, credits_withdrawn: 4 },
        },
      },
      abandoned_claims: [],
    });
    expect(docs['users/bob']).to.deep.include({ app_user_id: 'bob', stats: { claims: 1, conversions: 0, churns: 0 }, last_cause_position: '5' });
  });

  it('records pooled values and expiries on the entry', () => {
    const log = new TestLog();
    const value = { value: 'OFFER-1', link: null, expires_at: iso(90 * DAY) };
    log.append(
      'user-ann',
      registered('ann'),
      rewardGranted({ grant_id: 'g1', reward_key: 'offer', kind: 'offer_code', expires_at: iso(DAY) }),
      event('RewardValueAssigned', { grant_id: 'g1', value, assigned_at: iso(1000) }),
      event('RewardExpired', { grant_id: 'g1', reward_key: 'offer', kind: 'offer_code', expired_at: iso(DAY), credits_forfeited: null, balance_after: null }),
    );
    const doc = projected(usersProjection, log.events)['users/ann'] as { grants: unknown[] };
    expect(doc.grants).to.deep.equal([
      {
        grant_id: 'g1',
        reward_key: 'offer',
        kind: 'offer_code',
        credits: null,
        value,
        expires_at: iso(DAY),
        created_at: T0.toISOString(),
        updated_at: iso(1000),
        expired: true,
      },
    ]);
  });
});
