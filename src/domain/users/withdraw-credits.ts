import type { Decision } from '../decider.js';
import { DomainError, userNotFound } from '../domain-error.js';
import { type OperationRecord, replayed, type WithdrawResult } from '../idempotency.js';
import { expireDueRewards } from '../rewards/grant-and-expire.js';
import { creditBalance, evolveUser, type HeldEntry, spendableCreditEntries, type UserState } from './user-state.js';

export interface WithdrawCreditsCommand {
  key: string;
  amount: number;
  operation_id: string | null;
  /** What `operation_id` was first used for, from the operations index; null when new or absent. */
  earlier: OperationRecord | null;
  /** Whether `key` names a credit reward. */
  isCreditReward: boolean;
  now: Date;
}

/** Earliest expiry first (never-expiring last), then oldest entry. */
function drainOrder(a: HeldEntry, b: HeldEntry): number {
  if (a.expires_at !== b.expires_at) {
    if (a.expires_at === null) return 1;
    if (b.expires_at === null) return -1;
    return Date.parse(a.expires_at) - Date.parse(b.expires_at);
  }
  return 0;
}

export function decideWithdrawCredits(state: UserState, command: WithdrawCreditsCommand): Decision<WithdrawResult> {
  if (!state.exists) throw userNotFound();
  // A remembered operation_id answers first (SPEC §6): its result, or OPERATION_ID_REUSED for another key or amount, whatever the key names now.
  const repeated = replayed(command.earlier, { kind: 'withdraw', key: command.key, amount: command.amount });
  if (repeated !== null) return { events: [], result: repeated };
  if (!command.isCreditReward) {
    throw new DomainError('WITHDRAW.REWARD_NOT_FOUND', `No credit reward has the key ${command.key}`, '/key');
  }
  const expiries = expireDueRewards(state, command.now);
  const current = expiries.reduce(evolveUser, state);
  const available = creditBalance(current, command.key, command.now);
  const withdrawn = Math.min(command.amount, available);
  const debits: { grant_id: string; credits: number }[] = [];
  let remaining = withdrawn;
  // Array#sort is stable, so entries with equal expiry keep grant order.
  for (const entry of spendableCreditEntries(current, command.key, command.now).sort(drainOrder)) {
    if (remaining === 0) break;
    const take = Math.min(entry.credits ?? 0, remaining);
    if (take > 0) debits.push({ grant_id: entry.entry_id, credits: take });
    remaining -= take;
  }
  const result: WithdrawResult = {
    credits_available_at_start: available,
    credits_available_at_end: available - withdrawn,
    credits_requested_to_withdraw: command.amount,
    credits_withdrawn: withdrawn,
  };
  const data = { operation_id: command.operation_id, key: command.key, withdrawn_at: command.now.toISOString(), ...result, debits };
  return { events: [...expiries, { type: 'CreditsWithdrawn', data }], result };
}
