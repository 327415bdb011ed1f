import { expect } from 'chai';
import type { CryptoKey } from 'jose';
import { AppStoreConnectClient } from '../../../src/adapters/appstore/app-store-connect-client.js';
import { AscTokenSigner } from '../../../src/adapters/appstore/asc-token.js';
import { AppStoreConnectError, type AppStoreFailure } from '../../../src/ports/app-store.js';
import type { Clock } from '../../../src/ports/clock.js';
import { ascKeyPair, FakeAppStoreConnect, ISSUER_ID, KEY_ID, sampleOfferCode } from './fake-app-store-connect.js';

const systemClock: Clock = { now: () => new Date() };
/** "Today" for prices in effect: after the 2020 price change, before the 2999 one. */
const businessClock: Clock = { now: () => new Date('2026-03-10T12:00:00.000Z') };

async function failure(promise: Promise<unknown>): Promise<AppStoreConnectError> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(AppStoreConnectError);
    return error as AppStoreConnectError;
  }
  throw new Error('expected an AppStoreConnectError');
}

async function expectFailure(promise: Promise<unknown>, kind: AppStoreFailure): Promise<AppStoreConnectError> {
  const error = await failure(promise);
  expect(error.failure, error.message).to.equal(kind);
  return error;
}

describe('App Store Connect client', () => {
  let keys: { privateKey: CryptoKey; publicKey: CryptoKey };
  let fake: FakeAppStoreConnect;

  function client(options: { timeoutMs?: number; privateKey?: CryptoKey; keyId?: string; baseUrl?: string } = {}) {
    return new AppStoreConnectClient({
      baseUrl: options.baseUrl ?? fake.url,
      timeoutMs: options.timeoutMs ?? 5_000,
      signer: new AscTokenSigner({ issuerId: ISSUER_ID, keyId: options.keyId ?? KEY_ID, privateKey: options.privateKey ?? keys.privateKey }, systemClock),
      clock: businessClock,
    });
  }

  before(async () => {
    keys = await ascKeyPair();
  });

  beforeEach(async () => {
    fake = new FakeAppStoreConnect(keys.publicKey);
    fake.offerCodes.set('6501234567', sampleOfferCode('6501234567'));
    await fake.start();
  });

  afterEach(() => fake.stop());

  it('maps the offer code, its subscription and the prices in effect to our shape', async () => {
    const entry = await client().fetchOfferCode('6501234567');
    expect(entry).to.deep.equal({
      offer_code: {
        id: '6501234567',
        name: 'Three months at half price',
        customer_eligibilities: ['NEW', 'EXPIRED'],
        offer_eligibility: 'STACK_WITH_INTRO_OFFERS',
        duration: 'THREE_MONTHS',
        offer_mode: 'PAY_AS_YOU_GO',
        number_of_periods: 3,
        prices: [
          { territory: 'DEU', price: '4.99', currency: 'EUR' },
          { territory: 'JPN', price: '800', currency: 'JPY' },
          { territory: 'USA', price: '4.99', currency: 'USD' },
        ],
      },
      subscription: {
        id: '6470878936',
        product_id: 'com.example.premium.yearly',
        name: 'Premium yearly',
        subscription_period: 'ONE_YEAR',
        // USA: the 2020 price replaced the initial one; the 2999 one is not in effect yet.
        prices: [
          { territory: 'DEU', price: '44.99', currency: 'EUR' },
          { territory: 'JPN', price: '6800', currency: 'JPY' },
          { territory: 'USA', price: '49.99', currency: 'USD' },
        ],
      },
    });
  });

  it('asks for the subscription and for prices with their territory and price point, following every page on the configured host', async () => {
    await client().fetchOfferCode('6501234567');
    const [head] = fake.calls(/^\/v1\/subscriptionOfferCodes\/6501234567$/);
    expect(head!.query.get('include')).to.equal('subscription');
    const offerPrices = fake.calls(/^\/v1\/subscriptionOfferCodes\/6501234567\/prices$/);
    const subscriptionPrices = fake.calls(/^\/v1\/subscriptions\/6470878936\/prices$/);
    // 3 offer prices and 5 subscription prices, 2 per page; next links name Apple's host.
    expect(offerPrices).to.have.length(2);
    expect(subscriptionPrices).to.have.length(3);
    for (const call of [...offerPrices, ...subscriptionPrices]) {
      expect(call.query.get('include')).to.equal('territory,subscriptionPricePoint');
      expect(call.query.get('fields[territories]')).to.equal('currency');
      expect(call.query.get('fields[subscriptionPricePoints]')).to.equal('customerPrice');
    }
    expect(subscriptionPrices.map((call) => call.query.get('cursor'))).to.deep.equal([null, '2', '4']);
  });

  it('signs every call with an ES256 token: kid, typ JWT, iss, aud appstoreconnect-v1, exp at most 20 minutes after iat', async () => {
    await client().fetchOfferCode('6501234567');
    expect(fake.tokenProblems).to.deep.equal([]);
    expect(fake.verifiedTokens).to.have.length(fake.requests.length);
    for (const { header, payload } of fake.verifiedTokens) {
      expect(header).to.include({ alg: 'ES256', kid: KEY_ID, typ: 'JWT' });
      expect(payload.iss).to.equal(ISSUER_ID);
      expect(payload.aud).to.equal('appstoreconnect-v1');
      expect(payload.exp! - payload.iat!)
        .to.be.greaterThan(0)
        .and.at.most(20 * 60);
    }
  });

  it('sends a token the store can verify only with the right key (a token signed by another key is rejected)', async () => {
    const stranger = await ascKeyPair();
    await expectFailure(client({ privateKey: stranger.privateKey }).fetchOfferCode('6501234567'), 'unauthorized');
    expect(fake.tokenProblems).to.have.length(1);
  });

  it('answers null for an id the store does not know', async () => {
    expect(await client().fetchOfferCode('999')).to.equal(null);
  });

  it('answers null for the ids "." and "..", without a call: they would name another path of the store', async () => {
    for (const id of ['.', '..']) expect(await client().fetchOfferCode(id), id).to.equal(null);
    expect(fake.calls(/./)).to.deep.equal([]);
  });

  it('works behind a base URL with a path prefix (next-page links are moved onto it)', async () => {
    fake.prefix = '/asc';
    const entry = await client({ baseUrl: `${fake.url}/asc` }).fetchOfferCode('6501234567');
    expect(entry?.subscription.prices).to.have.length(3);
    expect(fake.calls(/^\/v1\/subscriptions\/6470878936\/prices$/)).to.have.length(3);
  });

  describe('failures', () => {
    it('401 from the store → unauthorized', async () => {
      fake.failure = 'unauthorized';
      await expectFailure(client().fetchOfferCode('6501234567'), 'unauthorized');
    });

    it('403 from the store → unauthorized', async () => {
      fake.failure = 'forbidden';
      await expectFailure(client().fetchOfferCode('6501234567'), 'unauthorized');
    });

    it('5xx from the store → request_failed', async () => {
      fake.failure = 'server_error';
      const error = await expectFailure(client().fetchOfferCode('6501234567'), 'request_failed');
      expect(error.message).to.contain('503');
    });

    it('5xx on a price page only → request_failed', async () => {
      fake.failure = 'server_error';
      fake.failOn = /\/prices$/;
      await expectFailure(client().fetchOfferCode('6501234567'), 'request_failed');
    });

    it('no answer within the timeout → request_failed', async () => {
      fake.failure = 'hang';
      const error = await expectFailure(client({ timeoutMs: 50 }).fetchOfferCode('6501234567'), 'request_failed');
      expect(error.message).to.contain('did not answer within 50 ms');
    });

    it('a body that is not JSON → request_failed', async () => {
      fake.failure = 'not_json';
      const error = await expectFailure(client().fetchOfferCode('6501234567'), 'request_failed');
      expect(error.message).to.contain('not JSON');
    });

    it('a document without the expected attributes → request_failed', async () => {
      fake.failure = 'malformed';
      const error = await expectFailure(client().fetchOfferCode('6501234567'), 'request_failed');
      expect(error.message).to.contain('unexpected document');
    });

    it('an enumeration value we do not know → request_failed', async () => {
      const odd = sampleOfferCode('7');
      odd.attributes.duration = 'ONE_DAY';
      fake.offerCodes.set('7', odd);
      const error = await expectFailure(client().fetchOfferCode('7'), 'request_failed');
      expect(error.message).to.contain('duration');
    });

    it('a price whose territory is not included → request_failed', async () => {
      fake.override = {
        on: /\/subscriptionOfferCodes\/6501234567\/prices$/,
        body: {
          data: [
            {
              type: 'subscriptionOfferCodePrices',
              id: 'p1',
              relationships: {
                territory: { data: { type: 'territories', id: 'USA' } },
                subscriptionPricePoint: { data: { type: 'subscriptionPricePoints', id: 'pp1' } },
              },
            },
          ],
          included: [{ type: 'subscriptionPricePoints', id: 'pp1', attributes: { customerPrice: '1.99' } }],
        },
      };
      const error = await expectFailure(client().fetchOfferCode('6501234567'), 'request_failed');
      expect(error.message).to.contain('territories USA');
    });

    it('a price that is not a decimal string → request_failed', async () => {
      const odd = sampleOfferCode('8');
      odd.prices = [{ territory: 'USA', currency: 'USD', customerPrice: 'free' }];
      fake.offerCodes.set('8', odd);
      await expectFailure(client().fetchOfferCode('8'), 'request_failed');
    });

    it('a store that cannot be reached → request_failed', async () => {
      const url = fake.url;
      await fake.stop();
      await expectFailure(client({ baseUrl: url }).fetchOfferCode('6501234567'), 'request_failed');
    });
  });
});
