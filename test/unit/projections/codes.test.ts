import { expect } from 'chai';
import { describe, it } from 'mocha';
import { CODES, codesProjection } from '../../../projections/codes.js';
import { codeClaimed, event, logged, projected, registered, TestLog } from '../../support/events.js';

const reserved = (code: string, type: 'referral' | 'promo' | 'affiliate', owner: string) => event('CodeReserved', { code, type, owner_id: owner });
const taken = (claimId: string, claimer: string, count: number) => event('ClaimSlotTaken', { claim_id: claimId, claimer, taken: count });
const released = (claimId: string, claimer: string, count: number) => event('ClaimSlotReleased', { claim_id: claimId, claimer, taken: count });

describe('codes projection (the shared code namespace)', () => {
  it('creates one document per reserved code with 0 claims', () => {
    const log = new TestLog();
    log.append('code-BOB234', reserved('BOB234', 'referral', 'bob'));
    log.append('code-SPRING', reserved('SPRING', 'promo', 'SPRING'));
    log.append('code-STREAM', reserved('STREAM', 'affiliate', 'aff-1'));
    expect(projected(codesProjection, log.events)).to.deep.equal({
      [`${CODES}/BOB234`]: { code: 'BOB234', type: 'referral', owner_id: 'bob', taken: 0 },
      [`${CODES}/SPRING`]: { code: 'SPRING', type: 'promo', owner_id: 'SPRING', taken: 0 },
      [`${CODES}/STREAM`]: { code: 'STREAM', type: 'affiliate', owner_id: 'aff-1', taken: 0 },
    });
  });

  it('tracks the slots held from the latest slot event', () => {
    const log = new TestLog();
    log.append(
      'code-BOB234',
      reserved('BOB234', 'referral', 'bob'),
      taken('c1', 'ann', 1),
      taken('c2', 'cid', 2),
      released('c2', 'cid', 1),
      taken('c3', 'dan', 2),
    );
    expect(projected(codesProjection, log.events)).to.deep.equal({ [`${CODES}/BOB234`]: { code: 'BOB234', type: 'referral', owner_id: 'bob', taken: 2 } });
  });

  it('a release ends the slots count lower (a refused claim gives its slot back: is_active turns true again)', () => {
    const log = new TestLog();
    log.append('code-BOB234', reserved('BOB234', 'referral', 'bob'), taken('c1', 'ann', 1), released('c1', 'ann', 0));
    expect(projected(codesProjection, log.events)).to.deep.equal({ [`${CODES}/BOB234`]: { code: 'BOB234', type: 'referral', owner_id: 'bob', taken: 0 } });
  });

  it('ignores events of other streams', () => {
    expect(codesProjection.targets(logged('user-ann', registered('ann')))).to.deep.equal([]);
    const log = new TestLog();
    log.append('user-ann', registered('ann'), codeClaimed());
    expect(projected(codesProjection, log.events)).to.deep.equal({});
  });

  it('creates no document from slot events without a reservation', () => {
    const log = new TestLog();
    log.append('code-GHOST', taken('c1', 'ann', 1));
    expect(projected(codesProjection, log.events)).to.deep.equal({});
  });
});
