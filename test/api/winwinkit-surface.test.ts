import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { createUser, putPromo } from '../support/fixtures.js';
import { SECRET_KEY, startTestService, type TestService } from '../support/test-service.js';
import { ascKeyPair, FakeAppStoreConnect, ISSUER_ID, KEY_ID, sampleOfferCode } from '../unit/appstore/fake-app-store-connect.js';
import { tempDir } from '../support/temp-dir.js';

const MOUNT = '/compat/winwinkit';

function expectError(answer: { status: number; body: any }, status: number, code: string) {
  expect(answer.status, JSON.stringify(answer.body)).to.equal(status);
  expect(answer.body.errors[0]).to.include({ code, status });
}

/** SPEC §15: the mount shares the native API's keys, errors, limits and data; only names differ. */
describe('API: the WinWinKit-compatible mount (SPEC §15)', function () {
  this.timeout(30_000);

  describe('on (the default)', () => {
    let svc: TestService;
    before(async () => {
      svc = await startTestService();
    });
    after(async () => svc.stop());

    it('serves the same data as the native API, with the wire names', async () => {
      const created = await svc.call('POST', `${MOUNT}/users`, { app_user_id: 'wire-ann', stripe_customer_id: 'cus_9' });
      expect(created.status).to.equal(201);
      const native = (await svc.call('GET', '/users/wire-ann')).body.data.user;
      expect(native.payment_customer_id).to.equal('cus_9');
      expect(Object.keys(native.rewards.active)).to.include('store_promo_code');
      const wire = (await svc.call('GET', `${MOUNT}/users/wire-ann`)).body.data.user;
      expect(wire.stripe_customer_id).to.equal('cus_9');
      expect(wire).to.not.have.property('payment_customer_id');
      expect(Object.keys(wire.rewards.active)).to.deep.equal([
        'basic',
        'credit',
        'offer_code',
        'googleplay_promo_code',
        'revenuecat_entitlement',
        'revenuecat_offering',
      ]);
      // An explicit null clears it, as natively.
      await svc.call('POST', `${MOUNT}/users`, { app_user_id: 'wire-ann', stripe_customer_id: null });
      expect((await svc.call('GET', '/users/wire-ann')).body.data.user.payment_customer_id).to.equal(null);
      // A bad value is named by its wire name.
      const bad = await svc.call('POST', `${MOUNT}/users`, { app_user_id: 'wire-ann', stripe_customer_id: 5 });
      expectError(bad, 400, 'BAD_REQUEST');
      expect(bad.body.errors[0].source).to.equal('/stripe_customer_id');
    });

    it('answers with the native errors and keys: 401 without a key, 403 for a client key on grant, 404 and 422 as natively', async () => {
      expectError(await svc.call('GET', `${MOUNT}/users/wire-ann`, undefined, { 'x-api-key': '' }), 401, 'UNAUTHORIZED');
      expectError(await svc.call('POST', `${MOUNT}/users/wire-ann/rewards/grant`, { key: 'none' }), 403, 'FORBIDDEN');
      expectError(await svc.call('POST', `${MOUNT}/users/wire-ann/rewards/grant`, { key: 'none' }, { 'x-api-key': SECRET_KEY }), 422, 'GRANT.REWARD_NOT_FOUND');
      expectError(await svc.call('GET', `${MOUNT}/users/nobody`), 404, 'NOT_FOUND.USER');
      expectError(await svc.call('GET', `${MOUNT}/codes/NOPE42`), 404, 'NOT_FOUND.CODE');
      expectError(await svc.call('POST', `${MOUNT}/users/wire-ann/claim-code`, { code: 'NOPE42' }), 422, 'CLAIM.CODE_NOT_FOUND');
      expectError(await svc.call('GET', `${MOUNT}/app-store/offer-codes/none`), 404, 'NOT_FOUND.OFFER_CODE');
    });

    it('has only the SDK routes: other paths are 404 PATH_ERROR (the admin API and /store stay native), other methods 405', async () => {
      expectError(await svc.call('GET', `${MOUNT}/admin/events`, undefined, { 'x-api-key': SECRET_KEY }), 404, 'PATH_ERROR');
      expectError(await svc.call('GET', `${MOUNT}/store/offer-codes/x`), 404, 'PATH_ERROR');
      expectError(await svc.call('GET', `${MOUNT}`), 404, 'PATH_ERROR');
      expectError(await svc.call('GET', '/app-store/offer-codes/x'), 404, 'PATH_ERROR');
      expectError(await svc.call('DELETE', `${MOUNT}/users/wire-ann`), 405, 'METHOD_NOT_ALLOWED');
    });

    it('resolves codes with the entity of their type', async () => {
      await putPromo(svc, 'WIRE10', { limit: 10 });
      const promo = await svc.call('GET', `${MOUNT}/codes/wire10`);
      expect(promo.body.data).to.include({ type: 'promo', code: 'WIRE10', is_active: true });
      expect(promo.body.data.entity).to.deep.equal({ limit: 10 });
    });
  });

  describe('COMPAT_WINWINKIT=off', () => {
    let svc: TestService;
    before(async () => {
      svc = await startTestService({ env: { COMPAT_WINWINKIT: 'off' } });
    });
    after(async () => svc.stop());

    it('answers 404 PATH_ERROR under the mount, with or without a key; the native API is unchanged', async () => {
      await createUser(svc, 'off-ann');
      expectError(await svc.call('GET', `${MOUNT}/users/off-ann`), 404, 'PATH_ERROR');
      expectError(await svc.call('GET', `${MOUNT}/users/off-ann`, undefined, { 'x-api-key': '' }), 404, 'PATH_ERROR');
      expectError(await svc.call('POST', `${MOUNT}/users`, { app_user_id: 'x' }), 404, 'PATH_ERROR');
      expect((await svc.call('GET', '/users/off-ann')).status).to.equal(200);
      const document = (await (await fetch(`${svc.url}/openapi.json`)).json()) as { paths: Record<string, unknown>; tags: { name: string }[] };
      expect(Object.keys(document.paths).filter((one: string) => one.startsWith(MOUNT))).to.deep.equal([]);
      // Nor its tag, which says operations are served under the mount.
      expect(document.tags.map((tag) => tag.name))
        .to.include('users')
        .and.not.to.include('compat: winwinkit');
    });
  });

  describe('rate limits', () => {
    let svc: TestService;
    before(async () => {
      svc = await startTestService({ env: { RATE_LIMITS: 'on', RATE_LIMIT_READS: '3/60s' } });
    });
    after(async () => svc.stop());

    it('share one budget with the native API (same key + IP, same user)', async () => {
      await createUser(svc, 'budget');
      expect((await svc.call('GET', '/users/budget')).status).to.equal(200);
      const wire = await svc.call('GET', `${MOUNT}/users/budget`);
      expect(wire.status).to.equal(200);
      expect(wire.headers.get('ratelimit')).to.match(/"reads-caller";r=1/);
      expect((await svc.call('GET', '/users/budget')).status).to.equal(200);
      expectError(await svc.call('GET', `${MOUNT}/users/budget`), 429, 'RATE_LIMITED');
    });
  });

  describe('GET /app-store/offer-codes/{id} with App Store Connect configured', () => {
    let svc: TestService;
    let fake: FakeAppStoreConnect;
    let keyDir: string;
    before(async () => {
      const keys = await ascKeyPair();
      keyDir = tempDir('asc-key');
      const keyPath = path.join(keyDir, `AuthKey_${KEY_ID}.p8`);
      fs.writeFileSync(keyPath, keys.pem);
      fake = new FakeAppStoreConnect(keys.publicKey);
      await fake.start();
      svc = await startTestService({
        env: { ASC_ISSUER_ID: ISSUER_ID, ASC_KEY_ID: KEY_ID, ASC_PRIVATE_KEY_PATH: keyPath, ASC_BASE_URL: fake.url, ASC_TIMEOUT_MS: '1000' },
      });
    });
    after(async () => {
      await svc.stop();
      await fake.stop();
      fs.rmSync(keyDir, { recursive: true, force: true });
    });

    it('answers as /store/offer-codes, but 424 (never 401) when App Store Connect rejects the credentials', async () => {
      fake.offerCodes.set('asc-ok', sampleOfferCode('asc-ok'));
      const wire = await svc.call('GET', `${MOUNT}/app-store/offer-codes/asc-ok`);
      expect(wire.status).to.equal(200);
      expect(wire.body).to.deep.equal((await svc.call('GET', '/store/offer-codes/asc-ok')).body);
      fake.offerCodes.set('asc-denied', sampleOfferCode('asc-denied'));
      fake.failure = 'unauthorized';
      expectError(await svc.call('GET', '/store/offer-codes/asc-denied'), 401, 'APP_STORE_CONNECT.UNAUTHORIZED');
      expectError(await svc.call('GET', `${MOUNT}/app-store/offer-codes/asc-denied`), 424, 'APP_STORE_CONNECT.REQUEST_FAILED');
      fake.failure = 'server_error';
      expectError(await svc.call('GET', `${MOUNT}/app-store/offer-codes/asc-denied`), 424, 'APP_STORE_CONNECT.REQUEST_FAILED');
    });
  });
});
