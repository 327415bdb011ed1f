import type { Decision } from '../decider.js';
import { userNotFound } from '../domain-error.js';
import type { UserState } from '../users/user-state.js';
import { PERSONAL_PROFILE_FIELDS } from './personal-fields.js';

/**
 * `erased` is false when the user was already erased with nothing personal received since (a
 * no-op). `erasedEvents`: ids of the user's events that held a personal value.
 */
export function decideEraseUser(state: UserState, now: Date, erasedEvents: readonly string[]): Decision<{ erased: boolean }> {
  if (!state.exists) throw userNotFound();
  if (state.erased) return { events: [], result: { erased: false } };
  return {
    events: [{ type: 'UserErased', data: { erased_at: now.toISOString(), fields: [...PERSONAL_PROFILE_FIELDS], erased_events: [...erasedEvents] } }],
    result: { erased: true },
  };
}
