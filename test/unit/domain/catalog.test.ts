import { expect } from 'chai';
import { describe, it } from 'mocha';
import { type AffiliateInput, decideDefineAffiliate } from '../../../src/domain/catalog/affiliate-config.js';
import { affiliateConfigEvolver, programConfigEvolver, promoConfigEvolver, rewardConfigEvolver } from '../../../src/domain/catalog/config-state.js';
import { decideDefineProgram, type DefineProgramCommand, type ProgramInput } from '../../../src/domain/catalog/program-config.js';
import { decideDefinePromoCode, type PromoCodeInput } from '../../../src/domain/catalog/promo-config.js';
import { decideDefineReward, type RewardInput } from '../../../src/domain/catalog/reward-config.js';
import { AFFILIATE_STATUSES } from '../../../src/domain/events/config-events.js';
import type { RewardKind } from '../../../src/domain/rewards/reward-kinds.js';
import type { ConfiguredReward } from '../../../src/domain/rewards/reward-schemas.js';
import { deciderSpec } from '../../support/decider-spec.js';
import { at, DAY, event, iso, NEVER, T0 } from '../../support/events.js';

const rewardKinds = new Map<string, RewardKind>([
  ['coins', 'credit'],
  ['vip', 'basic'],
  ['offer', 'offer_code'],
  ['store', 'store_promo_code'],
  ['ent', 'partner_entitlement'],
  ['offering', 'partner_offering'],
]);

function entry(rewardKey: string, activation: ConfiguredReward['activation']): ConfiguredReward {
  return { reward_key: rewardKey, activation, deactivation: NEVER };
}

describe('configuration deciders (SPEC §7)', () => {
  describe('rewards (§7.1)', () => {
    const reward = deciderSpec(rewardConfigEvolver);
    const coins: RewardInput = { key: 'coins', kind: 'credit', name: 'Coins', description: null, metadata: null, credits: 10 };
    const offer: RewardInput = {
      key: 'offer',
      kind: 'offer_code',
      name: 'Offer',
      description: null,
      metadata: null,
      offer_code_id: 'oc-1',
      offer_code_ref_name: 'ref',
    };
    const created = (input: RewardInput) => event('RewardCreated', { reward: { ...input, created_at: T0.toISOString(), updated_at: null } });

    it('creates a reward (created, updated_at null)', () => {
      const { result } = reward
        .given([])
        .when((state) => decideDefineReward(state, coins, T0))
        .then([created(coins)]);
      expect(result.created).to.equal(true);
    });

    it('updates mutable fields, keeping created_at', () => {
      const { result, state } = reward
        .given([created(coins)])
        .when((state) => decideDefineReward(state, { ...coins, name: 'Gold coins', description: 'shiny', metadata: { a: 1 } }, at(DAY)))
        .then([
          event('RewardUpdated', {
            reward: { ...coins, name: 'Gold coins', description: 'shiny', metadata: { a: 1 }, created_at: T0.toISOString(), updated_at: iso(DAY) },
          }),
        ]);
      expect(result.created).to.equal(false);
      expect(state?.name).to.equal('Gold coins');
    });

    it('REWARD.IMMUTABLE_FIELD when kind changes', () => {
      reward
        .given([created(coins)])
        .when((state) => decideDefineReward(state, { ...coins, kind: 'basic', credits: undefined }, T0))
        .thenError('REWARD.IMMUTABLE_FIELD', '/kind');
    });

    it('REWARD.IMMUTABLE_FIELD when credits change', () => {
      reward
        .given([created(coins)])
        .when((state) => decideDefineReward(state, { ...coins, credits: 11 }, T0))
        .thenError('REWARD.IMMUTABLE_FIELD', '/credits');
    });

    it('REWARD.IMMUTABLE_FIELD when offer_code_id changes', () => {
      reward
        .given([created(offer)])
        .when((state) => decideDefineReward(state, { ...offer, offer_code_id: 'oc-2' }, T0))
        .thenError('REWARD.IMMUTABLE_FIELD', '/offer_code_id');
    });

    it('allows other kind-specific fields to change (offer_code_ref_name)', () => {
      reward
        .given([created(offer)])
        .when((state) => decideDefineReward(state, { ...offer, offer_code_ref_name: 'new-ref' }, at(DAY)))
        .then([event('RewardUpdated', { reward: { ...offer, offer_code_ref_name: 'new-ref', created_at: T0.toISOString(), updated_at: iso(DAY) } })]);
    });
  });

  describe('programs (§7.2)', () => {
    const program = deciderSpec(programConfigEvolver);
    const input: ProgramInput = {
      id: 'prog',
      name: 'Friends',
      description: null,
      metadata: null,
      distribution_percentage: 40,
      limit: 10,
      rewards: {
        sender: [entry('coins', { variant: 'claim', amount: 1, limit: 0 }), entry('vip', { variant: 'conversion', amount: 3 })],
        receiver: [entry('offer', { variant: 'claim' }), entry('coins', { variant: 'conversion' })],
      },
    };
    const command = (overrides: Partial<ProgramInput> = {}, rest: Partial<DefineProgramCommand> = {}): DefineProgramCommand => ({
      input: { ...input, ...overrides },
      rewardKinds,
      otherProgramsPercentage: 0,
      now: T0,
      ...rest,
    });
    const createdEvent = event('ProgramCreated', { program: { ...input, created_at: T0.toISOString(), updated_at: null } });

    it('creates a program', () => {
      const { result } = program
        .given([])
        .when((state) => decideDefineProgram(state, command()))
        .then([createdEvent]);
      expect(result.created).to.equal(true);
    });

    it('updates a program, keeping created_at', () => {
      program
        .given([createdEvent])
        .when((state) => decideDefineProgram(state, command({ name: 'Pals' }, { now: at(DAY) })))
        .then([event('ProgramUpdated', { program: { ...input, name: 'Pals', created_at: T0.toISOString(), updated_at: iso(DAY) } })]);
    });

    it('PROGRAM.REWARD_NOT_FOUND for an unknown sender or receiver reward', () => {
      program
        .given([])
        .when((state) => decideDefineProgram(state, command({ rewards: { sender: [entry('ghost', { variant: 'claim', amount: 1 })], receiver: [] } })))
        .thenError('PROGRAM.REWARD_NOT_FOUND', '/rewards/sender/0/reward_key');
      program
        .given([])
        .when((state) =>
          decideDefineProgram(
            state,
            command({ rewards: { sender: [], receiver: [entry('vip', { variant: 'claim' }), entry('ghost', { variant: 'claim' })] } }),
          ),
        )
        .thenError('PROGRAM.REWARD_NOT_FOUND', '/rewards/receiver/1/reward_key');
    });

    it('PROGRAM.INVALID_ACTIVATION for a sender entry without amount', () => {
      program
        .given([])
        .when((state) => decideDefineProgram(state, command({ rewards: { sender: [entry('vip', { variant: 'claim' })], receiver: [] } })))
        .thenError('PROGRAM.INVALID_ACTIVATION', '/rewards/sender/0/activation');
    });

    for (const key of ['coins', 'offer', 'store']) {
      it(`PROGRAM.INVALID_ACTIVATION for a ${rewardKinds.get(key)} sender entry without limit`, () => {
        program
          .given([])
          .when((state) => decideDefineProgram(state, command({ rewards: { sender: [entry(key, { variant: 'claim', amount: 2 })], receiver: [] } })))
          .thenError('PROGRAM.INVALID_ACTIVATION', '/rewards/sender/0/activation');
      });
    }

    // What the stored entry's schema refuses is refused here, for every role, so the event is never refused at append.
    for (const [role, activation] of [
      ['receiver', { variant: 'claim', amount: 0 }],
      ['receiver', { variant: 'claim', amount: -1 }],
      ['receiver', { variant: 'claim', limit: -1 }],
      ['sender', { variant: 'claim', amount: 1, limit: -1 }],
    ] as const) {
      it(`PROGRAM.INVALID_ACTIVATION for a basic ${role} entry with ${JSON.stringify(activation)}`, () => {
        const rewards = role === 'sender' ? { sender: [entry('vip', activation)], receiver: [] } : { sender: [], receiver: [entry('vip', activation)] };
        program
          .given([])
          .when((state) => decideDefineProgram(state, command({ rewards })))
          .thenError('PROGRAM.INVALID_ACTIVATION', `/rewards/${role}/0/activation`);
      });
    }

    it('accepts sender limit 0 (unlimited) and no limit for once-only kinds', () => {
      program
        .given([])
        .when((state) =>
          decideDefineProgram(
            state,
            command({
              rewards: {
                sender: [
                  entry('coins', { variant: 'conversion', amount: 5, limit: 0 }),
                  entry('ent', { variant: 'claim', amount: 1 }),
                  entry('offering', { variant: 'claim', amount: 2 }),
                ],
                receiver: [],
              },
            }),
          ),
        )
        .decision();
    });

    for (const key of ['offer', 'store', 'offering']) {
      it(`PROGRAM.INVALID_ACTIVATION for a ${rewardKinds.get(key)} receiver entry on conversion`, () => {
        program
          .given([])
          .when((state) => decideDefineProgram(state, command({ rewards: { sender: [], receiver: [entry(key, { variant: 'conversion' })] } })))
          .thenError('PROGRAM.INVALID_ACTIVATION', '/rewards/receiver/0/activation');
      });
    }

    it('accepts basic, credit and partner_entitlement receiver entries on conversion', () => {
      program
        .given([])
        .when((state) =>
          decideDefineProgram(
            state,
            command({
              rewards: {
                sender: [],
                receiver: [entry('vip', { variant: 'conversion' }), entry('coins', { variant: 'conversion' }), entry('ent', { variant: 'conversion' })],
              },
            }),
          ),
        )
        .decision();
    });

    it('PROGRAM.DISTRIBUTION_EXCEEDED when the other programs and this one exceed 100', () => {
      program
        .given([])
        .when((state) => decideDefineProgram(state, command({ distribution_percentage: 41 }, { otherProgramsPercentage: 60 })))
        .thenError('PROGRAM.DISTRIBUTION_EXCEEDED', '/distribution_percentage');
    });

    it('accepts a sum of exactly 100', () => {
      program
        .given([])
        .when((state) => decideDefineProgram(state, command({ distribution_percentage: 40 }, { otherProgramsPercentage: 60 })))
        .then([createdEvent]);
    });
  });

  describe('promo codes (§7.3)', () => {
    const promo = deciderSpec(promoConfigEvolver);
    const input: PromoCodeInput = { code: 'SPRING', description: 'Spring sale', is_active: true, limit: 100, rewards: [entry('vip', { variant: 'claim' })] };
    const createdEvent = event('PromoCodeCreated', { promo_code: { ...input, created_at: T0.toISOString(), updated_at: null } });

    it('creates and updates a promo code', () => {
      promo
        .given([])
        .when((state) => decideDefinePromoCode(state, input, rewardKinds, T0))
        .then([createdEvent]);
      const { result } = promo
        .given([createdEvent])
        .when((state) => decideDefinePromoCode(state, { ...input, is_active: false }, rewardKinds, at(DAY)))
        .then([event('PromoCodeUpdated', { promo_code: { ...input, is_active: false, created_at: T0.toISOString(), updated_at: iso(DAY) } })]);
      expect(result.created).to.equal(false);
    });

    it('refuses unknown rewards and conversion-only pooled receiver rewards', () => {
      promo
        .given([])
        .when((state) => decideDefinePromoCode(state, { ...input, rewards: [entry('ghost', { variant: 'claim' })] }, rewardKinds, T0))
        .thenError('CODE.REWARD_NOT_FOUND', '/rewards/0/reward_key');
      promo
        .given([])
        .when((state) => decideDefinePromoCode(state, { ...input, rewards: [entry('offer', { variant: 'conversion' })] }, rewardKinds, T0))
        .thenError('CODE.INVALID_ACTIVATION', '/rewards/0/activation');
    });
  });

  describe('affiliates (§7.4)', () => {
    const affiliate = deciderSpec(affiliateConfigEvolver);
    const input: AffiliateInput = {
      id: 'aff-1',
      status: 'approved',
      name: 'Streamer',
      logo_url: null,
      platforms: [{ type: 'youtube', handle: '@streamer', verified: true }],
      app_user_id: 'ann',
      codes: ['STREAM'],
      rewards: [entry('coins', { variant: 'claim' })],
    };
    const as = (status: AffiliateInput['status']) =>
      event('AffiliateCreated', { affiliate: { ...input, status, created_at: T0.toISOString(), updated_at: null } });

    it('creates and updates an affiliate', () => {
      const { result } = affiliate
        .given([])
        .when((state) => decideDefineAffiliate(state, input, rewardKinds, T0))
        .then([as('approved')]);
      expect(result.created).to.equal(true);
      affiliate
        .given([as('pending')])
        .when((state) => decideDefineAffiliate(state, input, rewardKinds, at(DAY)))
        .then([event('AffiliateUpdated', { affiliate: { ...input, created_at: T0.toISOString(), updated_at: iso(DAY) } })]);
    });

    for (const status of AFFILIATE_STATUSES.filter((candidate) => candidate !== 'banned')) {
      it(`moves from ${status} to banned`, () => {
        affiliate
          .given([as(status)])
          .when((state) => decideDefineAffiliate(state, { ...input, status: 'banned' }, rewardKinds, at(DAY)))
          .then([event('AffiliateUpdated', { affiliate: { ...input, status: 'banned', created_at: T0.toISOString(), updated_at: iso(DAY) } })]);
      });
    }

    it('AFFILIATE.BANNED: a banned affiliate is final (any change, even an unchanged PUT)', () => {
      for (const status of AFFILIATE_STATUSES) {
        affiliate
          .given([as('banned')])
          .when((state) => decideDefineAffiliate(state, { ...input, status }, rewardKinds, at(DAY)))
          .thenError('AFFILIATE.BANNED', '/status');
      }
    });

    it('refuses unknown rewards (AFFILIATE.REWARD_NOT_FOUND)', () => {
      affiliate
        .given([])
        .when((state) => decideDefineAffiliate(state, { ...input, rewards: [entry('ghost', { variant: 'claim' })] }, rewardKinds, T0))
        .thenError('AFFILIATE.REWARD_NOT_FOUND');
    });
  });
});
