import 'reflect-metadata';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { expect } from 'chai';
import { EventLog } from '../../src/application/event-log.js';
import { OfferCodeLookup } from '../../src/application/offer-codes/offer-code-lookup.js';
import { CUSTOMER_ELIGIBILITIES, OFFER_DURATIONS, OFFER_ELIGIBILITIES, OFFER_MODES, SUBSCRIPTION_PERIODS } from '../../src/domain/events/store-events.js';
import { storeOfferCodeResponse, storeOfferCodesResponse } from '../../src/http/schemas/store.js';
import { SECRET_KEY, startTestService, type TestService } from '../support/test-service.js';
import { ascKeyPair, FakeAppStoreConnect, ISSUER_ID, KEY_ID, sampleOfferCode } from '../unit/appstore/fake-app-store-connect.js';
import { tempDir } from '../support/temp-dir.js';

type Json = Record<string, any>;

/** A catalog body in the seed's shape (offer_code.id comes from the path). */
function body(overrides: { offer_code?: Json; subscription?: Json } = {}): Json {
  return {
    offer_code: {
      name: 'Three months at half price',
      customer_eligibilities: ['NEW', 'EXPIRED'],
      offer_eligibility: 'STACK_WITH_INTRO_OFFERS',
      duration: 'THREE_MONTHS',
      offer_mode: 'PAY_AS_YOU_GO',
      number_of_periods: 3,
      prices: [
        { territory: 'USA', price: '4.99', currency: 'USD' },
        { territory: 'JPN', price: '800', currency: 'JPY' },
      ],
      ...overrides.offer_code,
    },
    subscription: {
      id: '6470878936',
      product_id: 'com.example.premium.yearly',
      name: 'Premium yearly',
      subscription_period: 'ONE_YEAR',
      prices: [{ territory: 'USA', price: '39.99', currency: 'USD' }],
      ...overrides.subscription,
    },
  };
}

function expectError(response: { status: number; body: any }, status: number, code: string, source?: string | null): void {
  expect(response.status, JSON.stringify(response.body)).to.equal(status);
  expect(response.body.errors).to.have.length(1);
  expect(response.body.errors[0]).to.include({ status, code });
  expect(response.body.errors[0]).to.have.all.keys('code', 'status', 'message', 'source');
  if (source !== undefined) expect(response.body.errors[0].source).to.equal(source);
}

/** A request sent with its path exactly as given (fetch would resolve "." and ".." segments first). */
function rawRequest(svc: TestService, method: string, pathname: string, json?: Json): Promise<{ status: number; body: any }> {
  const payload = json === undefined ? undefined : JSON.stringify(json);
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${svc.url}/`,
      {
        method,
        path: pathname,
        headers: { 'x-api-key': SECRET_KEY, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

describe('API: store offer codes (GET /store/offer-codes/{id}, /admin/store/offer-codes)', () => {
  describe('the admin catalog, without App Store Connect', () => {
    let svc: TestService;

    before(async () => {
      svc = await startTestService();
    });
    after(() => svc.stop());

    it('PUT creates (201), a changed PUT updates (200); GET admin and GET public return the seed shape', async () => {
      const created = await svc.admin('PUT', '/admin/store/offer-codes/oc-basic', body());
      expect(created.status).to.equal(201);
      const expected = { offer_code: { id: 'oc-basic', ...body().offer_code }, subscription: body().subscription };
      expect(storeOfferCodeResponse.parse(created.body).data).to.deep.equal(expected);

      const renamed = body({ offer_code: { name: 'Renamed' } });
      const updated = await svc.admin('PUT', '/admin/store/offer-codes/oc-basic', renamed);
      expect(updated.status).to.equal(200);
      expect(updated.body.data.offer_code.name).to.equal('Renamed');

      const adminGet = await svc.admin('GET', '/admin/store/offer-codes/oc-basic');
      expect(adminGet.status).to.equal(200);
      expect(adminGet.body).to.deep.equal(updated.body);
      const publicGet = await svc.call('GET', '/store/offer-codes/oc-basic');
      expect(publicGet.status).to.equal(200);
      expect(storeOfferCodeResponse.parse(publicGet.body)).to.deep.equal(updated.body);
    });

    it('a repeated identical PUT answers 200 and records no event', async () => {
      await svc.admin('PUT', '/admin/store/offer-codes/oc-repeat', body());
      const before = (await svc.service.container.resolve(EventLog).readStream('offer-code-oc-repeat')).length;
      const again = await svc.admin('PUT', '/admin/store/offer-codes/oc-repeat', body());
      expect(again.status).to.equal(200);
      const after = (await svc.service.container.resolve(EventLog).readStream('offer-code-oc-repeat')).length;
      expect(after).to.equal(before);
    });

    it('accepts offer_code.id when it matches the path', async () => {
      const response = await svc.admin('PUT', '/admin/store/offer-codes/oc-with-id', body({ offer_code: { id: 'oc-with-id' } }));
      expect(response.status).to.equal(201);
    });

    it('lists the catalog by id under offer_codes', async () => {
      await svc.admin('PUT', '/admin/store/offer-codes/list-b', body());
      await svc.admin('PUT', '/admin/store/offer-codes/list-a', body());
      const response = await svc.admin('GET', '/admin/store/offer-codes');
      expect(response.status).to.equal(200);
      const ids = storeOfferCodesResponse.parse(response.body).data.offer_codes.map((entry) => entry.offer_code.id);
      expect(ids.filter((id) => id.startsWith('list-'))).to.deep.equal(['list-a', 'list-b']);
    });

    describe('every enumeration value round-trips', () => {
      const cases: [string, readonly string[], (value: string) => Json][] = [
        ['offer_eligibility', OFFER_ELIGIBILITIES, (value) => body({ offer_code: { offer_eligibility: value } })],
        ['duration', OFFER_DURATIONS, (value) => body({ offer_code: { duration: value } })],
        ['offer_mode', OFFER_MODES, (value) => body({ offer_code: { offer_mode: value } })],
        ['customer_eligibilities', CUSTOMER_ELIGIBILITIES, (value) => body({ offer_code: { customer_eligibilities: [value] } })],
        ['subscription_period', SUBSCRIPTION_PERIODS, (value) => body({ subscription: { subscription_period: value } })],
      ];
      for (const [field, values, make] of cases) {
        for (const value of values) {
          it(`${field} ${value}`, async () => {
            const id = `enum-${field}-${value}`;
            const put = await svc.admin('PUT', `/admin/store/offer-codes/${id}`, make(value));
            expect(put.status, JSON.stringify(put.body)).to.equal(201);
            const got = await svc.call('GET', `/store/offer-codes/${id}`);
            const { offer_code, subscription } = storeOfferCodeResponse.parse(got.body).data;
            const stored = field === 'subscription_period' ? subscription.subscription_period : (offer_code as Json)[field];
            expect(stored).to.deep.equal(field === 'customer_eligibilities' ? [value] : value);
          });
        }
      }

      it('customer_eligibilities NEW, EXISTING and EXPIRED together', async () => {
        const all = [...CUSTOMER_ELIGIBILITIES];
        await svc.admin('PUT', '/admin/store/offer-codes/enum-all-customers', body({ offer_code: { customer_eligibilities: all } }));
        const got = await svc.call('GET', '/store/offer-codes/enum-all-customers');
        expect(got.body.data.offer_code.customer_eligibilities).to.deep.equal(all);
      });
    });

    describe('bad input → 400 BAD_REQUEST with the JSON pointer of the field', () => {
      const cases: [string, Json, string][] = [
        ['unknown customer eligibility', body({ offer_code: { customer_eligibilities: ['NEW', 'LAPSED'] } }), '/offer_code/customer_eligibilities/1'],
        ['no customer eligibility', body({ offer_code: { customer_eligibilities: [] } }), '/offer_code/customer_eligibilities'],
        ['a customer eligibility twice', body({ offer_code: { customer_eligibilities: ['NEW', 'NEW'] } }), '/offer_code/customer_eligibilities/1'],
        ['unknown offer eligibility', body({ offer_code: { offer_eligibility: 'STACK' } }), '/offer_code/offer_eligibility'],
        ['unknown duration', body({ offer_code: { duration: 'ONE_DAY' } }), '/offer_code/duration'],
        ['lower-case duration', body({ offer_code: { duration: 'one_month' } }), '/offer_code/duration'],
        ['unknown offer mode', body({ offer_code: { offer_mode: 'FREE' } }), '/offer_code/offer_mode'],
        ['unknown subscription period', body({ subscription: { subscription_period: 'THREE_DAYS' } }), '/subscription/subscription_period'],
        ['number_of_periods 0', body({ offer_code: { number_of_periods: 0 } }), '/offer_code/number_of_periods'],
        ['number_of_periods not an integer', body({ offer_code: { number_of_periods: 1.5 } }), '/offer_code/number_of_periods'],
        ['a price as a number', body({ offer_code: { prices: [{ territory: 'USA', price: 4.99, currency: 'USD' }] } }), '/offer_code/prices/0/price'],
        ['a price with a comma', body({ offer_code: { prices: [{ territory: 'USA', price: '4,99', currency: 'USD' }] } }), '/offer_code/prices/0/price'],
        ['a negative price', body({ subscription: { prices: [{ territory: 'USA', price: '-1', currency: 'USD' }] } }), '/subscription/prices/0/price'],
        ['a bad currency', body({ offer_code: { prices: [{ territory: 'USA', price: '1', currency: 'usd' }] } }), '/offer_code/prices/0/currency'],
        ['a bad territory', body({ offer_code: { prices: [{ territory: 'United States', price: '1', currency: 'USD' }] } }), '/offer_code/prices/0/territory'],
        [
          'a territory twice',
          body({
            offer_code: {
              prices: [
                { territory: 'USA', price: '1', currency: 'USD' },
                { territory: 'USA', price: '2', currency: 'USD' },
              ],
            },
          }),
          '/offer_code/prices/1/territory',
        ],
        ['missing name', body({ offer_code: { name: undefined } }), '/offer_code/name'],
        ['missing subscription product_id', body({ subscription: { product_id: undefined } }), '/subscription/product_id'],
        ['an offer_code.id other than the path', body({ offer_code: { id: 'other' } }), '/offer_code/id'],
        ['no subscription', { offer_code: body().offer_code }, '/subscription'],
      ];
      for (const [name, badBody, source] of cases) {
        it(`${name} → ${source}`, async () => {
          const response = await svc.admin('PUT', '/admin/store/offer-codes/bad-input', badBody);
          expectError(response, 400, 'BAD_REQUEST', source);
        });
      }

      it('an id with a control character, C1 included, as every id a request names → 400', async () => {
        for (const id of ['c0%01x', 'c1%C2%85x', 'del%7Fx']) {
          const response = await svc.admin('PUT', `/admin/store/offer-codes/${id}`, body({ offer_code: { id: decodeURIComponent(id) } }));
          expect(response.status, id).to.equal(400);
          expect(response.body.errors[0].code, id).to.equal('BAD_REQUEST');
        }
      });

      it('the ids "." and ".." (and %2E%2E), sent as they are → 400: a URL resolves them as dot segments, so no client could read them back', async () => {
        for (const id of ['.', '..', '%2E', '%2e%2E']) {
          const response = await rawRequest(svc, 'PUT', `/admin/store/offer-codes/${id}`, body());
          expect(response.status, id).to.equal(400);
          expect(response.body.errors[0], id).to.include({ code: 'BAD_REQUEST', source: 'path:/offer_code_id' });
          expect((await rawRequest(svc, 'GET', `/store/offer-codes/${id}`)).status, id).to.equal(400);
        }
        expectError(await svc.admin('PUT', '/admin/store/offer-codes/bad-input', body({ offer_code: { id: '..' } })), 400, 'BAD_REQUEST', '/offer_code/id');
        const reward = { kind: 'offer_code', name: 'Dots', offer_code_id: '..', offer_code_ref_name: 'ref', subscription_product_id: 'p1' };
        expectError(await svc.admin('PUT', '/admin/rewards/dots', reward), 400, 'BAD_REQUEST', '/offer_code_id');
        expectError(await svc.admin('GET', '/admin/rewards/dots'), 404, 'NOT_FOUND.REWARD');
      });

      it('wrote nothing for any of them', async () => {
        expectError(await svc.admin('GET', '/admin/store/offer-codes/bad-input'), 404, 'NOT_FOUND.OFFER_CODE', 'path:/offer_code_id');
      });

      it('400 BODY_INVALID for a body that is not an object', async () => {
        expectError(await svc.admin('PUT', '/admin/store/offer-codes/bad-input', '[1]'), 400, 'BODY_INVALID');
      });
    });

    it('404 NOT_FOUND.OFFER_CODE for an id in no catalog (public and admin)', async () => {
      expectError(await svc.call('GET', '/store/offer-codes/nope'), 404, 'NOT_FOUND.OFFER_CODE', 'path:/offer_code_id');
      expectError(await svc.admin('GET', '/admin/store/offer-codes/nope'), 404, 'NOT_FOUND.OFFER_CODE', 'path:/offer_code_id');
    });

    it('admin needs a secret key: 403 FORBIDDEN for a client key, 401 without a key', async () => {
      expectError(await svc.call('PUT', '/admin/store/offer-codes/oc-auth', body()), 403, 'FORBIDDEN', 'header:x-api-key');
      expectError(await svc.call('GET', '/admin/store/offer-codes/oc-auth'), 403, 'FORBIDDEN');
      expectError(await svc.call('GET', '/admin/store/offer-codes'), 403, 'FORBIDDEN');
      expectError(await svc.call('GET', '/store/offer-codes/oc-basic', undefined, { 'x-api-key': '' }), 401, 'UNAUTHORIZED');
    });

    it('405 METHOD_NOT_ALLOWED on the store paths', async () => {
      expectError(await svc.call('POST', '/store/offer-codes/oc-basic', {}), 405, 'METHOD_NOT_ALLOWED', null);
      expectError(await svc.admin('DELETE', '/admin/store/offer-codes/oc-basic'), 405, 'METHOD_NOT_ALLOWED', null);
      expectError(await svc.admin('POST', '/admin/store/offer-codes', body()), 405, 'METHOD_NOT_ALLOWED', null);
    });

    it('documents the operations in /openapi.json', async () => {
      const document = (await fetch(`${svc.url}/openapi.json`).then((response) => response.json())) as { paths: Json };
      expect(document.paths['/store/offer-codes/{offer_code_id}']).to.have.property('get');
      expect(document.paths['/admin/store/offer-codes/{offer_code_id}']).to.have.all.keys('get', 'put');
      expect(document.paths['/admin/store/offer-codes']).to.have.property('get');
    });
  });

  describe('with App Store Connect configured', () => {
    const TTL_S = 600;
    let svc: TestService;
    let fake: FakeAppStoreConnect;
    let keyDir: string;

    before(async () => {
      const keys = await ascKeyPair();
      keyDir = tempDir('asc-key');
      const keyPath = path.join(keyDir, `AuthKey_${KEY_ID}.p8`);
      fs.writeFileSync(keyPath, keys.pem);
      fake = new FakeAppStoreConnect(keys.publicKey);
      fake.offerCodes.set('6501234567', sampleOfferCode('6501234567'));
      fake.offerCodes.set('catalogued', sampleOfferCode('catalogued'));
      await fake.start();
      svc = await startTestService({
        env: {
          ASC_ISSUER_ID: ISSUER_ID,
          ASC_KEY_ID: KEY_ID,
          ASC_PRIVATE_KEY_PATH: keyPath,
          ASC_BASE_URL: fake.url,
          ASC_TIMEOUT_MS: '1000',
          ASC_CACHE_TTL_S: String(TTL_S),
        },
      });
    });
    after(async () => {
      await svc.stop();
      await fake.stop();
      fs.rmSync(keyDir, { recursive: true, force: true });
    });
    afterEach(() => {
      fake.failure = null;
      fake.failOn = null;
    });

    /** Each test looks up its own id, so the cache of one does not serve another. */
    function storeHas(id: string): void {
      fake.offerCodes.set(id, sampleOfferCode(id));
    }
    const headCalls = (id: string) => fake.calls(new RegExp(`^/v1/subscriptionOfferCodes/${id}$`)).length;

    it('fetches an id the catalog lacks from App Store Connect, with a token it accepts', async () => {
      storeHas('asc-1');
      const response = await svc.call('GET', '/store/offer-codes/asc-1');
      expect(response.status, JSON.stringify(response.body)).to.equal(200);
      const { offer_code, subscription } = storeOfferCodeResponse.parse(response.body).data;
      expect(offer_code).to.include({ id: 'asc-1', duration: 'THREE_MONTHS', offer_mode: 'PAY_AS_YOU_GO', number_of_periods: 3 });
      expect(offer_code.prices).to.deep.include({ territory: 'USA', price: '4.99', currency: 'USD' });
      expect(subscription).to.include({ product_id: 'com.example.premium.yearly', subscription_period: 'ONE_YEAR' });
      expect(subscription.prices).to.deep.include({ territory: 'USA', price: '49.99', currency: 'USD' });
      expect(fake.tokenProblems).to.deep.equal([]);
      expect(fake.verifiedTokens.at(-1)!.header).to.include({ alg: 'ES256', kid: KEY_ID, typ: 'JWT' });
      expect(fake.verifiedTokens.at(-1)!.payload).to.include({ iss: ISSUER_ID, aud: 'appstoreconnect-v1' });
    });

    it('serves a catalog entry without asking App Store Connect', async () => {
      await svc.admin('PUT', '/admin/store/offer-codes/catalogued', body({ offer_code: { name: 'From the catalog' } }));
      const response = await svc.call('GET', '/store/offer-codes/catalogued');
      expect(response.body.data.offer_code.name).to.equal('From the catalog');
      expect(headCalls('catalogued')).to.equal(0);
    });

    it('caches an App Store Connect answer for ASC_CACHE_TTL_S, then fetches again', async () => {
      storeHas('asc-cache');
      await svc.call('GET', '/store/offer-codes/asc-cache');
      expect(headCalls('asc-cache')).to.equal(1);
      svc.clock.advance(TTL_S * 1000 - 1_000);
      // Even a store that now fails is not asked while the answer is fresh.
      fake.failure = 'server_error';
      expect((await svc.call('GET', '/store/offer-codes/asc-cache')).status).to.equal(200);
      expect(headCalls('asc-cache')).to.equal(1);
      fake.failure = null;
      svc.clock.advance(1_000);
      expect((await svc.call('GET', '/store/offer-codes/asc-cache')).status).to.equal(200);
      expect(headCalls('asc-cache')).to.equal(2);
    });

    it('404 NOT_FOUND.OFFER_CODE when neither the catalog nor App Store Connect has the id', async () => {
      expectError(await svc.call('GET', '/store/offer-codes/unknown-everywhere'), 404, 'NOT_FOUND.OFFER_CODE', 'path:/offer_code_id');
      expect(headCalls('unknown-everywhere')).to.equal(1);
    });

    it('401 APP_STORE_CONNECT.UNAUTHORIZED when App Store Connect rejects the credentials (401 or 403)', async () => {
      storeHas('asc-401');
      for (const failure of ['unauthorized', 'forbidden'] as const) {
        fake.failure = failure;
        expectError(await svc.call('GET', '/store/offer-codes/asc-401'), 401, 'APP_STORE_CONNECT.UNAUTHORIZED', null);
      }
    });

    it('424 APP_STORE_CONNECT.REQUEST_FAILED for a 5xx, a timeout, a body that is not JSON and a malformed document', async () => {
      storeHas('asc-424');
      for (const failure of ['server_error', 'hang', 'not_json', 'malformed'] as const) {
        fake.failure = failure;
        const response = await svc.call('GET', '/store/offer-codes/asc-424');
        expectError(response, 424, 'APP_STORE_CONNECT.REQUEST_FAILED', null);
      }
    });

    it('424 when only a price list fails', async () => {
      storeHas('asc-prices');
      fake.failure = 'server_error';
      fake.failOn = /\/prices$/;
      expectError(await svc.call('GET', '/store/offer-codes/asc-prices'), 424, 'APP_STORE_CONNECT.REQUEST_FAILED');
    });

    it('tells the rewards admin which ids are known (OfferCodeLookup.isKnown / isConfigured)', async () => {
      const lookup = svc.service.container.resolve(OfferCodeLookup);
      storeHas('asc-known');
      expect(await lookup.isConfigured()).to.equal(true);
      expect(await lookup.isKnown('asc-known')).to.equal(true);
      expect(await lookup.isKnown('catalogued')).to.equal(true);
      expect(await lookup.isKnown('unknown-to-both')).to.equal(false);
    });
  });
});
