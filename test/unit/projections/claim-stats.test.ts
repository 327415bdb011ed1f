import { expect } from 'chai';
import { describe, it } from 'mocha';
import { CLAIM_STATS, claimStatsId, claimStatsProjection } from '../../../projections/claim-stats.js';
import type { ReferredByFact } from '../../../src/domain/events/user-events.js';
import { codeClaimed, event, projected, T0, TestLog } from '../../support/events.js';

function claimedBy(claimId: string, type: 'referral' | 'promo' | 'affiliate', code: string, owner: string) {
  return codeClaimed({ claim_id: claimId, type, code, owner_id: owner, program_id: type === 'referral' ? 'prog' : null });
}

function converted(referredBy: ReferredByFact) {
  return event('UserConverted', { converted_at: T0.toISOString(), referred_by: referredBy, source: 'client', purchase: null, program_id: null });
}

describe('claim_stats projection (promo code and affiliate stats)', () => {
  it('ids are type:owner', () => {
    expect(claimStatsId('promo', 'SPRING')).to.equal('promo:SPRING');
    expect(claimStatsId('affiliate', 'aff-1')).to.equal('affiliate:aff-1');
  });

  it('counts claims and conversions per promo code and per affiliate', () => {
    const log = new TestLog();
    log.append('user-ann', claimedBy('c1', 'promo', 'SPRING', 'SPRING'), converted({ claim_id: 'c1', code: 'SPRING', type: 'promo', owner_id: 'SPRING' }));
    log.append('user-bob', claimedBy('c2', 'promo', 'SPRING', 'SPRING'));
    log.append('user-cid', claimedBy('c3', 'affiliate', 'STREAM', 'aff-1'));
    // A second code of the same affiliate counts for the affiliate.
    log.append(
      'user-dan',
      claimedBy('c4', 'affiliate', 'STREAM2', 'aff-1'),
      converted({ claim_id: 'c4', code: 'STREAM2', type: 'affiliate', owner_id: 'aff-1' }),
    );
    expect(projected(claimStatsProjection, log.events)).to.deep.equal({
      [`${CLAIM_STATS}/promo:SPRING`]: { claims: 2, conversions: 1 },
      [`${CLAIM_STATS}/affiliate:aff-1`]: { claims: 2, conversions: 1 },
    });
  });

  it('leaves referral codes out (referrers keep their stats in their own stream)', () => {
    const log = new TestLog();
    log.append('user-ann', claimedBy('c1', 'referral', 'BOB234', 'bob'), converted({ claim_id: 'c1', code: 'BOB234', type: 'referral', owner_id: 'bob' }));
    expect(projected(claimStatsProjection, log.events)).to.deep.equal({});
  });

  it('a conversion before any counted claim still yields a complete document', () => {
    const log = new TestLog();
    log.append('user-ann', converted({ claim_id: 'c1', code: 'SPRING', type: 'promo', owner_id: 'SPRING' }));
    expect(projected(claimStatsProjection, log.events)).to.deep.equal({ [`${CLAIM_STATS}/promo:SPRING`]: { claims: 0, conversions: 1 } });
  });

  it('does not count churns as anything', () => {
    const log = new TestLog();
    const fact: ReferredByFact = { claim_id: 'c1', code: 'SPRING', type: 'promo', owner_id: 'SPRING' };
    log.append(
      'user-ann',
      claimedBy('c1', 'promo', 'SPRING', 'SPRING'),
      converted(fact),
      event('UserChurned', { churned_at: T0.toISOString(), referred_by: fact, program_id: null }),
    );
    expect(projected(claimStatsProjection, log.events)).to.deep.equal({ [`${CLAIM_STATS}/promo:SPRING`]: { claims: 1, conversions: 1 } });
  });
});
