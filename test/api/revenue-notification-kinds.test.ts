import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { DEFAULT_ACCOUNT_TOKEN_NAMESPACE } from '../../src/config.js';
import { accountToken } from '../../src/domain/revenue/account-token.js';
import { appleNotification, appleTransaction, BUNDLE_ID, makeAppleTestChain, type AppleTestChain } from '../support/apple-signing.js';
import { createUser, events, never, putProgram, putReward } from '../support/fixtures.js';
import { pubSubPush } from '../support/google-oidc.js';
import { invoicePaid, post, REVENUECAT_AUTH, rcEvent, revenueCat, STRIPE_SECRET, stripeEvent } from '../support/revenue-senders.js';
import { startTestService, type TestService } from '../support/test-service.js';

/**
 * What each notification means (README, "What each notification means"; SPEC §11), type by type,
 * for every provider: each is sent on a user of its own, and the revenue events the user's stream
 * then holds are compared. A type that means nothing for revenue is kept as `applied` and records
 * nothing.
 */
const REVENUE_TYPES = ['PurchaseRecorded', 'RenewalRecorded', 'RefundRecorded', 'SubscriptionExpired'];
const recorded = async (svc: TestService, user: string) => (await events(svc, `stream=user-${user}`)).filter((event) => REVENUE_TYPES.includes(event.type));
const token = (user: string) => accountToken(user, DEFAULT_ACCOUNT_TOKEN_NAMESPACE);
const PLAY_TOKEN = 'kinds-shared-token';

describe('API: what each revenue notification means (README table; SPEC §11), type by type', () => {
  let svc: TestService;
  let chain: AppleTestChain;

  before(async () => {
    chain = makeAppleTestChain();
    svc = await startTestService({
      env: {
        APPLE_ROOT_CERTS: chain.rootPath,
        APPLE_BUNDLE_ID: BUNDLE_ID,
        APPLE_ENVIRONMENT: 'Sandbox',
        GOOGLE_PLAY_PACKAGE_NAME: 'com.example.referrals',
        GOOGLE_PLAY_PUSH_TOKEN: PLAY_TOKEN,
        REVENUECAT_WEBHOOK_AUTH: REVENUECAT_AUTH,
        STRIPE_WEBHOOK_SECRET: STRIPE_SECRET,
        CONVERSIONS_FROM: 'verified',
      },
    });
  });
  after(async () => svc.stop());

  /** A program, so a referrer has a code to claim; a conversion is a claimer's (the same PUTs each time). */
  async function conversionProgram() {
    await putReward(svc, 'kinds-coins', { kind: 'credit', name: 'Coins', credits: 10 });
    await putProgram(svc, 'kinds', {
      rewards: { sender: [{ reward_key: 'kinds-coins', activation: { variant: 'conversion', amount: 1, limit: 0 }, deactivation: never }], receiver: [] },
    });
  }

  it('App Store: SUBSCRIBED/ONE_TIME_CHARGE purchase, DID_RENEW renewal, REFUND/REVOKE refund, EXPIRED/GRACE_PERIOD_EXPIRED expiry, others nothing', async () => {
    for (const [type, expected] of [
      ['SUBSCRIBED', 'PurchaseRecorded'],
      ['ONE_TIME_CHARGE', 'PurchaseRecorded'],
      ['DID_RENEW', 'RenewalRecorded'],
      ['REFUND', 'RefundRecorded'],
      ['REVOKE', 'RefundRecorded'],
      ['EXPIRED', 'SubscriptionExpired'],
      ['GRACE_PERIOD_EXPIRED', 'SubscriptionExpired'],
      ['DID_CHANGE_RENEWAL_STATUS', null],
      ['PRICE_INCREASE', null],
    ] as const) {
      const user = `kinds-apple-${type.toLowerCase()}`;
      await createUser(svc, user);
      const transaction = appleTransaction({ transactionId: `t-${user}`, originalTransactionId: `o-${user}`, appAccountToken: token(user) });
      const answer = await post(svc, '/webhooks/app-store', JSON.stringify(await appleNotification(chain, type, transaction)));
      expect(answer.body, type).to.deep.equal({ data: { status: 'applied' } });
      expect(
        (await recorded(svc, user)).map((event) => event.type),
        type,
      ).to.deep.equal(expected === null ? [] : [expected]);
    }
  });

  it('App Store: a free trial, a purchase shared by a family member and one at price 0 are recorded as unpaid and convert nothing under verified; a paid purchase converts', async () => {
    await conversionProgram();
    const referrer = await createUser(svc, 'kinds-apple-referrer');
    for (const [user, fields, converts] of [
      ['kinds-apple-trial', { offerDiscountType: 'FREE_TRIAL' }, false],
      ['kinds-apple-family', { inAppOwnershipType: 'FAMILY_SHARED' }, false],
      ['kinds-apple-free', { price: 0 }, false],
      ['kinds-apple-paid', {}, true],
    ] as const) {
      await createUser(svc, user);
      const claim = await svc.call('POST', `/users/${user}/claim-code`, { code: referrer.referral_code });
      expect(claim.status, JSON.stringify(claim.body)).to.equal(200);
      const transaction = appleTransaction({ transactionId: `t-${user}`, originalTransactionId: `o-${user}`, appAccountToken: token(user), ...fields });
      const answer = await post(
        svc,
        '/webhooks/app-store',
        JSON.stringify(await appleNotification(chain, 'SUBSCRIBED', transaction, { subtype: 'INITIAL_BUY' })),
      );
      expect(answer.body.data.status).to.equal('applied');
      expect((await recorded(svc, user))[0]!.data.is_trial, user).to.equal(!converts);
      expect(await events(svc, `stream=user-${user}&type=UserConverted`), user).to.have.length(converts ? 1 : 0);
    }
  });

  it("App Store: the notification's account token is matched before a transaction already linked to another user", async () => {
    await createUser(svc, 'kinds-apple-first');
    await createUser(svc, 'kinds-apple-second');
    const first = appleTransaction({ transactionId: 't-shared-1', originalTransactionId: 'o-shared', appAccountToken: token('kinds-apple-first') });
    expect((await post(svc, '/webhooks/app-store', JSON.stringify(await appleNotification(chain, 'SUBSCRIBED', first)))).body.data.status).to.equal('applied');
    // The same original transaction, now carrying the second user's token: the token decides.
    const renewal = appleTransaction({ transactionId: 't-shared-2', originalTransactionId: 'o-shared', appAccountToken: token('kinds-apple-second') });
    expect((await post(svc, '/webhooks/app-store', JSON.stringify(await appleNotification(chain, 'DID_RENEW', renewal)))).body.data.status).to.equal('applied');
    expect((await recorded(svc, 'kinds-apple-first')).map((event) => event.type)).to.deep.equal(['PurchaseRecorded']);
    expect((await recorded(svc, 'kinds-apple-second')).map((event) => event.type)).to.deep.equal(['RenewalRecorded']);
  });

  it('Google Play: PURCHASED purchase, RECOVERED/RENEWED/RESTARTED renewal, REVOKED and voided refund, EXPIRED expiry, a one-time purchase, others nothing', async () => {
    const play = (user: string, fields: Record<string, unknown>) =>
      post(
        svc,
        `/webhooks/google-play?token=${PLAY_TOKEN}`,
        pubSubPush(`m-${user}`, {
          version: '1.0',
          packageName: 'com.example.referrals',
          eventTimeMillis: String(Date.now()),
          obfuscatedExternalAccountId: user,
          ...fields,
        }),
      );
    const subscription = (notificationType: number, user: string) => ({
      subscriptionNotification: { version: '1.0', notificationType, purchaseToken: `pt-${user}`, subscriptionId: 'premium' },
    });
    for (const [name, fields, expected] of [
      ['purchased', (user: string) => subscription(4, user), 'PurchaseRecorded'],
      ['recovered', (user: string) => subscription(1, user), 'RenewalRecorded'],
      ['renewed', (user: string) => subscription(2, user), 'RenewalRecorded'],
      ['restarted', (user: string) => subscription(7, user), 'RenewalRecorded'],
      ['revoked', (user: string) => subscription(12, user), 'RefundRecorded'],
      ['expired', (user: string) => subscription(13, user), 'SubscriptionExpired'],
      ['canceled', (user: string) => subscription(3, user), null],
      ['voided', (user: string) => ({ voidedPurchaseNotification: { purchaseToken: `pt-${user}`, orderId: 'GPA.1' } }), 'RefundRecorded'],
      [
        'one-time',
        (user: string) => ({ oneTimeProductNotification: { version: '1.0', notificationType: 1, purchaseToken: `pt-${user}`, sku: 'coins' } }),
        'PurchaseRecorded',
      ],
      [
        'one-time-canceled',
        (user: string) => ({ oneTimeProductNotification: { version: '1.0', notificationType: 2, purchaseToken: `pt-${user}`, sku: 'coins' } }),
        null,
      ],
    ] as const) {
      const user = `kinds-play-${name}`;
      await createUser(svc, user);
      expect((await play(user, fields(user))).body, name).to.deep.equal({ data: { status: 'applied' } });
      expect(
        (await recorded(svc, user)).map((event) => event.type),
        name,
      ).to.deep.equal(expected === null ? [] : [expected]);
    }
  });

  it('RevenueCat: INITIAL_PURCHASE/NON_RENEWING_PURCHASE purchase, RENEWAL renewal, EXPIRATION expiry, CANCELLATION a refund only for CUSTOMER_SUPPORT', async () => {
    for (const [name, type, extra, expected] of [
      ['initial', 'INITIAL_PURCHASE', {}, 'PurchaseRecorded'],
      ['non-renewing', 'NON_RENEWING_PURCHASE', {}, 'PurchaseRecorded'],
      ['renewal', 'RENEWAL', {}, 'RenewalRecorded'],
      ['expiration', 'EXPIRATION', {}, 'SubscriptionExpired'],
      ['refund', 'CANCELLATION', { cancel_reason: 'CUSTOMER_SUPPORT' }, 'RefundRecorded'],
      ['unsubscribe', 'CANCELLATION', { cancel_reason: 'UNSUBSCRIBE' }, null],
      ['billing-issue', 'BILLING_ISSUE', {}, null],
    ] as const) {
      const user = `kinds-rc-${name}`;
      await createUser(svc, user);
      expect((await revenueCat(svc, rcEvent(`rc-kinds-${name}`, type, user, extra))).body, name).to.deep.equal({ data: { status: 'applied' } });
      expect(
        (await recorded(svc, user)).map((event) => event.type),
        name,
      ).to.deep.equal(expected === null ? [] : [expected]);
    }
  });

  it('RevenueCat: a trial, a promotional grant and a purchase at price 0 are recorded as unpaid and convert nothing under verified; a paid purchase converts', async () => {
    await conversionProgram();
    const referrer = await createUser(svc, 'kinds-rc-referrer');
    for (const [user, type, extra, converts] of [
      ['kinds-rc-trial', 'INITIAL_PURCHASE', { period_type: 'TRIAL' }, false],
      ['kinds-rc-promotional', 'NON_RENEWING_PURCHASE', { store: 'PROMOTIONAL', price_in_purchased_currency: 0 }, false],
      ['kinds-rc-promotional-unpriced', 'NON_RENEWING_PURCHASE', { store: 'PROMOTIONAL', price_in_purchased_currency: null }, false],
      ['kinds-rc-free', 'INITIAL_PURCHASE', { price_in_purchased_currency: 0 }, false],
      ['kinds-rc-paid', 'INITIAL_PURCHASE', { store: 'APP_STORE' }, true],
    ] as const) {
      await createUser(svc, user);
      const claim = await svc.call('POST', `/users/${user}/claim-code`, { code: referrer.referral_code });
      expect(claim.status, JSON.stringify(claim.body)).to.equal(200);
      expect((await revenueCat(svc, rcEvent(`rc-${user}`, type, user, extra))).body, user).to.deep.equal({ data: { status: 'applied' } });
      expect((await recorded(svc, user))[0]!.data.is_trial, user).to.equal(!converts);
      expect(await events(svc, `stream=user-${user}&type=UserConverted`), user).to.have.length(converts ? 1 : 0);
    }
  });

  it("RevenueCat: a refund's negative price is recorded as its magnitude; decimal prices are rounded to minor units, not cut", async () => {
    await createUser(svc, 'kinds-rc-prices');
    const refund = rcEvent('rc-kinds-negative', 'CANCELLATION', 'kinds-rc-prices', { cancel_reason: 'CUSTOMER_SUPPORT', price_in_purchased_currency: -4.99 });
    expect((await revenueCat(svc, refund)).body.data.status).to.equal('applied');
    // 19.99 × 100 is 1998.9999999999998 in binary floating point.
    const purchase = rcEvent('rc-kinds-decimal', 'INITIAL_PURCHASE', 'kinds-rc-prices', { price_in_purchased_currency: 19.99, transaction_id: 'tx-decimal' });
    expect((await revenueCat(svc, purchase)).body.data.status).to.equal('applied');
    const [refunded, bought] = await recorded(svc, 'kinds-rc-prices');
    expect(refunded!.data).to.include({ kind: 'refund', price_minor: 499, currency: 'USD' });
    expect(bought!.data).to.include({ kind: 'purchase', price_minor: 1999, currency: 'USD' });
  });

  it('RevenueCat matching, first that applies: app_user_id, then original_app_user_id, then aliases', async () => {
    for (const user of ['kinds-rc-current', 'kinds-rc-original', 'kinds-rc-alias-only']) await createUser(svc, user);
    const both = rcEvent('rc-kinds-both', 'INITIAL_PURCHASE', 'kinds-rc-current', {
      original_app_user_id: 'kinds-rc-original',
      aliases: ['kinds-rc-original'],
    });
    expect((await revenueCat(svc, both)).body.data.status).to.equal('applied');
    expect(await recorded(svc, 'kinds-rc-current')).to.have.length(1);
    expect(await recorded(svc, 'kinds-rc-original')).to.have.length(0);
    const original = rcEvent('rc-kinds-original', 'INITIAL_PURCHASE', 'kinds-rc-unknown', {
      original_app_user_id: 'kinds-rc-original',
      aliases: ['kinds-rc-current'],
    });
    expect((await revenueCat(svc, original)).body.data.status).to.equal('applied');
    expect(await recorded(svc, 'kinds-rc-original')).to.have.length(1);
    expect(await recorded(svc, 'kinds-rc-current')).to.have.length(1);
    const alias = rcEvent('rc-kinds-alias', 'INITIAL_PURCHASE', '$RCAnonymousID:unknown', {
      original_app_user_id: '$RCAnonymousID:unknown',
      aliases: ['$RCAnonymousID:unknown', 'kinds-rc-alias-only'],
    });
    expect((await revenueCat(svc, alias)).body.data.status).to.equal('applied');
    expect(await recorded(svc, 'kinds-rc-alias-only')).to.have.length(1);
  });

  it('Stripe: a first invoice is a purchase, a cycle invoice a renewal (a copy under another event id counts once), and other events record nothing', async () => {
    await createUser(svc, 'kinds-stripe', { payment_customer_id: 'cus_kinds' });
    expect((await stripeEvent(svc, invoicePaid('kinds1', 'cus_kinds'))).body.data.status).to.equal('applied');
    const cycle = invoicePaid('kinds2', 'cus_kinds', 999, 'subscription_cycle');
    expect((await stripeEvent(svc, cycle)).body.data.status).to.equal('applied');
    expect((await stripeEvent(svc, { ...cycle, id: 'evt_kinds2-again' })).body.data.status).to.equal('applied');
    const customer = { id: 'evt_kinds_customer', type: 'customer.created', object: { id: 'cus_kinds', object: 'customer' } };
    expect((await stripeEvent(svc, customer)).body).to.deep.equal({ data: { status: 'applied' } });
    const types = await recorded(svc, 'kinds-stripe');
    expect(types.map((event) => [event.type, event.data.repeats_purchase === true])).to.deep.equal([
      ['PurchaseRecorded', false],
      ['RenewalRecorded', false],
      ['RenewalRecorded', true],
    ]);
    const row = (await svc.admin('GET', '/admin/webhooks/inbound?limit=1000&provider=stripe')).body.data.notifications.find(
      (item: any) => item.id === 'evt_kinds_customer',
    );
    expect(row).to.include({ status: 'applied' });
  });

  it('the account token of a mixed-case app_user_id is the UUIDv5 of the id as written (SPEC §11), and matches', async () => {
    const user = `Kinds-MiXed-${randomUUID().slice(0, 4)}`;
    await createUser(svc, user);
    const answered = (await svc.admin('GET', `/admin/users/${user}/account-token`)).body.data.account_token;
    expect(answered).to.equal(token(user));
    expect(answered).to.not.equal(token(user.toLowerCase()));
    const transaction = appleTransaction({ transactionId: `t-${user}`, originalTransactionId: `o-${user}`, appAccountToken: answered });
    expect((await post(svc, '/webhooks/app-store', JSON.stringify(await appleNotification(chain, 'SUBSCRIBED', transaction)))).body.data.status).to.equal(
      'applied',
    );
    expect(await recorded(svc, user)).to.have.length(1);
  });
});
