import { expect } from 'chai';
import { describe, it } from 'mocha';
import { ANALYTICS_DAILY, analyticsProjection } from '../../../projections/analytics.js';
import { attributionProjection } from '../../../projections/attribution.js';
import { CLAWBACK_GRANTS, INBOUND, REVENUE_LINKS, REVENUE_PENDING, revenueIndexProjection } from '../../../projections/revenue-index.js';
import { DEFAULT_ACCOUNT_TOKEN_NAMESPACE } from '../../../src/config.js';
import { accountToken } from '../../../src/domain/revenue/account-token.js';
import type { RevenueNotification } from '../../../src/domain/revenue/revenue-notification.js';
import { codeClaimed, event, project, registered, rewardGranted, T0, TestLog } from '../../support/events.js';

const paid: RevenueNotification = {
  provider: 'app-store',
  notification_id: 'n-1',
  provider_type: 'SUBSCRIBED',
  kind: 'purchase',
  occurred_at: T0.toISOString(),
  transaction_id: 't-1',
  original_transaction_id: 'o-1',
  product_id: 'p',
  price_minor: 999,
  currency: 'USD',
  period_start: null,
  period_end: null,
  is_trial: false,
  match: { app_user_ids: [], account_token: accountToken('ann', DEFAULT_ACCOUNT_TOKEN_NAMESPACE), customer_id: null, linked_transaction: 'o-1' },
};
const { match: _match, ...fact } = paid;
const attribution = { code: 'BOB234', type: 'referral' as const, owner_id: 'bob', program_id: 'prog' };

describe('revenue read models', () => {
  it("revenue index: a user's account-token link is made in the namespace the index is built with, not in a process-wide one", () => {
    const log = new TestLog();
    log.append('user-ann', registered('ann'));
    const custom = 'a8098c1a-f86e-11da-bd1a-00112444be1e';
    const tokenLinks = (namespace: string) =>
      [...project(revenueIndexProjection(namespace), log.events).keys()].filter((key) => key.startsWith(`${REVENUE_LINKS}/token:`));
    expect(tokenLinks(custom)).to.deep.equal([`${REVENUE_LINKS}/token:${accountToken('ann', custom)}`]);
    expect(tokenLinks(DEFAULT_ACCOUNT_TOKEN_NAMESPACE)).to.deep.equal([`${REVENUE_LINKS}/token:${accountToken('ann', DEFAULT_ACCOUNT_TOKEN_NAMESPACE)}`]);
  });

  it('revenue index: an unmatched notification is pending under each of its keys, then applied with its event ids; links and clawback grants', () => {
    const log = new TestLog();
    log.append('inbound-app-store-n-1', event('NotificationReceived', { received_at: T0.toISOString(), notification: paid, app_user_id: null }));
    const registeredAnn = log.append('user-ann', registered('ann'));
    const purchase = log.append(
      'user-ann',
      event('PurchaseRecorded', { ...fact, recorded_at: T0.toISOString(), attribution: null, refunded_before: false, expired_before: false }),
    );
    log.append(
      'user-ann',
      rewardGranted({
        grant_id: 'g1',
        reward_key: 'coins',
        credits: 5,
        balance_after: 5,
        cause: { type: 'conversion', code: 'BOB234' },
        clawback: 'on_refund',
      }),
    );
    log.append(
      'user-bob',
      rewardGranted({
        grant_id: 'g2',
        reward_key: 'coins',
        credits: 5,
        balance_after: 5,
        cause: { type: 'referrals', variant: 'conversion', count: 1, claimer: 'ann', program_id: 'prog' },
        clawback: 'on_refund',
      }),
    );
    log.append(
      'user-bob',
      rewardGranted({
        grant_id: 'g3',
        reward_key: 'coins',
        credits: 5,
        balance_after: 10,
        cause: { type: 'referrals', variant: 'claim', count: 1, claimer: 'ann', program_id: 'prog' },
        clawback: 'on_refund',
      }),
    );
    const docs = project(revenueIndexProjection(DEFAULT_ACCOUNT_TOKEN_NAMESPACE), log.events);
    expect(docs.get(`${INBOUND}/app-store:n-1`)).to.deep.include({ id: 'n-1', status: 'applied', app_user_id: 'ann', event_ids: [purchase[0]!.id] });
    expect([...docs.keys()].filter((key) => key.startsWith(`${REVENUE_PENDING}/`))).to.have.length(2);
    expect(docs.get(`${REVENUE_LINKS}/token:${paid.match.account_token}`)).to.deep.equal({ app_user_id: 'ann' });
    expect(docs.get(`${REVENUE_LINKS}/txn:app-store:o-1`)).to.deep.equal({ app_user_id: 'ann' });
    expect(registeredAnn).to.have.length(1);
    const grants = [...docs.entries()].filter(([key]) => key.startsWith(`${CLAWBACK_GRANTS}/`)).map(([, doc]) => doc);
    expect(grants.map((doc) => [doc.holder, doc.grant_id, doc.claimer])).to.deep.equal([
      ['ann', 'g1', 'ann'],
      ['bob', 'g2', 'ann'],
    ]);
  });

  it('attribution: claims, conversions, refunds and revenue per group and day', () => {
    const log = new TestLog();
    log.append('user-ann', codeClaimed({ claim_id: 'c1', code: 'BOB234', owner_id: 'bob', program_id: 'prog', claimed_at: T0.toISOString() }));
    log.append(
      'user-ann',
      event('UserConverted', {
        converted_at: T0.toISOString(),
        referred_by: { claim_id: 'c1', code: 'BOB234', type: 'referral', owner_id: 'bob' },
        source: 'verified',
        purchase: null,
        program_id: 'prog',
      }),
    );
    // The provider dates the money 3 days back: it counts on the day the service recorded it, as in analytics.
    const backdated = new Date(T0.getTime() - 3 * 86_400_000).toISOString();
    log.append(
      'user-ann',
      event('PurchaseRecorded', { ...fact, occurred_at: backdated, recorded_at: T0.toISOString(), attribution, refunded_before: false, expired_before: false }),
    );
    log.append(
      'user-ann',
      event('RefundRecorded', { ...fact, kind: 'refund', occurred_at: backdated, recorded_at: T0.toISOString(), attribution, reverses_conversion: true }),
    );
    const docs = project(attributionProjection, log.events);
    const day = T0.toISOString().slice(0, 10);
    for (const [dimension, group] of [
      ['code', 'BOB234'],
      ['program', 'prog'],
    ]) {
      expect(docs.get(`attribution/${dimension}\u001f${group}\u001f${day}`)).to.deep.include({
        claims: 1,
        conversions: 1,
        refunds: 1,
        gross: { USD: 999 },
        refunded: { USD: 999 },
      });
    }
    expect([...docs.keys()].some((key) => key.includes('affiliate'))).to.equal(false);
  });

  it('attribution: an affiliate code counts for its code and its affiliate (group_by=affiliate), and no program', () => {
    const log = new TestLog();
    const viaAffiliate = { code: 'INFLUENCER', type: 'affiliate' as const, owner_id: 'aff-1', program_id: null };
    log.append('user-ann', codeClaimed({ claim_id: 'c1', ...viaAffiliate, claimed_at: T0.toISOString() }));
    log.append(
      'user-ann',
      event('UserConverted', {
        converted_at: T0.toISOString(),
        referred_by: { claim_id: 'c1', code: 'INFLUENCER', type: 'affiliate', owner_id: 'aff-1' },
        source: 'verified',
        purchase: null,
        program_id: null,
      }),
    );
    log.append(
      'user-ann',
      event('PurchaseRecorded', { ...fact, recorded_at: T0.toISOString(), attribution: viaAffiliate, refunded_before: false, expired_before: false }),
    );
    log.append(
      'user-ann',
      event('RefundRecorded', { ...fact, kind: 'refund', recorded_at: T0.toISOString(), attribution: viaAffiliate, reverses_conversion: true }),
    );
    const docs = project(attributionProjection, log.events);
    const day = T0.toISOString().slice(0, 10);
    for (const [dimension, group] of [
      ['code', 'INFLUENCER'],
      ['affiliate', 'aff-1'],
    ]) {
      expect(docs.get(`attribution/${dimension}\u001f${group}\u001f${day}`), dimension).to.deep.include({
        claims: 1,
        conversions: 1,
        refunds: 1,
        gross: { USD: 999 },
        refunded: { USD: 999 },
      });
    }
    expect([...docs.keys()].some((key) => key.includes('program'))).to.equal(false);
  });

  it('attribution: a promo code counts for its code only, never as an affiliate (group_by=affiliate) or a program', () => {
    const log = new TestLog();
    const viaPromo = { code: 'SPRING', type: 'promo' as const, owner_id: 'SPRING', program_id: null };
    log.append('user-ann', codeClaimed({ claim_id: 'c1', ...viaPromo, claimed_at: T0.toISOString() }));
    log.append(
      'user-ann',
      event('PurchaseRecorded', { ...fact, recorded_at: T0.toISOString(), attribution: viaPromo, refunded_before: false, expired_before: false }),
    );
    const docs = project(attributionProjection, log.events);
    const groups = [...docs.keys()].filter((key) => !key.includes('total')).map((key) => key.split('\u001f').slice(0, 2).join(' '));
    expect([...new Set(groups)]).to.deep.equal(['attribution/code SPRING']);
  });

  it('attribution: a time written with an offset counts on its UTC day, the day analytics counts it on', () => {
    const log = new TestLog();
    // 23:30 at UTC-5 is 04:30 the next day in UTC.
    const claimedAt = '2026-11-01T23:30:00-05:00';
    log.append('user-ann', codeClaimed({ claim_id: 'c1', code: 'BOB234', owner_id: 'bob', program_id: 'prog', claimed_at: claimedAt }));
    const days = (docs: Map<string, unknown>, prefix: string) => [
      ...new Set([...docs.keys()].filter((key) => key.startsWith(prefix)).map((key) => key.slice(-10))),
    ];
    expect(days(project(attributionProjection, log.events), 'attribution/code')).to.deep.equal(['2026-11-02']);
    expect(days(project(analyticsProjection, log.events), `${ANALYTICS_DAILY}/`)).to.deep.equal(['2026-11-02']);
  });

  it('attribution: one all-time total per group, summing every day', () => {
    const log = new TestLog();
    const later = new Date(T0.getTime() + 40 * 86_400_000).toISOString();
    log.append('user-ann', codeClaimed({ claim_id: 'c1', code: 'BOB234', owner_id: 'bob', program_id: 'prog', claimed_at: T0.toISOString() }));
    log.append('user-ann', event('PurchaseRecorded', { ...fact, recorded_at: T0.toISOString(), attribution, refunded_before: false, expired_before: false }));
    log.append(
      'user-ann',
      event('RenewalRecorded', { ...fact, kind: 'renewal', recorded_at: later, attribution, refunded_before: false, expired_before: false }),
    );
    const docs = project(attributionProjection, log.events);
    expect(docs.get('attribution_totals/code\u001fBOB234')).to.deep.equal({
      dimension: 'code',
      group: 'BOB234',
      claims: 1,
      conversions: 0,
      refunds: 0,
      gross: { USD: 1998 },
      refunded: {},
    });
    expect(docs.get('attribution_totals/program\u001fprog')).to.deep.include({ claims: 1, gross: { USD: 1998 } });
    expect(docs.get(`attribution/code\u001fBOB234\u001f${later.slice(0, 10)}`)).to.deep.include({ day: later.slice(0, 10), claims: 0, gross: { USD: 999 } });
  });
});
