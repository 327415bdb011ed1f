import type { Decision } from '../decider.js';
import { DomainError, userNotFound } from '../domain-error.js';
import { type GrantAnswer, type OperationRecord, replayed } from '../idempotency.js';
import { expireDueRewards, type GrantSpec, grantRewards } from '../rewards/grant-and-expire.js';
import { activeEntries, evolveUser, type UserState } from './user-state.js';

export interface GrantRewardCommand {
  key: string;
  /** null when no reward has this key. */
  spec: GrantSpec | null;
  operation_id: string | null;
  /** What `operation_id` was first used for, from the operations index; null when new or absent. */
  earlier: OperationRecord | null;
  /** Prefix of the grant id: derived from the operation id, else unique per request. */
  grant_id_prefix: string;
  now: Date;
}

/** `created` is false when a non-credit reward was already active (nothing added). */
export function decideGrantReward(state: UserState, command: GrantRewardCommand): Decision<GrantAnswer> {
  if (!state.exists) throw userNotFound();
  // A remembered operation_id answers first (SPEC §6), whatever the key names now.
  const repeated = replayed(command.earlier, { kind: 'grant', key: command.key });
  if (repeated !== null) return { events: [], result: repeated };
  if (command.spec === null) throw new DomainError('GRANT.REWARD_NOT_FOUND', `No reward has the key ${command.key}`, '/key');
  const operationId = command.operation_id;
  const expiries = expireDueRewards(state, command.now);
  const current = expiries.reduce(evolveUser, state);
  // SPEC §6: by hand, any non-credit reward already active is not granted again (credits stack).
  const alreadyActive = command.spec.reward.kind !== 'credit' && activeEntries(current, command.now).some((entry) => entry.reward_key === command.key);
  const grants = alreadyActive
    ? []
    : grantRewards(current, [command.spec], { type: 'manual', operation_id: operationId }, command.grant_id_prefix, command.now);
  const granted = grants.flatMap((event) => (event.type === 'RewardGranted' ? [event.data] : []));
  if (granted.length === 0 && operationId !== null) {
    // Nothing added, but the operation succeeded: remember it like any other.
    grants.push({ type: 'RewardGrantSkipped', data: { reward_key: command.key, operation_id: operationId, reason: 'already_active' } });
  }
  return { events: [...expiries, ...grants], result: { created: granted.length > 0, granted } };
}
