import type { Decision } from '../decider.js';
import type { PooledValue } from '../events/user-events.js';
import type { UserState } from './user-state.js';

/** Gives a pooled one-time code to a granted entry that has none yet. */
export function decideAssignRewardValue(state: UserState, grantId: string, value: PooledValue, now: Date): Decision<boolean> {
  // An entry that expired before a code reached it keeps none.
  const entry = state.entries.find((candidate) => candidate.entry_id === grantId);
  if (!entry || entry.value !== null) return { events: [], result: false };
  return { events: [{ type: 'RewardValueAssigned', data: { grant_id: grantId, value, assigned_at: now.toISOString() } }], result: true };
}
