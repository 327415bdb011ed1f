import { expect } from 'chai';
import { describe, it } from 'mocha';
import { decideReleaseSlot, decideTakeSlot, slotsTaken } from '../../../src/domain/codes/claim-slots.js';
import { event } from '../../support/events.js';

describe('claim slots of a code stream (SPEC §5.1 step 8)', () => {
  describe('slotsTaken', () => {
    it('is 0 for a new code (no events, or only the reservation)', () => {
      expect(slotsTaken(undefined)).to.equal(0);
      expect(slotsTaken(event('CodeReserved', { code: 'BOB234', type: 'referral', owner_id: 'bob' }))).to.equal(0);
    });

    it('is the count the latest slot event recorded', () => {
      expect(slotsTaken(event('ClaimSlotTaken', { claim_id: 'c3', claimer: 'ann', taken: 3 }))).to.equal(3);
      expect(slotsTaken(event('ClaimSlotReleased', { claim_id: 'c3', claimer: 'ann', taken: 2 }))).to.equal(2);
    });
  });

  describe('decideTakeSlot', () => {
    it('takes a slot below the limit', () => {
      expect(decideTakeSlot(2, 3, 'c3', 'ann')).to.deep.equal({
        events: [event('ClaimSlotTaken', { claim_id: 'c3', claimer: 'ann', taken: 3 })],
        result: 3,
      });
    });

    it('CLAIM.LIMIT_REACHED at the limit', () => {
      expect(() => decideTakeSlot(3, 3, 'c4', 'ann'))
        .to.throw()
        .that.deep.include({ code: 'CLAIM.LIMIT_REACHED', source: '/code' });
    });

    it('CLAIM.LIMIT_REACHED above the limit (limit lowered after claims)', () => {
      expect(() => decideTakeSlot(5, 2, 'c6', 'ann'))
        .to.throw()
        .with.property('code', 'CLAIM.LIMIT_REACHED');
    });

    it('a limit of 1 admits exactly one claimer', () => {
      expect(decideTakeSlot(0, 1, 'c1', 'ann').result).to.equal(1);
      expect(() => decideTakeSlot(1, 1, 'c2', 'bob'))
        .to.throw()
        .with.property('code', 'CLAIM.LIMIT_REACHED');
    });

    it('limit 0 is unlimited', () => {
      expect(decideTakeSlot(0, 0, 'c1', 'ann').result).to.equal(1);
      expect(decideTakeSlot(1_000_000, 0, 'c2', 'ann').events).to.deep.equal([event('ClaimSlotTaken', { claim_id: 'c2', claimer: 'ann', taken: 1_000_001 })]);
    });
  });

  describe('decideReleaseSlot', () => {
    it('gives one slot back', () => {
      expect(decideReleaseSlot({ taken: 3, window: undefined }, 'c3', 'ann').events).to.deep.equal([
        event('ClaimSlotReleased', { claim_id: 'c3', claimer: 'ann', taken: 2 }),
      ]);
    });

    it('never records a negative count', () => {
      expect(decideReleaseSlot({ taken: 0, window: undefined }, 'c1', 'ann').events).to.deep.equal([
        event('ClaimSlotReleased', { claim_id: 'c1', claimer: 'ann', taken: 0 }),
      ]);
    });

    it('a released slot can be taken again at the limit', () => {
      const released = decideReleaseSlot({ taken: 2, window: undefined }, 'c2', 'ann').events[0]!;
      expect(decideTakeSlot(slotsTaken(released), 2, 'c3', 'bob').result).to.equal(2);
    });

    const window = { hour: '2026-06-01T10', hour_claims: 3, day: '2026-06-01', day_claims: 7 };
    it('a claim that did not complete still counts in its hour and day (the safe side)', () => {
      expect(decideReleaseSlot({ taken: 3, window }, 'c3', 'ann').events[0]!.data).to.deep.include({ taken: 2, window });
    });

    it('a claim refused after its slot was taken counts no more in its hour and day, nor in a later window', () => {
      const refused = decideReleaseSlot({ taken: 3, window }, 'c3', 'ann', new Date('2026-06-01T10:59:00.000Z'));
      expect(refused.events[0]!.data).to.deep.include({ taken: 2, window: { ...window, hour_claims: 2, day_claims: 6 } });
      // Refused in the previous hour (a slow claim): only the day still counts it.
      const earlierHour = decideReleaseSlot({ taken: 3, window }, 'c3', 'ann', new Date('2026-06-01T09:59:00.000Z'));
      expect(earlierHour.events[0]!.data).to.deep.include({ window: { ...window, day_claims: 6 } });
    });
  });
});
