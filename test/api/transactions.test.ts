import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { appleNotification, appleTransaction, BUNDLE_ID, makeAppleTestChain, type AppleTestChain } from '../support/apple-signing.js';
import { createUser, eventually, events } from '../support/fixtures.js';
import { pubSubPush } from '../support/google-oidc.js';
import { post } from '../support/revenue-senders.js';
import { SECRET_KEY, startTestService, type TestService } from '../support/test-service.js';

const listing = async (svc: TestService, user: string) => (await svc.admin('GET', `/admin/users/${encodeURIComponent(user)}/transactions`)).body.data;
const linkEvents = async (svc: TestService, stream: string) => events(svc, `stream=${encodeURIComponent(stream)}`);

/** Transaction links (SPEC §15), on the native surface and under the WinWinKit-compatible mount: same rules. */
for (const mount of ['', '/compat/winwinkit']) {
  describe(`API: transaction links (SPEC §15) at ${mount || 'the native surface'}`, () => {
    let svc: TestService;
    const u = (name: string) => `${mount ? 'c' : 'n'}-${name}`;
    const appStore = (user: string, body: unknown, headers?: Record<string, string>) =>
      svc.call('POST', `${mount}/users/${encodeURIComponent(user)}/transactions/app-store`, body, headers);
    const googlePlay = (user: string, body: unknown) => svc.call('POST', `${mount}/users/${encodeURIComponent(user)}/transactions/google-play`, body);

    before(async () => {
      svc = await startTestService();
    });
    after(async () => svc.stop());

    it('records the first link as an event (204), and a repeat adds nothing', async () => {
      await createUser(svc, u('ann'));
      const token = randomUUID().toUpperCase();
      const first = await appStore(u('ann'), { original_transaction_id: `${mount ? 1 : 2}000000001`, app_account_token: token });
      expect(first.status).to.equal(204);
      expect(first.body).to.equal(null);
      expect((await appStore(u('ann'), { original_transaction_id: `${mount ? 1 : 2}000000001` })).status).to.equal(204);
      const recorded = await linkEvents(svc, `transaction-app-store-${mount ? 1 : 2}000000001`);
      expect(recorded.map((event) => event.type)).to.deep.equal(['TransactionLinked']);
      expect(recorded[0]!.data).to.include({ provider: 'app-store', app_user_id: u('ann'), app_account_token: token.toLowerCase() });
      // A secret key may link too (a server relaying the app's purchases).
      expect((await appStore(u('ann'), { original_transaction_id: `${mount ? 1 : 2}000000001` }, { 'x-api-key': SECRET_KEY })).status).to.equal(204);

      const purchaseToken = `${'tok.'.repeat(300)}${mount}`;
      expect((await googlePlay(u('ann'), { purchase_token: purchaseToken, obfuscated_external_account_id: null })).status).to.equal(204);
      expect((await googlePlay(u('ann'), { purchase_token: purchaseToken, obfuscated_external_account_id: 'acct-1' })).status).to.equal(204);
      const { links, refused_attempts } = await listing(svc, u('ann'));
      expect(refused_attempts).to.deep.equal([]);
      expect(links.map((link: any) => [link.provider, link.transaction_id])).to.deep.equal([
        ['app-store', `${mount ? 1 : 2}000000001`],
        ['google-play', purchaseToken],
      ]);
      expect(links[1].obfuscated_external_account_id).to.equal(null);
      expect(links[0].linked_at).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    });

    it('keeps the first link when another user asks for the same transaction (204), and records the attempt once', async () => {
      await createUser(svc, u('first'));
      await createUser(svc, u('second'));
      const id = `${mount ? 3 : 4}000000002`;
      expect((await appStore(u('first'), { original_transaction_id: id })).status).to.equal(204);
      expect((await appStore(u('second'), { original_transaction_id: id })).status).to.equal(204);
      expect((await appStore(u('second'), { original_transaction_id: id })).status).to.equal(204);
      expect((await linkEvents(svc, `transaction-app-store-${id}`)).map((event) => event.type)).to.deep.equal(['TransactionLinked', 'TransactionLinkRefused']);
      expect((await listing(svc, u('first'))).links.map((link: any) => link.transaction_id)).to.deep.equal([id]);
      const second = await listing(svc, u('second'));
      expect(second.links).to.deep.equal([]);
      expect(second.refused_attempts).to.have.length(1);
      expect(second.refused_attempts[0]).to.include({ provider: 'app-store', transaction_id: id, linked_app_user_id: u('first') });
    });

    it('answers 404 NOT_FOUND.USER for an unknown user, and records nothing', async () => {
      const answer = await appStore(u('nobody'), { original_transaction_id: '5000000003' });
      expect(answer.status).to.equal(404);
      expect(answer.body.errors[0]).to.include({ code: 'NOT_FOUND.USER', source: 'path:/app_user_id' });
      expect((await googlePlay(u('nobody'), { purchase_token: 'x' })).body.errors[0].code).to.equal('NOT_FOUND.USER');
      expect(await linkEvents(svc, 'transaction-app-store-5000000003')).to.deep.equal([]);
    });

    it('answers 400 for bad bodies, naming the field', async () => {
      await createUser(svc, u('bad'));
      const cases: [(body: unknown) => ReturnType<typeof appStore>, unknown, string, string | null][] = [
        [(body) => appStore(u('bad'), body), {}, 'BAD_REQUEST', '/original_transaction_id'],
        [(body) => appStore(u('bad'), body), { original_transaction_id: 2000000001 }, 'BAD_REQUEST', '/original_transaction_id'],
        [(body) => appStore(u('bad'), body), { original_transaction_id: '' }, 'BAD_REQUEST', '/original_transaction_id'],
        [(body) => appStore(u('bad'), body), { original_transaction_id: '12a4' }, 'BAD_REQUEST', '/original_transaction_id'],
        [(body) => appStore(u('bad'), body), { original_transaction_id: '1'.repeat(33) }, 'BAD_REQUEST', '/original_transaction_id'],
        [(body) => appStore(u('bad'), body), { original_transaction_id: '1', app_account_token: 'not-a-uuid' }, 'BAD_REQUEST', '/app_account_token'],
        [(body) => appStore(u('bad'), body), { original_transaction_id: '1', app_account_token: 7 }, 'BAD_REQUEST', '/app_account_token'],
        [(body) => appStore(u('bad'), body), [], 'BODY_INVALID', null],
        [(body) => googlePlay(u('bad'), body), {}, 'BAD_REQUEST', '/purchase_token'],
        [(body) => googlePlay(u('bad'), body), { purchase_token: '' }, 'BAD_REQUEST', '/purchase_token'],
        [(body) => googlePlay(u('bad'), body), { purchase_token: 'x'.repeat(4097) }, 'BAD_REQUEST', '/purchase_token'],
        [(body) => googlePlay(u('bad'), body), { purchase_token: 'x', obfuscated_external_account_id: 5 }, 'BAD_REQUEST', '/obfuscated_external_account_id'],
      ];
      for (const [send, body, code, source] of cases) {
        const answer = await send(body);
        expect(answer.status, JSON.stringify(body)).to.equal(400);
        expect(answer.body.errors[0], JSON.stringify(body)).to.include({ code, source });
      }
      expect(await listing(svc, u('bad'))).to.deep.equal({ app_user_id: u('bad'), links: [], refused_attempts: [] });
    });

    it('links a transaction to exactly one of dozens of users racing for it', async () => {
      const racers = Array.from({ length: 40 }, (_, index) => u(`racer-${index}`));
      for (const racer of racers) await createUser(svc, racer);
      const id = `${mount ? 6 : 7}000000004`;
      const answers = await Promise.all(racers.map((racer) => appStore(racer, { original_transaction_id: id })));
      expect(answers.map((answer) => answer.status)).to.deep.equal(racers.map(() => 204));
      const recorded = await linkEvents(svc, `transaction-app-store-${id}`);
      const linked = recorded.filter((event) => event.type === 'TransactionLinked');
      expect(linked).to.have.length(1);
      expect(recorded.filter((event) => event.type === 'TransactionLinkRefused')).to.have.length(racers.length - 1);
      const winner = linked[0]!.data.app_user_id as string;
      const listings = await Promise.all(racers.map((racer) => listing(svc, racer)));
      expect(listings.filter((one) => one.links.length === 1).map((one) => one.app_user_id)).to.deep.equal([winner]);
      expect(listings.filter((one) => one.refused_attempts.length === 1 && one.refused_attempts[0].linked_app_user_id === winner)).to.have.length(
        racers.length - 1,
      );
    });

    if (mount === '') {
      it('lists links for the secret key only; unknown user → 404', async () => {
        const forbidden = await svc.call('GET', `/admin/users/${u('ann')}/transactions`);
        expect(forbidden.status).to.equal(403);
        const unknown = await svc.admin('GET', '/admin/users/nobody-at-all/transactions');
        expect(unknown.status).to.equal(404);
        expect(unknown.body.errors[0].code).to.equal('NOT_FOUND.USER');
      });
    }
  });
}

describe('API: revenue notifications find their user through a linked transaction (SPEC §11 + §15)', () => {
  let svc: TestService;
  let chain: AppleTestChain;
  const recorded = async (user: string) =>
    (await events(svc, `stream=user-${user}`)).filter((event) => ['PurchaseRecorded', 'RenewalRecorded'].includes(event.type));
  const sendApple = (body: unknown) => post(svc, '/webhooks/app-store', JSON.stringify(body));
  const sendPlay = (messageId: string, notification: Record<string, unknown>) =>
    post(svc, '/webhooks/google-play?token=play-push-secret', pubSubPush(messageId, { version: '1.0', packageName: 'com.example.referrals', ...notification }));

  before(async () => {
    chain = makeAppleTestChain();
    svc = await startTestService({
      env: {
        APPLE_ROOT_CERTS: chain.rootPath,
        APPLE_BUNDLE_ID: BUNDLE_ID,
        APPLE_ENVIRONMENT: 'Sandbox',
        GOOGLE_PLAY_PACKAGE_NAME: 'com.example.referrals',
        GOOGLE_PLAY_PUSH_TOKEN: 'play-push-secret',
      },
    });
  });
  after(async () => svc.stop());

  it('matches an App Store notification without appAccountToken through the originalTransactionId the app linked (the SDK route)', async () => {
    await createUser(svc, 'linked-apple');
    expect((await svc.call('POST', '/compat/winwinkit/users/linked-apple/transactions/app-store', { original_transaction_id: '8100000001' })).status).to.equal(
      204,
    );
    const body = await appleNotification(chain, 'SUBSCRIBED', appleTransaction({ transactionId: '8100000001', originalTransactionId: '8100000001' }), {
      subtype: 'INITIAL_BUY',
    });
    expect((await sendApple(body)).body.data.status).to.equal('applied');
    const [purchase] = await recorded('linked-apple');
    expect(purchase!.data).to.include({ provider: 'app-store', original_transaction_id: '8100000001' });
  });

  it('applies an unmatched App Store notification once the app links its transaction', async () => {
    await createUser(svc, 'late-link');
    const body = await appleNotification(chain, 'SUBSCRIBED', appleTransaction({ transactionId: '8200000002', originalTransactionId: '8200000001' }));
    expect((await sendApple(body)).body.data.status).to.equal('unmatched');
    expect((await svc.call('POST', '/users/late-link/transactions/app-store', { original_transaction_id: '8200000001' })).status).to.equal(204);
    await eventually(async () => expect(await recorded('late-link')).to.have.length(1));
    expect((await sendApple(body)).body.data.status).to.equal('duplicate');
  });

  it('does not move a notification to a user whose link was refused', async () => {
    await createUser(svc, 'owner');
    await createUser(svc, 'intruder');
    await svc.call('POST', '/users/owner/transactions/app-store', { original_transaction_id: '8300000001' });
    await svc.call('POST', '/users/intruder/transactions/app-store', { original_transaction_id: '8300000001' });
    const body = await appleNotification(chain, 'SUBSCRIBED', appleTransaction({ transactionId: '8300000001', originalTransactionId: '8300000001' }));
    expect((await sendApple(body)).body.data.status).to.equal('applied');
    expect(await recorded('owner')).to.have.length(1);
    expect(await recorded('intruder')).to.have.length(0);
  });

  it('matches a Google Play notification without obfuscatedExternalAccountId through the purchase token the app linked', async () => {
    await createUser(svc, 'linked-play');
    const purchaseToken = `play-token-${randomUUID()}`;
    expect((await svc.call('POST', '/users/linked-play/transactions/google-play', { purchase_token: purchaseToken })).status).to.equal(204);
    const answer = await sendPlay('link-m-1', { subscriptionNotification: { version: '1.0', notificationType: 4, purchaseToken, subscriptionId: 'premium' } });
    expect(answer.body.data.status).to.equal('applied');
    const [purchase] = await recorded('linked-play');
    expect(purchase!.data).to.include({ provider: 'google-play', original_transaction_id: purchaseToken });
  });
});
