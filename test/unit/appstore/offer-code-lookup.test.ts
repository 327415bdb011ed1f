import 'reflect-metadata';
import { expect } from 'chai';
import { pino } from 'pino';
import { OfferCodeLookup } from '../../../src/application/offer-codes/offer-code-lookup.js';
import { StoreOfferCodeCatalog } from '../../../src/application/offer-codes/store-offer-code-catalog.js';
import { loadConfig } from '../../../src/config.js';
import type { StoreOfferCodeEntry } from '../../../src/domain/events/store-events.js';
import { type AppStoreConnect, AppStoreConnectError, appStoreNotConfigured } from '../../../src/ports/app-store.js';
import type { Clock } from '../../../src/ports/clock.js';
import type { FindQuery, ReadStore } from '../../../src/ports/read-store.js';

const TTL_S = 60;

function entry(id: string, name = `Offer ${id}`): StoreOfferCodeEntry {
  return {
    offer_code: {
      id,
      name,
      customer_eligibilities: ['NEW'],
      offer_eligibility: 'REPLACE_INTRO_OFFERS',
      duration: 'ONE_MONTH',
      offer_mode: 'FREE_TRIAL',
      number_of_periods: 1,
      prices: [],
    },
    subscription: { id: 'sub', product_id: 'com.example.monthly', name: 'Monthly', subscription_period: 'ONE_MONTH', prices: [] },
  };
}

class ManualClock implements Clock {
  private ms = Date.parse('2026-03-10T12:00:00.000Z');
  now(): Date {
    return new Date(this.ms);
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

/** The catalog read model, in memory: only what StoreOfferCodeCatalog reads. */
function catalogOf(entries: StoreOfferCodeEntry[]): StoreOfferCodeCatalog {
  const docs = new Map(entries.map((value) => [value.offer_code.id, value as StoreOfferCodeEntry & Record<string, unknown>]));
  const readStore = {
    get: async (_collection: string, id: string) => docs.get(id) ?? null,
    find: async (_collection: string, query: FindQuery = {}) => [...docs.values()].slice(0, query.limit ?? Infinity),
  };
  return new StoreOfferCodeCatalog(readStore as unknown as ReadStore);
}

/** An upstream that counts its calls and answers from `known`, or as `answer` says. */
class CountingAppStore implements AppStoreConnect {
  readonly configured = true;
  calls = 0;
  answer: ((id: string) => Promise<StoreOfferCodeEntry | null>) | null = null;

  constructor(readonly known = new Map<string, StoreOfferCodeEntry>()) {}

  async fetchOfferCode(id: string): Promise<StoreOfferCodeEntry | null> {
    this.calls += 1;
    return this.answer ? this.answer(id) : (this.known.get(id) ?? null);
  }
}

function lookupWith(catalog: StoreOfferCodeCatalog, appStore: AppStoreConnect, clock: Clock = new ManualClock()): OfferCodeLookup {
  const config = loadConfig({ NODE_ENV: 'test', ASC_CACHE_TTL_S: String(TTL_S) });
  return new OfferCodeLookup(catalog, appStore, clock, config, pino({ level: 'silent' }));
}

describe('OfferCodeLookup', () => {
  describe('find', () => {
    it('serves the catalog first, without asking App Store Connect', async () => {
      const appStore = new CountingAppStore(new Map([['a', entry('a', 'from the store')]]));
      const lookup = lookupWith(catalogOf([entry('a', 'from the catalog')]), appStore);
      expect((await lookup.find('a'))?.offer_code.name).to.equal('from the catalog');
      expect(appStore.calls).to.equal(0);
    });

    it('answers null without App Store Connect when the catalog lacks the id', async () => {
      expect(await lookupWith(catalogOf([entry('a')]), appStoreNotConfigured).find('b')).to.equal(null);
    });

    it('fetches from App Store Connect when the catalog lacks the id, and caches the answer for the TTL', async () => {
      const clock = new ManualClock();
      const appStore = new CountingAppStore(new Map([['b', entry('b')]]));
      const lookup = lookupWith(catalogOf([]), appStore, clock);
      expect((await lookup.find('b'))?.offer_code.id).to.equal('b');
      expect(appStore.calls).to.equal(1);
      clock.advance(TTL_S * 1000 - 1);
      expect((await lookup.find('b'))?.offer_code.id).to.equal('b');
      expect(appStore.calls, 'cached within the TTL').to.equal(1);
      clock.advance(1);
      await lookup.find('b');
      expect(appStore.calls, 'fetched again once the TTL has passed').to.equal(2);
    });

    it('does not cache "not found": an offer code created in the store shows up on the next look-up', async () => {
      const appStore = new CountingAppStore();
      const lookup = lookupWith(catalogOf([]), appStore);
      expect(await lookup.find('c')).to.equal(null);
      appStore.known.set('c', entry('c'));
      expect((await lookup.find('c'))?.offer_code.id).to.equal('c');
      expect(appStore.calls).to.equal(2);
    });

    it('does not cache failures', async () => {
      const appStore = new CountingAppStore(new Map([['d', entry('d')]]));
      appStore.answer = async () => {
        throw new AppStoreConnectError('request_failed', 'down');
      };
      const lookup = lookupWith(catalogOf([]), appStore);
      try {
        await lookup.find('d');
        expect.fail('expected the failure to propagate');
      } catch (error) {
        expect(error).to.be.instanceOf(AppStoreConnectError);
      }
      appStore.answer = null;
      expect((await lookup.find('d'))?.offer_code.id).to.equal('d');
    });

    it('shares one upstream fetch between concurrent look-ups of one id', async () => {
      const appStore = new CountingAppStore();
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      appStore.answer = async (id) => {
        await released;
        return entry(id);
      };
      const lookup = lookupWith(catalogOf([]), appStore);
      const pending = Promise.all([lookup.find('e'), lookup.find('e'), lookup.find('e')]);
      // Let the three look-ups pass the catalog read and reach the upstream.
      await new Promise((resolve) => setImmediate(resolve));
      release();
      const answers = await pending;
      expect(answers.map((answer) => answer?.offer_code.id)).to.deep.equal(['e', 'e', 'e']);
      expect(appStore.calls).to.equal(1);
    });

    it('lets a catalog entry win over a cached App Store Connect answer', async () => {
      const entries: StoreOfferCodeEntry[] = [];
      const appStore = new CountingAppStore(new Map([['f', entry('f', 'store')]]));
      const docs = new Map<string, StoreOfferCodeEntry>();
      const readStore = { get: async (_c: string, id: string) => docs.get(id) ?? null, find: async () => entries };
      const lookup = lookupWith(new StoreOfferCodeCatalog(readStore as unknown as ReadStore), appStore);
      expect((await lookup.find('f'))?.offer_code.name).to.equal('store');
      docs.set('f', entry('f', 'catalog'));
      expect((await lookup.find('f'))?.offer_code.name).to.equal('catalog');
    });
  });

  describe('isConfigured', () => {
    it('is false with an empty catalog and no App Store Connect', async () => {
      expect(await lookupWith(catalogOf([]), appStoreNotConfigured).isConfigured()).to.equal(false);
    });

    it('is true once the catalog has an entry', async () => {
      expect(await lookupWith(catalogOf([entry('a')]), appStoreNotConfigured).isConfigured()).to.equal(true);
    });

    it('is true when App Store Connect is configured', async () => {
      expect(await lookupWith(catalogOf([]), new CountingAppStore()).isConfigured()).to.equal(true);
    });
  });

  describe('isKnown / knowledgeOf', () => {
    it('knows catalog ids and App Store Connect ids; not ids unknown to both', async () => {
      const lookup = lookupWith(catalogOf([entry('cat')]), new CountingAppStore(new Map([['asc', entry('asc')]])));
      expect(await lookup.isKnown('cat')).to.equal(true);
      expect(await lookup.isKnown('asc')).to.equal(true);
      expect(await lookup.isKnown('neither')).to.equal(false);
      expect(await lookup.knowledgeOf('neither')).to.equal('unknown');
    });

    it('without App Store Connect, knows only catalog ids', async () => {
      const lookup = lookupWith(catalogOf([entry('cat')]), appStoreNotConfigured);
      expect(await lookup.isKnown('cat')).to.equal(true);
      expect(await lookup.isKnown('other')).to.equal(false);
    });

    it('gives the benefit of the doubt when App Store Connect cannot answer', async () => {
      for (const failure of ['unauthorized', 'request_failed'] as const) {
        const appStore = new CountingAppStore();
        appStore.answer = async () => {
          throw new AppStoreConnectError(failure, failure);
        };
        const lookup = lookupWith(catalogOf([]), appStore);
        expect(await lookup.knowledgeOf('x')).to.equal('unverifiable');
        expect(await lookup.isKnown('x')).to.equal(true);
      }
    });
  });
});
