import { expect } from 'chai';
import { describe, it } from 'mocha';
import { codeToWire, dataToWire, kindsToWire, upsertUserFromWire } from '../../../src/http/compat/winwinkit-wire.js';

const six = (fill: (kind: string) => unknown[] = () => []) =>
  Object.fromEntries(['basic', 'credit', 'offer_code', 'store_promo_code', 'partner_entitlement', 'partner_offering'].map((kind) => [kind, fill(kind)]));

describe('http: the WinWinKit wire mapping (SPEC §15)', () => {
  it('renames stripe_customer_id to the native payment_customer_id, and ignores a native name sent on the wire', () => {
    expect(upsertUserFromWire({ app_user_id: 'a', stripe_customer_id: 'cus_1', payment_customer_id: 'ignored' })).to.deep.equal({
      app_user_id: 'a',
      payment_customer_id: 'cus_1',
    });
    expect(upsertUserFromWire({ app_user_id: 'a', stripe_customer_id: null })).to.deep.equal({ app_user_id: 'a', payment_customer_id: null });
    expect(upsertUserFromWire({ app_user_id: 'a', payment_customer_id: 'x' })).to.deep.equal({ app_user_id: 'a' });
  });

  it('renames the three kind keys in order, and nothing inside metadata', () => {
    const wire = kindsToWire(six((kind) => [{ reward: { key: kind, metadata: { store_promo_code: 1, payment_customer_id: 2 } } }]));
    expect(Object.keys(wire)).to.deep.equal(['basic', 'credit', 'offer_code', 'googleplay_promo_code', 'revenuecat_entitlement', 'revenuecat_offering']);
    expect((wire.googleplay_promo_code as any)[0].reward).to.deep.equal({ key: 'store_promo_code', metadata: { store_promo_code: 1, payment_customer_id: 2 } });
  });

  it('maps a user: customer id in place, every rewards object and the program, offer-code values with a link string', () => {
    const user = {
      app_user_id: 'a',
      metadata: { payment_customer_id: 'kept' },
      payment_customer_id: 'cus_1',
      rewards: {
        active: six((kind) => (kind === 'offer_code' ? [{ value: { value: 'C', link: null, expires_at: 'x' } }] : [])),
        expired: six(),
      },
      referral_program: { id: 'p', rewards: { sender: six(), receiver: six() } },
    };
    const { user: wire, rewards_granted } = dataToWire({ user, rewards_granted: six() }) as any;
    expect(Object.keys(wire)).to.deep.equal(['app_user_id', 'metadata', 'stripe_customer_id', 'rewards', 'referral_program']);
    expect(wire.metadata).to.deep.equal({ payment_customer_id: 'kept' });
    expect(wire.stripe_customer_id).to.equal('cus_1');
    expect(wire.rewards.active.offer_code[0].value).to.deep.equal({ value: 'C', link: '', expires_at: 'x' });
    expect(wire.rewards.expired).to.have.property('revenuecat_offering');
    expect(wire.referral_program.rewards.receiver).to.have.property('googleplay_promo_code');
    expect(rewards_granted).to.have.property('revenuecat_entitlement');
    expect(dataToWire({ user: { ...user, referral_program: null } }).user).to.have.property('referral_program', null);
  });

  it('answers a user and a program made without metadata with {} (the JavaScript SDK types every metadata as an object)', () => {
    const user = {
      app_user_id: 'a',
      metadata: null,
      payment_customer_id: null,
      rewards: { active: six(), expired: six() },
      referral_program: { id: 'p', metadata: null, rewards: { sender: six(), receiver: six() } },
    };
    const { user: wire } = dataToWire({ user }) as any;
    expect(wire.metadata).to.deep.equal({});
    expect(wire.referral_program.metadata).to.deep.equal({});
  });

  it('gives each code type its entity, and affiliates only the SDKs’ platforms', () => {
    const owner = {
      app_user_id: 'ann',
      limit: 5,
      name: 'Acme',
      logo_url: null,
      platforms: [
        { type: 'tiktok', handle: 't', verified: true },
        { type: 'mastodon', handle: 'm', verified: false },
      ],
    };
    const data = { type: 'x', code: 'C', is_active: true, entity: {}, rewards: six() };
    expect(codeToWire(data, { ...owner, type: 'referral' }).entity).to.deep.equal({ app_user_id: 'ann' });
    expect(codeToWire(data, { ...owner, type: 'promo' }).entity).to.deep.equal({ limit: 5 });
    expect(codeToWire(data, { ...owner, type: 'affiliate' }).entity).to.deep.equal({
      name: 'Acme',
      logo_url: null,
      platforms: [{ type: 'tiktok', handle: 't', verified: true }],
    });
  });
});
