import { expect } from 'chai';
import { storeOfferCodesProjection, STORE_OFFER_CODES } from '../../../projections/store-offer-codes.js';
import type { LoggedEvent } from '../../../src/application/event-log.js';
import { decideUpsertStoreOfferCode, storeOfferCodeEvolver } from '../../../src/domain/catalog/store-offer-code.js';
import { type DomainEvent, parseEvent, streams } from '../../../src/domain/events/index.js';
import {
  CUSTOMER_ELIGIBILITIES,
  OFFER_DURATIONS,
  OFFER_ELIGIBILITIES,
  OFFER_MODES,
  type StoreOfferCodeEntry,
  SUBSCRIPTION_PERIODS,
} from '../../../src/domain/events/store-events.js';

function entry(overrides: Partial<StoreOfferCodeEntry['offer_code']> = {}): StoreOfferCodeEntry {
  return {
    offer_code: {
      id: 'oc-1',
      name: 'Half price',
      customer_eligibilities: ['NEW', 'EXISTING', 'EXPIRED'],
      offer_eligibility: 'STACK_WITH_INTRO_OFFERS',
      duration: 'THREE_MONTHS',
      offer_mode: 'PAY_AS_YOU_GO',
      number_of_periods: 3,
      prices: [{ territory: 'USA', price: '4.99', currency: 'USD' }],
      ...overrides,
    },
    subscription: {
      id: 'sub-1',
      product_id: 'com.example.yearly',
      name: 'Yearly',
      subscription_period: 'ONE_YEAR',
      prices: [{ territory: 'USA', price: '39.99', currency: 'USD' }],
    },
  };
}

function logged(event: ReturnType<typeof parseEvent>, position: bigint): LoggedEvent {
  return {
    ...event,
    id: `e-${position}`,
    stream: streams.offerCode('oc-1'),
    revision: Number(position) - 1,
    position,
    recordedAt: new Date('2026-03-10T12:00:00.000Z'),
    metadata: { correlation_id: 'r', causation_id: 'r', actor: 'secret:x', schema_version: 1 },
  };
}

describe('store offer code catalog (offer-code-{id})', () => {
  const fold = (events: DomainEvent[]) => events.reduce(storeOfferCodeEvolver.evolve, storeOfferCodeEvolver.initialState());

  describe('decideUpsertStoreOfferCode', () => {
    it('creates a new entry', () => {
      const { events, result } = decideUpsertStoreOfferCode(fold([]), entry());
      expect(events).to.deep.equal([{ type: 'StoreOfferCodeCreated', data: entry() }]);
      expect(result.created).to.equal(true);
      expect(fold(events)).to.deep.equal(entry());
    });

    it('updates an entry that changed, with the whole new entry', () => {
      const changed = entry({ name: 'Now a third off', prices: [] });
      const state = fold([{ type: 'StoreOfferCodeCreated', data: entry() }]);
      const { events, result } = decideUpsertStoreOfferCode(state, changed);
      expect(events).to.deep.equal([{ type: 'StoreOfferCodeUpdated', data: changed }]);
      expect(result).to.deep.equal({ created: false, entry: changed });
      expect(events.reduce(storeOfferCodeEvolver.evolve, state)).to.deep.equal(changed);
    });

    it('records nothing when the same entry is put again', () => {
      const { events, result } = decideUpsertStoreOfferCode(fold([{ type: 'StoreOfferCodeCreated', data: entry() }]), entry());
      expect(events).to.deep.equal([]);
      expect(result).to.deep.equal({ created: false, entry: entry() });
    });
  });

  describe('event schemas', () => {
    it('accept every enumeration value of the issue', () => {
      const variants: StoreOfferCodeEntry[] = [
        ...OFFER_ELIGIBILITIES.map((offer_eligibility) => entry({ offer_eligibility })),
        ...OFFER_DURATIONS.map((duration) => entry({ duration })),
        ...OFFER_MODES.map((offer_mode) => entry({ offer_mode })),
        ...CUSTOMER_ELIGIBILITIES.map((eligibility) => entry({ customer_eligibilities: [eligibility] })),
        ...SUBSCRIPTION_PERIODS.map((subscription_period) => ({ ...entry(), subscription: { ...entry().subscription, subscription_period } })),
      ];
      expect(variants).to.have.length(2 + 8 + 3 + 3 + 6);
      for (const variant of variants) expect(() => parseEvent('StoreOfferCodeCreated', variant)).to.not.throw();
    });

    for (const [field, value] of [
      ['customer_eligibilities', ['NEWBIE']],
      ['offer_eligibility', 'SOMETIMES'],
      ['duration', 'ONE_DAY'],
      ['offer_mode', 'GRATIS'],
      ['prices', [{ territory: 'USA', price: '4,99', currency: 'USD' }]],
    ] as const) {
      it(`reject offer_code.${field} = ${JSON.stringify(value)}`, () => {
        expect(() => parseEvent('StoreOfferCodeUpdated', entry({ [field]: value } as Partial<StoreOfferCodeEntry['offer_code']>))).to.throw(
          /does not match its schema/,
        );
      });
    }

    it('reject an unknown subscription period', () => {
      const bad = { ...entry(), subscription: { ...entry().subscription, subscription_period: 'TWO_YEARS' } };
      expect(() => parseEvent('StoreOfferCodeCreated', bad)).to.throw(/does not match its schema/);
    });
  });

  describe('projection store_offer_codes', () => {
    it('keeps the latest entry per offer code id', () => {
      const created = logged(parseEvent('StoreOfferCodeCreated', entry()), 1n);
      const updated = logged(parseEvent('StoreOfferCodeUpdated', entry({ name: 'Renamed' })), 2n);
      expect(storeOfferCodesProjection.targets(created)).to.deep.equal([{ collection: STORE_OFFER_CODES, id: 'oc-1' }]);
      const ref = { collection: STORE_OFFER_CODES, id: 'oc-1' };
      const first = storeOfferCodesProjection.evolve(ref, null, created);
      const second = storeOfferCodesProjection.evolve(ref, first, updated);
      expect(first).to.deep.equal(entry());
      expect(second).to.deep.equal(entry({ name: 'Renamed' }));
    });

    it('ignores other events', () => {
      const other = logged(parseEvent('ClaimAbandoned', { claim_id: 'c', code: 'X' }), 3n);
      expect(storeOfferCodesProjection.targets(other)).to.deep.equal([]);
    });
  });
});
