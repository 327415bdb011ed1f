import type { Decision } from '../decider.js';
import { expireDueRewards } from '../rewards/grant-and-expire.js';
import type { UserState } from './user-state.js';

/** Records the expiry of every entry whose time has passed (the background sweep). */
export function decideExpireRewards(state: UserState, now: Date): Decision<number> {
  const events = expireDueRewards(state, now);
  return { events, result: events.length };
}
