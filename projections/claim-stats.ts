import type { Projection } from './projection.js';

export const CLAIM_STATS = 'claim_stats';

export function claimStatsId(type: string, ownerId: string): string {
  return `${type}:${ownerId}`;
}

/** Claims and conversions per promo code and per affiliate (referrers keep theirs in their stream). */
export const claimStatsProjection: Projection = {
  name: 'claim_stats',
  version: 1,
  collections: [{ name: CLAIM_STATS, indexes: [] }],
  eventTypes: ['CodeClaimed', 'UserConverted'],
  targets: (event) => {
    if (event.type === 'CodeClaimed' && event.data.type !== 'referral') {
      return [{ collection: CLAIM_STATS, id: claimStatsId(event.data.type, event.data.owner_id) }];
    }
    if (event.type === 'UserConverted' && event.data.referred_by.type !== 'referral') {
      return [{ collection: CLAIM_STATS, id: claimStatsId(event.data.referred_by.type, event.data.referred_by.owner_id) }];
    }
    return [];
  },
  evolve: (_ref, doc, event) => {
    const stats = { claims: 0, conversions: 0, ...(doc as { claims: number; conversions: number } | null) };
    if (event.type === 'CodeClaimed') stats.claims += 1;
    if (event.type === 'UserConverted') stats.conversions += 1;
    return stats;
  },
};
