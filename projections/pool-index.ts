import { streams } from '../src/domain/events/index.js';
import type { PoolCode } from '../src/domain/events/pool-events.js';
import type { Projection } from './projection.js';

/** Every code value a pool was ever given, by pool and value: whether it went to a grant. */
export const POOL_CODES = 'pool_codes';
/** Every grant a pool heard of, by pool, user and grant: the code it got, or that it was withdrawn. */
export const POOL_GRANTS = 'pool_grants';

export interface PoolCodeDoc {
  [key: string]: unknown;
  assigned: boolean;
}

export interface PoolGrantDoc {
  [key: string]: unknown;
  /** The code the grant got; null while it waits, or when it was withdrawn first. */
  code: PoolCode | null;
  withdrawn: boolean;
}

export const poolCodeId = (rewardKey: string, value: string) => JSON.stringify([rewardKey, value]);
export const poolGrantId = (rewardKey: string, appUserId: string, grantId: string) => JSON.stringify([rewardKey, appUserId, grantId]);

/**
 * What a pool remembers for ever, kept out of its stream's decision state (which holds only the
 * codes still free and the grants waiting, so a command on a pool costs the same after 100,000
 * codes handed out): which values it was given (a value is added once, SPEC §7.5) and what each
 * grant got (a repeated request or a late withdrawal changes nothing). The pool's commands look
 * it up once it has passed the pool stream's last event (src/application/shared-resources/pool-assignments.ts).
 */
export const poolIndexProjection: Projection = {
  name: 'pool_index',
  version: 1,
  collections: [
    { name: POOL_CODES, indexes: [] },
    { name: POOL_GRANTS, indexes: [] },
  ],
  eventTypes: ['PoolCodesAdded', 'PoolCodeRequested', 'PoolCodeAssigned', 'PoolRequestWithdrawn'],
  targets: (event) => {
    const pool = streams.idOf('pool', event.stream);
    if (pool === null) return [];
    switch (event.type) {
      case 'PoolCodesAdded':
        return event.data.codes.map((code) => ({ collection: POOL_CODES, id: poolCodeId(pool, code.value) }));
      case 'PoolCodeAssigned':
        return [
          { collection: POOL_CODES, id: poolCodeId(pool, event.data.code.value) },
          { collection: POOL_GRANTS, id: poolGrantId(pool, event.data.app_user_id, event.data.grant_id) },
        ];
      case 'PoolCodeRequested':
      case 'PoolRequestWithdrawn':
        return [{ collection: POOL_GRANTS, id: poolGrantId(pool, event.data.app_user_id, event.data.grant_id) }];
      default:
        return [];
    }
  },
  evolve: (ref, doc, event) => {
    switch (event.type) {
      case 'PoolCodesAdded':
        return doc ?? { assigned: false };
      case 'PoolCodeAssigned':
        return ref.collection === POOL_CODES ? { assigned: true } : { code: event.data.code, withdrawn: false };
      case 'PoolCodeRequested':
        return doc ?? { code: null, withdrawn: false };
      case 'PoolRequestWithdrawn':
        return { code: (doc?.code as PoolCode | null | undefined) ?? null, withdrawn: true };
      default:
        return doc;
    }
  },
};
