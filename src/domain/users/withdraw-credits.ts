import type { Decision } from '../decider.js';
import { DomainError } from '../domain-error.js';
import { expireDueRewards } from '../rewards/grant-rewards.js';
import { activeGrants, evolveUser, type GrantState, type UserState, withdrawResultOf } from './user-state.js';

export interface WithdrawCreditsCommand {
  key: string;
  amount: number;
  operation_id: string | null;
  /** Whether `key` names a credit reward. */
  isCreditReward: boolean;
  now: Date;
}

export type WithdrawResult = ReturnType<typeof withdrawResultOf>;

/** Earliest expiry first (never-expiring last), then oldest grant. */
function drainOrder(a: GrantState, b: GrantState): number {
  if (a.expires_at !== b.expires_at) {
    if (a.expires_at === null) return 1;
    if (b.expires_at === null) return -1;
    return Date.parse(a.expires_at) - Date.parse(b.expires_at);
  }
  return 0;
}

export function decideWithdrawCredits(state: UserState, command: WithdrawCreditsCommand): Decision<WithdrawResult> {
  if (!state.exists) throw new DomainError('NOT_FOUND.USER', 'User not found', 'path:/app_user_id');
  if (!command.isCreditReward) {
    throw new DomainError('WITHDRAW.REWARD_NOT_FOUND', `No credit reward has the key ${command.key}`, '/key');
  }
  const { operation_id: operationId } = command;
  if (operationId !== null) {
    const earlier = state.operations[operationId];
    if (earlier) {
      if (earlier.kind === 'withdraw' && earlier.key === command.key && earlier.amount === command.amount) {
        return { events: [], result: earlier.result as WithdrawResult };
      }
      throw new DomainError(
        'WITHDRAW.OPERATION_ID_REUSED',
        'operation_id was already used for a different operation',
        '/operation_id',
      );
    }
  }
  const expiries = expireDueRewards(state, command.now);
  const current = expiries.reduce(evolveUser, state);
  // Array#sort is stable, so entries with equal expiry keep grant order.
  const entries = activeGrants(current, command.now)
    .filter((grant) => grant.kind === 'credit' && grant.reward_key === command.key)
    .sort(drainOrder);
  const available = entries.reduce((sum, grant) => sum + (grant.credits ?? 0), 0);
  const debits: { grant_id: string; credits: number }[] = [];
  let remaining = Math.min(command.amount, available);
  for (const entry of entries) {
    if (remaining === 0) break;
    const take = Math.min(entry.credits ?? 0, remaining);
    if (take > 0) debits.push({ grant_id: entry.grant_id, credits: take });
    remaining -= take;
  }
  const withdrawn = Math.min(command.amount, available);
  const data = {
    operation_id: operationId,
    key: command.key,
    withdrawn_at: command.now.toISOString(),
    credits_requested_to_withdraw: command.amount,
    credits_withdrawn: withdrawn,
    credits_available_at_start: available,
    credits_available_at_end: available - withdrawn,
    debits,
  };
  return { events: [...expiries, { type: 'CreditsWithdrawn', data }], result: withdrawResultOf(data) };
}
