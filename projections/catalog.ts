import type { Projection } from './projection.js';

export const REWARDS = 'rewards';
export const PROGRAMS = 'programs';
export const PROMO_CODES = 'promo_codes';
export const AFFILIATES = 'affiliates';

/** The configuration the admin API writes: rewards, programs, promo codes, affiliates. */
export const catalogProjection: Projection = {
  name: 'catalog',
  version: 1,
  collections: [
    { name: REWARDS, indexes: ['kind'] },
    { name: PROGRAMS, indexes: ['created_at'] },
    { name: PROMO_CODES, indexes: [] },
    { name: AFFILIATES, indexes: ['app_user_id'] },
  ],
  eventTypes: [
    'RewardCreated',
    'RewardUpdated',
    'ProgramCreated',
    'ProgramUpdated',
    'PromoCodeCreated',
    'PromoCodeUpdated',
    'AffiliateCreated',
    'AffiliateUpdated',
  ],
  targets: (event) => {
    switch (event.type) {
      case 'RewardCreated':
      case 'RewardUpdated':
        return [{ collection: REWARDS, id: event.data.reward.key }];
      case 'ProgramCreated':
      case 'ProgramUpdated':
        return [{ collection: PROGRAMS, id: event.data.program.id }];
      case 'PromoCodeCreated':
      case 'PromoCodeUpdated':
        return [{ collection: PROMO_CODES, id: event.data.promo_code.code }];
      case 'AffiliateCreated':
      case 'AffiliateUpdated':
        return [{ collection: AFFILIATES, id: event.data.affiliate.id }];
      default:
        return [];
    }
  },
  evolve: (_ref, doc, event) => {
    switch (event.type) {
      case 'RewardCreated':
      case 'RewardUpdated':
        return event.data.reward;
      case 'ProgramCreated':
      case 'ProgramUpdated':
        return event.data.program;
      case 'PromoCodeCreated':
      case 'PromoCodeUpdated':
        return event.data.promo_code;
      case 'AffiliateCreated':
      case 'AffiliateUpdated':
        return event.data.affiliate;
      default:
        return doc;
    }
  },
};
