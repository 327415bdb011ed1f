import { expect } from 'chai';
import { describe, it } from 'mocha';
import { rewardEntryId, USER_REWARDS, USERS, usersProjection } from '../../../projections/users.js';
import {
  codeClaimed,
  DAY,
  event,
  iso,
  logged,
  programAssigned,
  projected,
  registered,
  rewardGranted,
  T0,
  TestLog,
  creditsWithdrawn,
} from '../../support/events.js';

const entryKey = (appUserId: string, entryId: string) => `${USER_REWARDS}/${rewardEntryId(appUserId, entryId)}`;

describe('users projection', () => {
  it('keeps a small user document and one row per reward entry', () => {
    expect(usersProjection.collections.map((collection) => collection.name)).to.deep.equal([USERS, USER_REWARDS]);
    // A claim abandoned after a crash and a skipped manual grant change nothing a user shows.
    expect(usersProjection.eventTypes).to.not.include('ClaimAbandoned');
    expect(usersProjection.eventTypes).to.not.include('RewardGrantSkipped');
  });

  it('targets only what an event changes: the user document, or the entries it names', () => {
    expect(usersProjection.targets(logged('user-ann', registered('ann')))).to.deep.equal([{ collection: USERS, id: 'ann' }]);
    expect(usersProjection.targets(logged('user-a-b:c', registered('a-b:c')))).to.deep.equal([{ collection: USERS, id: 'a-b:c' }]);
    expect(
      usersProjection.targets(logged('user-bob', event('ReferralClaimCounted', { claimer: 'ann', code: 'BOB234', claims: 100_000, cause_position: '9' }))),
    ).to.deep.equal([{ collection: USERS, id: 'bob' }]);
    // A grant added to an existing entry targets that entry, not a new one.
    expect(usersProjection.targets(logged('user-bob', rewardGranted({ grant_id: 'g9', entry_id: 'g1' })))).to.deep.equal([
      { collection: USER_REWARDS, id: rewardEntryId('bob', 'g1') },
    ]);
    expect(
      usersProjection.targets(
        logged(
          'user-bob',
          creditsWithdrawn(
            [
              { grant_id: 'g1', credits: 2 },
              { grant_id: 'g2', credits: 1 },
            ],
            iso(DAY),
          ),
        ),
      ),
    ).to.deep.equal([
      { collection: USER_REWARDS, id: rewardEntryId('bob', 'g1') },
      { collection: USER_REWARDS, id: rewardEntryId('bob', 'g2') },
    ]);
    expect(usersProjection.targets(logged('user-bob', creditsWithdrawn([], iso(DAY))))).to.deep.equal([]);
    expect(usersProjection.targets(logged('code-ANN234', event('CodeReserved', { code: 'ANN234', type: 'referral', owner_id: 'ann' })))).to.deep.equal([]);
  });

  it('entry row ids cannot collide across users, whatever characters ids hold', () => {
    expect(rewardEntryId('a', 'b/c/0')).to.not.equal(rewardEntryId('a/b', 'c/0'));
  });

  it('folds a user stream into the user document and its entry rows', () => {
    const log = new TestLog();
    log.append('user-ann', registered('ann', { is_premium: false, metadata: { a: 1 }, first_seen_at: iso(-DAY) }), programAssigned('prog', 'ANN234'));
    log.append('user-bob', registered('bob'));
    const [, , , grant] = log.append(
      'user-ann',
      event('UserProfileUpdated', { changes: { is_premium: true, payment_customer_id: 'cus_1' } }),
      codeClaimed({ claim_id: 'c1', code: 'BOB234', owner_id: 'bob', claimed_at: iso(DAY) }),
      event('UserConverted', {
        converted_at: iso(DAY),
        referred_by: { claim_id: 'c1', code: 'BOB234', type: 'referral', owner_id: 'bob' },
        source: 'client',
        purchase: null,
        program_id: null,
      }),
      rewardGranted({
        grant_id: 'c1/0',
        reward_key: 'coins',
        credits: 10,
        balance_after: 10,
        expires_at: iso(30 * DAY),
        cause: { type: 'claim', code: 'BOB234', claim_id: 'c1' },
      }),
      creditsWithdrawn([{ grant_id: 'c1/0', credits: 4 }], iso(2 * DAY)),
    );
    log.append('user-bob', event('ReferralClaimCounted', { claimer: 'ann', code: 'BOB234', claims: 1, cause_position: '5' }));

    const docs = projected(usersProjection, log.events);
    expect(Object.keys(docs).sort()).to.deep.equal([entryKey('ann', 'c1/0'), 'users/ann', 'users/bob']);
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
      expired_kinds: [],
    });
    expect(docs[entryKey('ann', 'c1/0')]).to.deep.equal({
      app_user_id: 'ann',
      entry_id: 'c1/0',
      reward_key: 'coins',
      kind: 'credit',
      credits: 6,
      value: null,
      expires_at: iso(30 * DAY),
      created_at: T0.toISOString(),
      updated_at: iso(2 * DAY),
      expired: false,
      seq: grant!.position.toString().padStart(20, '0'),
    });
    expect(docs['users/bob']).to.deep.include({ app_user_id: 'bob', stats: { claims: 1, conversions: 0, churns: 0 } });
  });

  it('adds a grant to the entry it names (SPEC §5.3): credits accumulate, created_at stays the first grant', () => {
    const log = new TestLog();
    log.append(
      'user-ann',
      registered('ann'),
      rewardGranted({ grant_id: 'g1', credits: 5, granted_at: iso(0) }),
      rewardGranted({ grant_id: 'g2', entry_id: 'g1', credits: 7, granted_at: iso(DAY) }),
      creditsWithdrawn([{ grant_id: 'g1', credits: 3 }], iso(2 * DAY)),
      rewardGranted({ grant_id: 'g3', entry_id: 'g1', credits: 5, granted_at: iso(3 * DAY) }),
      rewardGranted({ grant_id: 'g4', credits: 1, expires_at: iso(9 * DAY), granted_at: iso(3 * DAY) }),
    );
    const docs = projected(usersProjection, log.events);
    expect(Object.keys(docs).sort()).to.deep.equal([entryKey('ann', 'g1'), entryKey('ann', 'g4'), 'users/ann']);
    expect(docs[entryKey('ann', 'g1')]).to.deep.include({ entry_id: 'g1', credits: 14, created_at: iso(0), updated_at: iso(3 * DAY), expires_at: null });
    expect(docs[entryKey('ann', 'g4')]).to.deep.include({ entry_id: 'g4', credits: 1, created_at: iso(3 * DAY), updated_at: null });
  });

  it('records pooled values and expiries on the entry, and which kinds have expired entries on the user', () => {
    const log = new TestLog();
    const value = { value: 'OFFER-1', link: null, expires_at: iso(90 * DAY) };
    log.append(
      'user-ann',
      registered('ann'),
      rewardGranted({ grant_id: 'g1', reward_key: 'offer', kind: 'offer_code', expires_at: iso(DAY) }),
      event('RewardValueAssigned', { grant_id: 'g1', value, assigned_at: iso(1000) }),
      event('RewardExpired', { grant_id: 'g1', reward_key: 'offer', kind: 'offer_code', expired_at: iso(DAY), credits_forfeited: null, balance_after: null }),
    );
    const docs = projected(usersProjection, log.events);
    expect(docs[entryKey('ann', 'g1')]).to.deep.include({
      kind: 'offer_code',
      credits: null,
      value,
      expires_at: iso(DAY),
      updated_at: iso(1000),
      expired: true,
    });
    expect(docs['users/ann']).to.deep.include({ expired_kinds: ['offer_code'] });
  });

  it('reads v1 grants (upcast with entry_id = grant_id) as one entry each', () => {
    const log = new TestLog();
    log.append('user-ann', registered('ann'), rewardGranted({ grant_id: 'g1', credits: 5 }), rewardGranted({ grant_id: 'g2', credits: 5 }));
    const docs = projected(usersProjection, log.events);
    expect(docs[entryKey('ann', 'g1')]).to.deep.include({ credits: 5 });
    expect(docs[entryKey('ann', 'g2')]).to.deep.include({ credits: 5 });
  });
});
