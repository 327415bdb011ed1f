import { expect } from 'chai';
import { describe, it } from 'mocha';
import { REWARD_EXPIRIES, rewardExpiriesProjection } from '../../../projections/reward-expiries.js';
import { DAY, event, iso, projected, rewardGranted, TestLog } from '../../support/events.js';

describe('reward_expiries projection (what the expiry sweep looks at)', () => {
  it('lists every granted entry that will expire, per user and grant', () => {
    const log = new TestLog();
    log.append(
      'user-ann',
      rewardGranted({ grant_id: 'g1', expires_at: iso(DAY) }),
      rewardGranted({ grant_id: 'g2', reward_key: 'vip', kind: 'basic', expires_at: iso(2 * DAY) }),
    );
    log.append('user-bob', rewardGranted({ grant_id: 'g1', expires_at: iso(3 * DAY) }));
    expect(projected(rewardExpiriesProjection, log.events)).to.deep.equal({
      [`${REWARD_EXPIRIES}/user-ann/g1`]: { app_user_id: 'ann', grant_id: 'g1', expires_at: iso(DAY) },
      [`${REWARD_EXPIRIES}/user-ann/g2`]: { app_user_id: 'ann', grant_id: 'g2', expires_at: iso(2 * DAY) },
      [`${REWARD_EXPIRIES}/user-bob/g1`]: { app_user_id: 'bob', grant_id: 'g1', expires_at: iso(3 * DAY) },
    });
  });

  it('leaves out entries that never expire', () => {
    const log = new TestLog();
    log.append('user-ann', rewardGranted({ grant_id: 'g1', expires_at: null }));
    expect(projected(rewardExpiriesProjection, log.events)).to.deep.equal({});
  });

  it('drops an entry once its expiry is recorded', () => {
    const log = new TestLog();
    log.append(
      'user-ann',
      rewardGranted({ grant_id: 'g1', credits: 5, balance_after: 5, expires_at: iso(DAY) }),
      rewardGranted({ grant_id: 'g2', credits: 5, balance_after: 10, expires_at: iso(2 * DAY) }),
      event('RewardExpired', { grant_id: 'g1', reward_key: 'coins', kind: 'credit', expired_at: iso(DAY), credits_forfeited: 5, balance_after: 5 }),
    );
    expect(Object.keys(projected(rewardExpiriesProjection, log.events))).to.deep.equal([`${REWARD_EXPIRIES}/user-ann/g2`]);
  });

  it('drops a non-credit entry revoked by a clawback; a credit entry keeps its expiry', () => {
    const log = new TestLog();
    const refund = { provider: 'stripe' as const, notification_id: 'evt_r', transaction_id: 'in_1', original_transaction_id: null };
    const revoked = { revoked_at: iso(0), claimer: 'ann', refund, shortfall: null, balance_after: null, credits_granted: null, debits: [] };
    log.append(
      'user-ann',
      rewardGranted({ grant_id: 'g1', credits: 5, balance_after: 5, expires_at: iso(DAY) }),
      rewardGranted({ grant_id: 'g2', reward_key: 'vip', kind: 'basic', credits: null, balance_after: null, expires_at: iso(DAY) }),
      event('RewardRevoked', {
        ...revoked,
        grant_id: 'g1',
        entry_id: 'g1',
        reward_key: 'coins',
        kind: 'credit',
        credits_granted: 5,
        debits: [{ grant_id: 'g1', credits: 5 }],
        shortfall: 0,
        balance_after: 0,
      }),
      event('RewardRevoked', { ...revoked, grant_id: 'g2', entry_id: 'g2', reward_key: 'vip', kind: 'basic' }),
    );
    expect(Object.keys(projected(rewardExpiriesProjection, log.events))).to.deep.equal([`${REWARD_EXPIRIES}/user-ann/g1`]);
  });

  it('keeps one document per entry: a grant added to an entry shares its expiry', () => {
    const log = new TestLog();
    log.append(
      'user-ann',
      rewardGranted({ grant_id: 'g1', credits: 5, balance_after: 5, expires_at: iso(DAY) }),
      rewardGranted({ grant_id: 'g2', entry_id: 'g1', credits: 5, balance_after: 10, expires_at: iso(DAY) }),
    );
    expect(projected(rewardExpiriesProjection, log.events)).to.deep.equal({
      [`${REWARD_EXPIRIES}/user-ann/g1`]: { app_user_id: 'ann', grant_id: 'g1', expires_at: iso(DAY) },
    });
    log.append(
      'user-ann',
      event('RewardExpired', { grant_id: 'g1', reward_key: 'coins', kind: 'credit', expired_at: iso(DAY), credits_forfeited: 10, balance_after: 0 }),
    );
    expect(projected(rewardExpiriesProjection, log.events)).to.deep.equal({});
  });
});
