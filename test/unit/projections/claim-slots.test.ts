import { expect } from 'chai';
import { describe, it } from 'mocha';
import { CLAIM_SLOTS, claimSlotsProjection } from '../../../projections/claim-slots.js';
import { at, codeClaimed, event, projected, SECOND, TestLog } from '../../support/events.js';

const reserved = (code: string, type: 'referral' | 'promo' | 'affiliate', owner: string) => event('CodeReserved', { code, type, owner_id: owner });
const taken = (claimId: string, claimer: string, count: number) => event('ClaimSlotTaken', { claim_id: claimId, claimer, taken: count });
const released = (claimId: string, claimer: string, count: number) => event('ClaimSlotReleased', { claim_id: claimId, claimer, taken: count });

describe('claim_slots projection (slots whose claim has not reached the claimer)', () => {
  it('lists a taken slot with its code, claimer and time', () => {
    const log = new TestLog();
    log.append('code-BOB234', reserved('BOB234', 'referral', 'bob'), taken('c1', 'ann', 1));
    expect(projected(claimSlotsProjection, log.events)).to.deep.equal({
      [`${CLAIM_SLOTS}/c1`]: { claim_id: 'c1', code: 'BOB234', claimer: 'ann', taken_at: at(SECOND).toISOString() },
    });
  });

  it('drops the slot once the claim is recorded on the claimer', () => {
    const log = new TestLog();
    log.append('code-BOB234', taken('c1', 'ann', 1), taken('c2', 'cid', 2));
    log.append('user-ann', codeClaimed({ claim_id: 'c1', code: 'BOB234' }));
    expect(Object.keys(projected(claimSlotsProjection, log.events))).to.deep.equal([`${CLAIM_SLOTS}/c2`]);
  });

  it('drops the slot when it is released', () => {
    const log = new TestLog();
    log.append('code-BOB234', taken('c1', 'ann', 1), released('c1', 'ann', 0));
    expect(projected(claimSlotsProjection, log.events)).to.deep.equal({});
  });

  it('a claim without a tracked slot leaves nothing behind', () => {
    const log = new TestLog();
    log.append('user-ann', codeClaimed({ claim_id: 'c9' }));
    expect(projected(claimSlotsProjection, log.events)).to.deep.equal({});
  });
});
