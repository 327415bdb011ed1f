import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { DEFAULT_ACCOUNT_TOKEN_NAMESPACE } from '../../src/config.js';
import { accountToken } from '../../src/domain/revenue/account-token.js';
import { appleNotification, appleTransaction, BUNDLE_ID, makeAppleTestChain, type AppleTestChain } from '../support/apple-signing.js';
import { createUser, eventually, events } from '../support/fixtures.js';
import { type GoogleOidcStub, pubSubPush, startGoogleOidcStub } from '../support/google-oidc.js';
import { post } from '../support/revenue-senders.js';
import { startTestService, type TestService } from '../support/test-service.js';

const inbox = async (svc: TestService, query = '') => (await svc.admin('GET', `/admin/webhooks/inbound?limit=1000${query}`)).body.data.notifications as any[];
const recorded = async (svc: TestService, user: string) =>
  (await events(svc, `stream=user-${user}`)).filter((event) =>
    ['PurchaseRecorded', 'RenewalRecorded', 'RefundRecorded', 'SubscriptionExpired'].includes(event.type),
  );
const token = (user: string) => accountToken(user, DEFAULT_ACCOUNT_TOKEN_NAMESPACE);

describe('API: revenue notifications in (SPEC §11) — App Store and Google Play', () => {
  describe('App Store Server Notifications V2 (SignedDataVerifier, a test root configured)', () => {
    let svc: TestService;
    let chain: AppleTestChain;
    let forger: AppleTestChain;
    const send = (body: unknown) => post(svc, '/webhooks/app-store', JSON.stringify(body));

    before(async () => {
      chain = makeAppleTestChain();
      forger = makeAppleTestChain();
      svc = await startTestService({ env: { APPLE_ROOT_CERTS: chain.rootPath, APPLE_BUNDLE_ID: BUNDLE_ID, APPLE_ENVIRONMENT: 'Sandbox' } });
    });
    after(async () => svc.stop());

    it('records a purchase matched by appAccountToken; the same notificationUUID again is a duplicate', async () => {
      await createUser(svc, 'apple-ann');
      expect((await svc.admin('GET', '/admin/users/apple-ann/account-token')).body.data.account_token).to.equal(token('apple-ann'));
      const uuid = randomUUID();
      const body = await appleNotification(
        chain,
        'SUBSCRIBED',
        appleTransaction({ transactionId: 't-ann-1', originalTransactionId: 'o-ann', appAccountToken: token('apple-ann') }),
        { uuid, subtype: 'INITIAL_BUY' },
      );
      expect(await send(body)).to.deep.equal({ status: 200, body: { data: { status: 'applied' } } });
      expect((await send(body)).body.data.status).to.equal('duplicate');
      const [purchase, ...rest] = await recorded(svc, 'apple-ann');
      expect(rest).to.have.length(0);
      expect(purchase!.data).to.include({
        provider: 'app-store',
        notification_id: uuid,
        kind: 'purchase',
        transaction_id: 't-ann-1',
        original_transaction_id: 'o-ann',
        price_minor: 999,
        currency: 'USD',
      });
      // A token written in capitals is the same UUID: matched too.
      await createUser(svc, 'apple-upper');
      const upper = await appleNotification(
        chain,
        'SUBSCRIBED',
        appleTransaction({ transactionId: 't-upper', originalTransactionId: 'o-upper', appAccountToken: token('apple-upper').toUpperCase() }),
        { subtype: 'INITIAL_BUY' },
      );
      expect((await send(upper)).body.data.status).to.equal('applied');
      expect((await recorded(svc, 'apple-upper')).map((event) => event.type)).to.deep.equal(['PurchaseRecorded']);
      // A renewal without a token is matched by its original transaction, already linked.
      const renewal = await appleNotification(chain, 'DID_RENEW', appleTransaction({ transactionId: 't-ann-2', originalTransactionId: 'o-ann' }));
      expect((await send(renewal)).body.data.status).to.equal('applied');
      expect((await recorded(svc, 'apple-ann')).map((event) => event.type)).to.deep.equal(['PurchaseRecorded', 'RenewalRecorded']);
    });

    it("converts Apple's milliunits by ISO 4217's digits, not the runtime's display data (HUF has 2, KWD 3, JPY 0)", async () => {
      for (const [currency, milliunits, minor] of [
        ['HUF', 1_990_500, 199_050],
        ['KWD', 1_500, 1_500],
        ['JPY', 800_000, 800],
      ] as const) {
        const user = `apple-${currency.toLowerCase()}`;
        await createUser(svc, user);
        const transaction = {
          ...appleTransaction({ transactionId: `t-${user}`, originalTransactionId: `o-${user}`, appAccountToken: token(user), price: milliunits }),
          currency,
        };
        expect((await send(await appleNotification(chain, 'SUBSCRIBED', transaction, { subtype: 'INITIAL_BUY' }))).body.data.status).to.equal('applied');
        expect((await recorded(svc, user))[0]!.data, currency).to.include({ currency, price_minor: minor });
      }
    });

    it('refuses a chain to another root, and a payload signed for another bundle id, with 401 (kept as rejected, no payload)', async () => {
      const forged = await appleNotification(forger, 'SUBSCRIBED', appleTransaction({ transactionId: 't-x', originalTransactionId: 'o-x' }));
      const answer = await send(forged);
      expect(answer.status).to.equal(401);
      expect(answer.body.errors[0].code).to.equal('WEBHOOK.UNAUTHORIZED');
      const otherAppUuid = randomUUID();
      const otherApp = await appleNotification(chain, 'SUBSCRIBED', appleTransaction({ transactionId: 't-y', originalTransactionId: 'o-y' }, 'com.other.app'), {
        bundleId: 'com.other.app',
        uuid: otherAppUuid,
      });
      expect((await send(otherApp)).status).to.equal(401);
      expect((await send({})).status).to.equal(401);
      const rejected = await inbox(svc, '&provider=app-store&status=rejected');
      expect(rejected.length).to.be.at.least(3);
      // The forged one and the empty one could not be read: no id. The one the App Store signed for another app was read: its id.
      expect(rejected.map((row) => row.id)).to.deep.equal([null, otherAppUuid, null]);
      // A flood of unsigned ones past the budget cannot hide a payload the App Store signed for another app: it is always kept.
      await Promise.all(Array.from({ length: 15 }, () => send({})));
      const before = (await inbox(svc, '&provider=app-store&status=rejected')).length;
      const nextUuid = randomUUID();
      const next = await appleNotification(chain, 'SUBSCRIBED', appleTransaction({ transactionId: 't-z', originalTransactionId: 'o-z' }, 'com.other.app'), {
        bundleId: 'com.other.app',
        uuid: nextUuid,
      });
      expect((await send(next)).status).to.equal(401);
      const after = await inbox(svc, '&provider=app-store&status=rejected');
      expect(after).to.have.length(before + 1);
      expect(after[after.length - 1]!).to.include({ id: nextUuid });
      expect(after[after.length - 1]!.reason).to.match(/^signed for another app or environment/);
      // Anyone holding it can send it again: refused each time, kept once (outside the budget, so not without bound).
      const replays = await Promise.all(Array.from({ length: 20 }, () => send(next)));
      expect(replays.map((replay) => replay.status)).to.deep.equal(Array(20).fill(401));
      expect((await send(otherApp)).status).to.equal(401);
      expect(await inbox(svc, '&provider=app-store&status=rejected')).to.have.length(before + 1);
    });

    it('refuses a payload the App Store signed for the other environment (Production, to a Sandbox service) with 401, kept as rejected', async () => {
      const productionUuid = randomUUID();
      const production = await appleNotification(chain, 'SUBSCRIBED', appleTransaction({ transactionId: 't-prod', originalTransactionId: 'o-prod' }), {
        environment: 'Production',
        uuid: productionUuid,
      });
      const answer = await send(production);
      expect(answer.status).to.equal(401);
      expect(answer.body.errors[0]).to.include({ code: 'WEBHOOK.UNAUTHORIZED', status: 401 });
      const rejected = await inbox(svc, '&provider=app-store&status=rejected');
      expect(rejected[rejected.length - 1]!.reason).to.match(/^signed for another app or environment/);
      expect(rejected[rejected.length - 1]!.id).to.equal(productionUuid);
      expect((await inbox(svc, '&provider=app-store')).some((row) => JSON.stringify(row).includes('o-prod'))).to.equal(false);
    });

    it('answers 400 for a body that is not JSON and for a verified payload without its transaction', async () => {
      const notJson = await post(svc, '/webhooks/app-store', 'signedPayload=abc');
      expect(notJson.status).to.equal(400);
      expect(notJson.body.errors[0].code).to.equal('BODY_INVALID');
      // A notification signed by the App Store's chain, with `data` as given.
      const signed = async (type: string, data: Record<string, unknown>) =>
        send({ signedPayload: await chain.sign({ notificationType: type, notificationUUID: randomUUID(), version: '2.0', signedDate: Date.now(), data }) });
      const malformed = await signed('DID_RENEW', { bundleId: BUNDLE_ID, environment: 'Sandbox' });
      expect(malformed.status).to.equal(400);
      expect(malformed.body.errors[0].code).to.equal('BAD_REQUEST');
      // Naming no app at all (no data, or data without a bundleId; a transaction without one): malformed, not another app's.
      const rejectedBefore = (await inbox(svc, '&provider=app-store&status=rejected')).length;
      const noData = await send({
        signedPayload: await chain.sign({ notificationType: 'SUBSCRIBED', notificationUUID: randomUUID(), version: '2.0', signedDate: Date.now() }),
      });
      expect(noData.body.errors[0]).to.include({ status: 400, code: 'BAD_REQUEST', source: '/signedPayload' });
      expect((await signed('SUBSCRIBED', { environment: 'Sandbox', status: 1 })).body.errors[0]).to.include({ status: 400, code: 'BAD_REQUEST' });
      const { bundleId: _bundleId, ...appless } = appleTransaction({ transactionId: 't-appless', originalTransactionId: 'o-appless' });
      const applessInner = await signed('SUBSCRIBED', {
        bundleId: BUNDLE_ID,
        environment: 'Sandbox',
        status: 1,
        signedTransactionInfo: await chain.sign(appless),
      });
      expect(applessInner.body.errors[0]).to.include({ status: 400, code: 'BAD_REQUEST', source: '/signedPayload' });
      expect(await inbox(svc, '&provider=app-store&status=rejected')).to.have.length(rejectedBefore);
      // Signed by the App Store's chain, with fields Apple's validator refuses, a time past the year
      // 9999 or a price beyond a safe integer: malformed (400), never a bad signature or a 500.
      const refusedByApple: Record<string, unknown>[] = [{ price: 'lots' }, { originalTransactionId: 5 }, { purchaseDate: 'yesterday' }];
      // A negative price or a currency that is not three letters: malformed too, never counted as money.
      for (const wrong of [...refusedByApple, { purchaseDate: 1e20 }, { price: 1e300 }, { price: -9990 }, { currency: 'US Dollar' }]) {
        const transaction = { ...appleTransaction({ transactionId: `t-bad-${randomUUID()}`, originalTransactionId: 'o-bad' }), ...wrong };
        const answer = await send(await appleNotification(chain, 'SUBSCRIBED', transaction));
        expect(answer.status, JSON.stringify(wrong)).to.equal(400);
        expect(answer.body.errors[0].code).to.equal('BAD_REQUEST');
        expect(answer.body.errors[0].source, JSON.stringify(wrong)).to.equal('/signedPayload');
      }
      // A transaction that is not a JWS inside a verified notification: malformed too.
      const garbled = await signed('SUBSCRIBED', { bundleId: BUNDLE_ID, environment: 'Sandbox', status: 1, signedTransactionInfo: 'garbage' });
      expect(garbled.body.errors[0]).to.include({ status: 400, code: 'BAD_REQUEST', source: '/signedPayload' });
      // A transaction signed by a chain the service does not trust, inside a notification the App
      // Store signed: a bad signature (SPEC §11: 401), not a malformed payload.
      const forgedInner = await signed('SUBSCRIBED', {
        bundleId: BUNDLE_ID,
        environment: 'Sandbox',
        status: 1,
        signedTransactionInfo: await forger.sign({ ...appleTransaction({ transactionId: 't-inner', originalTransactionId: 'o-inner' }) }),
      });
      expect(forgedInner.body.errors[0]).to.include({ status: 401, code: 'WEBHOOK.UNAUTHORIZED' });
      // The same fields from a chain the service does not trust stay a bad signature.
      const forgedBad = await appleNotification(forger, 'SUBSCRIBED', {
        ...appleTransaction({ transactionId: 't-forged', originalTransactionId: 'o-f' }),
        price: 'lots',
      });
      expect((await send(forgedBad)).status).to.equal(401);
    });

    it('keeps a notification for an unknown account token and applies it when the user is created', async () => {
      const body = await appleNotification(
        chain,
        'SUBSCRIBED',
        appleTransaction({ transactionId: 't-late', originalTransactionId: 'o-late', appAccountToken: token('apple-late') }),
      );
      expect((await send(body)).body.data.status).to.equal('unmatched');
      await createUser(svc, 'apple-late');
      await eventually(async () => expect(await recorded(svc, 'apple-late')).to.have.length(1));
      expect((await send(body)).body.data.status).to.equal('duplicate');
      expect(await recorded(svc, 'apple-late')).to.have.length(1);
    });

    it('records a refund delivered before its purchase, once, in either order', async () => {
      await createUser(svc, 'apple-ooo');
      const tx = appleTransaction({ transactionId: 't-ooo', originalTransactionId: 'o-ooo', appAccountToken: token('apple-ooo') });
      const refund = await appleNotification(chain, 'REFUND', tx);
      const purchase = await appleNotification(chain, 'SUBSCRIBED', tx);
      expect((await send(refund)).body.data.status).to.equal('applied');
      expect((await send(purchase)).body.data.status).to.equal('applied');
      expect((await send(refund)).body.data.status).to.equal('duplicate');
      const types = await recorded(svc, 'apple-ooo');
      expect(types.map((event) => event.type)).to.deep.equal(['RefundRecorded', 'PurchaseRecorded']);
      expect(types[1]!.data.refunded_before).to.equal(true);
    });
  });

  describe('App Store in Production (APPLE_APP_APPLE_ID names the app)', () => {
    const APP_APPLE_ID = 1_234_567_890;
    let svc: TestService;
    let chain: AppleTestChain;
    const send = async (user: string, options: { appAppleId?: number; environment?: 'Sandbox' | 'Production' }) => {
      const transaction = appleTransaction({ transactionId: `t-${user}-${randomUUID()}`, originalTransactionId: `o-${user}`, appAccountToken: token(user) });
      return post(svc, '/webhooks/app-store', JSON.stringify(await appleNotification(chain, 'SUBSCRIBED', transaction, options)));
    };

    before(async () => {
      chain = makeAppleTestChain();
      svc = await startTestService({
        env: { APPLE_ROOT_CERTS: chain.rootPath, APPLE_BUNDLE_ID: BUNDLE_ID, APPLE_ENVIRONMENT: 'Production', APPLE_APP_APPLE_ID: String(APP_APPLE_ID) },
      });
    });
    after(async () => svc.stop());

    it("starts, records a Production notification for its app, and refuses another app's id, none, or the Sandbox (401)", async () => {
      await createUser(svc, 'apple-prod');
      expect((await send('apple-prod', { environment: 'Production', appAppleId: APP_APPLE_ID })).body).to.deep.equal({ data: { status: 'applied' } });
      expect((await recorded(svc, 'apple-prod')).map((event) => event.type)).to.deep.equal(['PurchaseRecorded']);
      for (const options of [
        { environment: 'Production', appAppleId: 42 },
        { environment: 'Production' },
        { environment: 'Sandbox', appAppleId: APP_APPLE_ID },
      ] as const) {
        const answer = await send('apple-prod', options);
        expect(answer.status, JSON.stringify(options)).to.equal(401);
        expect(answer.body.errors[0].code).to.equal('WEBHOOK.UNAUTHORIZED');
      }
      expect(await recorded(svc, 'apple-prod')).to.have.length(1);
    });
  });

  describe('Google Play RTDN (Pub/Sub push with an OIDC token verified by google-auth-library)', () => {
    const AUDIENCE = 'https://referrals.example.com/webhooks/google-play';
    const ACCOUNT = 'play-push@test-project.iam.gserviceaccount.com';
    let svc: TestService;
    let oidc: GoogleOidcStub;
    const notification = (fields: Record<string, unknown>) => ({
      version: '1.0',
      packageName: 'com.example.referrals',
      eventTimeMillis: String(Date.now()),
      ...fields,
    });
    const send = async (messageId: string, body: Record<string, unknown>, bearer?: string) =>
      post(svc, '/webhooks/google-play', pubSubPush(messageId, body), {
        authorization: `Bearer ${bearer ?? (await oidc.token({ aud: AUDIENCE, email: ACCOUNT }))}`,
      });

    before(async () => {
      oidc = await startGoogleOidcStub();
      svc = await startTestService({
        env: {
          GOOGLE_PLAY_PACKAGE_NAME: 'com.example.referrals',
          GOOGLE_PLAY_PUSH_AUDIENCE: AUDIENCE,
          GOOGLE_PLAY_PUSH_SERVICE_ACCOUNT: ACCOUNT,
          GOOGLE_OIDC_CERTS_URL: oidc.certsUrl,
        },
      });
    });
    after(async () => {
      await svc.stop();
      await oidc.close();
    });

    it('records a purchase matched by obfuscatedExternalAccountId, a renewal by the linked purchase token; a repeat is a duplicate', async () => {
      await createUser(svc, 'play-ann');
      const purchase = notification({
        obfuscatedExternalAccountId: 'play-ann',
        subscriptionNotification: { version: '1.0', notificationType: 4, purchaseToken: 'pt-ann', subscriptionId: 'premium' },
      });
      expect((await send('m-1', purchase)).body.data.status).to.equal('applied');
      expect((await send('m-1', purchase)).body.data.status).to.equal('duplicate');
      const renewal = notification({ subscriptionNotification: { version: '1.0', notificationType: 2, purchaseToken: 'pt-ann', subscriptionId: 'premium' } });
      expect((await send('m-2', renewal)).body.data.status).to.equal('applied');
      const types = await recorded(svc, 'play-ann');
      expect(types.map((event) => event.type)).to.deep.equal(['PurchaseRecorded', 'RenewalRecorded']);
      expect(types[0]!.data).to.include({ provider: 'google-play', notification_id: 'm-1', original_transaction_id: 'pt-ann', product_id: 'premium' });
    });

    it('refuses a missing token, a token for another audience or account, and another package (401)', async () => {
      const body = notification({ subscriptionNotification: { version: '1.0', notificationType: 4, purchaseToken: 'pt-x' } });
      expect((await post(svc, '/webhooks/google-play', pubSubPush('m-x', body))).status).to.equal(401);
      expect((await send('m-x', body, await oidc.token({ aud: 'https://elsewhere.example', email: ACCOUNT }))).status).to.equal(401);
      expect((await send('m-x', body, await oidc.token({ aud: AUDIENCE, email: 'someone@else.iam.gserviceaccount.com' }))).status).to.equal(401);
      expect((await send('m-x', body, 'not.a.jwt')).status).to.equal(401);
      const other = await send('m-y', { ...body, packageName: 'com.other.app' });
      expect(other.status).to.equal(401);
      expect(other.body.errors[0].code).to.equal('WEBHOOK.UNAUTHORIZED');
      // Those it could not read have no id; the one Play signed for another package was read: its messageId.
      const rejected = await inbox(svc, '&provider=google-play&status=rejected');
      expect(rejected.map((row) => row.id)).to.deep.equal([null, null, null, null, 'm-y']);
    });

    it('answers 400 for a push that is not JSON or not a Pub/Sub message', async () => {
      const bearer = await oidc.token({ aud: AUDIENCE, email: ACCOUNT });
      const notJson = await post(svc, '/webhooks/google-play', '{', { authorization: `Bearer ${bearer}` });
      expect(notJson.body.errors[0].code).to.equal('BODY_INVALID');
      const malformed = await post(svc, '/webhooks/google-play', JSON.stringify({ message: { data: 'bm90IGpzb24=', messageId: 'm-bad' } }), {
        authorization: `Bearer ${bearer}`,
      });
      expect(malformed.status).to.equal(400);
      expect(malformed.body.errors[0].code).to.equal('BAD_REQUEST');
      // Verified, but its time is past the year 9999: 400, never a 500.
      const late = notification({ eventTimeMillis: '99999999999999999999', subscriptionNotification: { notificationType: 4, purchaseToken: 'tok-late' } });
      expect((await send('m-late', late)).body.errors[0]).to.include({ status: 400, code: 'BAD_REQUEST', source: '/message/data' });
      // Verified, but its message id is a lone UTF-16 surrogate: 400, never a 500.
      const lone = notification({ subscriptionNotification: { notificationType: 4, purchaseToken: 'tok-lone' } });
      expect((await send('\ud800', lone)).body.errors[0]).to.include({ status: 400, code: 'BAD_REQUEST' });
    });

    it('keeps an unknown user, applies it on creation; a voided purchase before its purchase is recorded once', async () => {
      const purchase = notification({
        obfuscatedExternalAccountId: 'play-late',
        subscriptionNotification: { version: '1.0', notificationType: 4, purchaseToken: 'pt-late' },
      });
      expect((await send('m-late', purchase)).body.data.status).to.equal('unmatched');
      await createUser(svc, 'play-late');
      await eventually(async () => expect(await recorded(svc, 'play-late')).to.have.length(1));
      const voided = notification({ obfuscatedExternalAccountId: 'play-late', voidedPurchaseNotification: { purchaseToken: 'pt-late-2', orderId: 'GPA.1' } });
      const second = notification({
        obfuscatedExternalAccountId: 'play-late',
        subscriptionNotification: { version: '1.0', notificationType: 4, purchaseToken: 'pt-late-2' },
      });
      expect((await send('m-void', voided)).body.data.status).to.equal('applied');
      expect((await send('m-second', second)).body.data.status).to.equal('applied');
      expect((await send('m-void', voided)).body.data.status).to.equal('duplicate');
      const types = await recorded(svc, 'play-late');
      expect(types.map((event) => event.type)).to.deep.equal(['PurchaseRecorded', 'RefundRecorded', 'PurchaseRecorded']);
      expect(types[2]!.data.refunded_before).to.equal(true);
    });
  });

  describe('Google Play with the shared ?token= (no OIDC)', () => {
    let svc: TestService;
    before(async () => {
      svc = await startTestService({ env: { GOOGLE_PLAY_PACKAGE_NAME: 'com.example.referrals', GOOGLE_PLAY_PUSH_TOKEN: 'shared-secret-token' } });
    });
    after(async () => svc.stop());

    it('takes the right token and refuses a wrong or missing one', async () => {
      await createUser(svc, 'play-shared');
      const body = pubSubPush('s-1', {
        packageName: 'com.example.referrals',
        obfuscatedExternalAccountId: 'play-shared',
        subscriptionNotification: { notificationType: 4, purchaseToken: 'pt-s' },
      });
      expect((await post(svc, '/webhooks/google-play?token=wrong', body)).status).to.equal(401);
      expect((await post(svc, '/webhooks/google-play', body)).status).to.equal(401);
      expect((await post(svc, '/webhooks/google-play?token=shared-secret-token', body)).body.data.status).to.equal('applied');
    });
  });
});
