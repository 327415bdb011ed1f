import { DomainError } from './domain-error.js';
import type { GrantedFact } from './events/user-events.js';

/**
 * Idempotency by `operation_id` (SPEC §6): the first successful withdrawal or manual grant
 * with a given (user, operation_id) is remembered forever, in the operations index
 * (projections/operations.ts), never in a stream's decision state. Its events get ids derived
 * from the operation id (src/application/event-log.ts), so the store itself refuses a second
 * copy. A repeat of the same request is answered with the first answer; the same id for
 * another request is refused.
 */
export type OperationRecord =
  | { kind: 'withdraw'; key: string; amount: number; result: WithdrawResult }
  | { kind: 'grant'; key: string; amount: null; result: GrantAnswer };

export interface WithdrawResult {
  credits_available_at_start: number;
  credits_available_at_end: number;
  credits_requested_to_withdraw: number;
  credits_withdrawn: number;
}

export interface GrantAnswer {
  created: boolean;
  granted: GrantedFact[];
}

function reused(code: 'WITHDRAW.OPERATION_ID_REUSED' | 'GRANT.OPERATION_ID_REUSED'): DomainError {
  return new DomainError(code, 'operation_id was already used for a different operation', '/operation_id');
}

/**
 * The first answer, when `earlier` is this same withdrawal (key and amount); null when the
 * operation id is new; `WITHDRAW.OPERATION_ID_REUSED` when it served another request.
 */
export function repeatedWithdrawal(earlier: OperationRecord | null, key: string, amount: number): WithdrawResult | null {
  if (earlier === null) return null;
  if (earlier.kind !== 'withdraw' || earlier.key !== key || earlier.amount !== amount) throw reused('WITHDRAW.OPERATION_ID_REUSED');
  return earlier.result;
}

/**
 * A repeated grant of the same key adds nothing (200) and names what the first call granted;
 * null when the operation id is new; `GRANT.OPERATION_ID_REUSED` when it served another request.
 */
export function repeatedGrant(earlier: OperationRecord | null, key: string): GrantAnswer | null {
  if (earlier === null) return null;
  if (earlier.kind !== 'grant' || earlier.key !== key) throw reused('GRANT.OPERATION_ID_REUSED');
  return { created: false, granted: earlier.result.granted };
}
