import { expect } from 'chai';
import { describe, it } from 'mocha';
import { AFFILIATES, catalogProjection, PROGRAMS, PROMO_CODES, REWARDS } from '../../../projections/catalog.js';
import type { Affiliate, Program, PromoCode } from '../../../src/domain/events/config-events.js';
import type { RewardDefinition } from '../../../src/domain/rewards/reward-schemas.js';
import { DAY, event, iso, logged, NEVER, projected, registered, T0, TestLog } from '../../support/events.js';

const created = T0.toISOString();
const coins: RewardDefinition = {
  key: 'coins',
  kind: 'credit',
  name: 'Coins',
  description: null,
  metadata: null,
  credits: 10,
  created_at: created,
  updated_at: null,
};
const vip: RewardDefinition = {
  key: 'vip',
  kind: 'basic',
  name: 'VIP',
  description: 'VIP access',
  metadata: { tier: 1 },
  created_at: created,
  updated_at: null,
};
const program: Program = {
  id: 'prog',
  name: 'Friends',
  description: null,
  metadata: null,
  distribution_percentage: 50,
  limit: 0,
  rewards: { sender: [{ reward_key: 'coins', activation: { variant: 'claim', amount: 1, limit: 0 }, deactivation: NEVER }], receiver: [] },
  created_at: created,
  updated_at: null,
};
const promo: PromoCode = { code: 'SPRING', description: null, is_active: true, limit: 10, rewards: [], created_at: created, updated_at: null };
const affiliate: Affiliate = {
  id: 'aff-1',
  status: 'pending',
  name: 'Streamer',
  logo_url: null,
  platforms: [],
  app_user_id: null,
  codes: ['STREAM'],
  rewards: [],
  created_at: created,
  updated_at: null,
};

describe('catalog projection (admin configuration)', () => {
  it('keeps one document per reward, program, promo code and affiliate, in its own collection', () => {
    const log = new TestLog();
    log.append('reward-coins', event('RewardCreated', { reward: coins }));
    log.append('reward-vip', event('RewardCreated', { reward: vip }));
    log.append('program-prog', event('ProgramCreated', { program }));
    log.append('promo-SPRING', event('PromoCodeCreated', { promo_code: promo }));
    log.append('affiliate-aff-1', event('AffiliateCreated', { affiliate }));
    expect(projected(catalogProjection, log.events)).to.deep.equal({
      [`${REWARDS}/coins`]: coins,
      [`${REWARDS}/vip`]: vip,
      [`${PROGRAMS}/prog`]: program,
      [`${PROMO_CODES}/SPRING`]: promo,
      [`${AFFILIATES}/aff-1`]: affiliate,
    });
  });

  it('replaces a document with the latest definition on update', () => {
    const log = new TestLog();
    const updatedAt = iso(DAY);
    log.append(
      'reward-coins',
      event('RewardCreated', { reward: coins }),
      event('RewardUpdated', { reward: { ...coins, name: 'Gold', updated_at: updatedAt } }),
    );
    log.append(
      'program-prog',
      event('ProgramCreated', { program }),
      event('ProgramUpdated', { program: { ...program, distribution_percentage: 20, updated_at: updatedAt } }),
    );
    log.append(
      'promo-SPRING',
      event('PromoCodeCreated', { promo_code: promo }),
      event('PromoCodeUpdated', { promo_code: { ...promo, is_active: false, updated_at: updatedAt } }),
    );
    log.append(
      'affiliate-aff-1',
      event('AffiliateCreated', { affiliate }),
      event('AffiliateUpdated', { affiliate: { ...affiliate, status: 'approved', updated_at: updatedAt } }),
    );
    expect(projected(catalogProjection, log.events)).to.deep.equal({
      [`${REWARDS}/coins`]: { ...coins, name: 'Gold', updated_at: updatedAt },
      [`${PROGRAMS}/prog`]: { ...program, distribution_percentage: 20, updated_at: updatedAt },
      [`${PROMO_CODES}/SPRING`]: { ...promo, is_active: false, updated_at: updatedAt },
      [`${AFFILIATES}/aff-1`]: { ...affiliate, status: 'approved', updated_at: updatedAt },
    });
  });

  it('handles only configuration events', () => {
    expect(catalogProjection.targets(logged('user-ann', registered('ann')))).to.deep.equal([]);
    expect([...catalogProjection.eventTypes].sort()).to.deep.equal([
      'AffiliateCreated',
      'AffiliateUpdated',
      'ProgramCreated',
      'ProgramUpdated',
      'PromoCodeCreated',
      'PromoCodeUpdated',
      'RewardCreated',
      'RewardUpdated',
    ]);
  });
});
