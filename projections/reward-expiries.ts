import type { Projection } from './projection.js';
import { appUserIdOf } from '../src/domain/events/index.js';

export const REWARD_EXPIRIES = 'reward_expiries';

/** Entries (named by their first grant's id, `grant_id`) that will expire and whose expiry is not recorded yet: what the sweep looks at. */
export const rewardExpiriesProjection: Projection = {
  name: 'reward_expiries',
  version: 2,
  // By time for the sweep; by user for a ledger read (src/application/maintenance/expiry-sweep.ts, recordDueOf).
  collections: [{ name: REWARD_EXPIRIES, indexes: ['expires_at', ['app_user_id', 'expires_at']] }],
  eventTypes: ['RewardGranted', 'RewardExpired', 'RewardRevoked'],
  targets: (event) => {
    // A non-credit entry revoked by a clawback (SPEC §11) ended: nothing left to sweep.
    if (event.type === 'RewardRevoked')
      return event.data.kind === 'credit' ? [] : [{ collection: REWARD_EXPIRIES, id: `${event.stream}/${event.data.entry_id}` }];
    if (event.type !== 'RewardGranted' && event.type !== 'RewardExpired') return [];
    if (event.type === 'RewardGranted' && event.data.expires_at === null) return [];
    // One document per entry: a grant added to an entry shares its expiry (SPEC §5.3).
    const entryId = event.type === 'RewardGranted' ? event.data.entry_id : event.data.grant_id;
    return [{ collection: REWARD_EXPIRIES, id: `${event.stream}/${entryId}` }];
  },
  evolve: (_ref, _doc, event) => {
    if (event.type !== 'RewardGranted') return null;
    return { app_user_id: appUserIdOf(event.stream)!, grant_id: event.data.entry_id, expires_at: event.data.expires_at };
  },
};
