import type { DomainEvent } from './events/index.js';
import { DomainError } from './domain-error.js';
import type { GrantedFact } from './events/user-events.js';

/**
 * Idempotency by `operation_id`: how a withdrawal or a manual grant that a client sends again
 * (same user, same `operation_id`) is applied once. The whole rule lives here:
 *
 * 1. **The event ids derive from the operation id** (`operationEventIdParts`, hashed by the Ids
 *    port in src/application/event-log.ts), so a second copy appended at the same revision is the
 *    store's idempotent repeat, written once (every backend; SQLite also refuses the id anywhere
 *    else, EventStoreDB does not); a manual grant's grant ids derive from it too
 *    (`manualGrantIdPrefix`).
 * 2. **The first use is remembered forever**, as an `OperationRecord` built from its events
 *    (`operationRecordOf`), in the operations index (projections/operations.ts), never in a
 *    stream's decision state; src/application/operation-index.ts reads it before the decision
 *    (src/application/command-executor.ts, `executeIdempotent`).
 * 3. **A repeat is detected and compared with the first request** (`replayed`): the same
 *    request is answered with the first answer, built here, and appends nothing; the same id
 *    for another request is refused (`*.OPERATION_ID_REUSED`).
 *
 * Withdrawals and grants each have their own operation ids (SPEC §6 remembers "the first
 * successful withdrawal" with an id, and grants follow "the same rule"): a withdrawal and a
 * grant of one user may carry the same id, each applied once.
 */
export type OperationKind = 'withdraw' | 'grant';

/** An operation id as a command carries it: the id the client sent, and the kind of operation it names. */
export interface Operation {
  id: string;
  kind: OperationKind;
}

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

/**
 * What the Ids port hashes into the id of the `index`-th event an operation appends to `stream`;
 * the parts name the kind. Logs written before operation ids were per kind hold withdrawals and
 * grants both under `operation`: a repeat of one of those is found in the operations index, and
 * a new withdrawal with the id of such a grant no longer meets its event id in the store.
 */
export function operationEventIdParts(stream: string, operation: Operation, index: number): string[] {
  return [stream, operation.kind === 'withdraw' ? 'withdraw-operation' : 'grant-operation', operation.id, String(index)];
}

/**
 * Prefix of a manual grant's grant ids: `manual:` and the operation id, else `manual/` and a
 * fresh id (a request that cannot repeat). The two never meet: an operation id equal to a fresh
 * id a client read in the ledger once named that grant's entry again (the entry then counted
 * one grant, and a withdrawal took it below 0).
 */
export function manualGrantIdPrefix(operationId: string | null, freshId: () => string): string {
  return operationId === null ? `manual/${freshId()}` : `manual:${operationId}`;
}

/** The operation an event records, if any: what the operations index keeps by (user, operation_id, kind). */
export function operationOf(event: DomainEvent): Operation | null {
  switch (event.type) {
    case 'CreditsWithdrawn':
      return event.data.operation_id === null ? null : { id: event.data.operation_id, kind: 'withdraw' };
    case 'RewardGranted':
      return event.data.cause.type === 'manual' && event.data.cause.operation_id !== null ? { id: event.data.cause.operation_id, kind: 'grant' } : null;
    case 'RewardGrantSkipped':
      return { id: event.data.operation_id, kind: 'grant' };
    default:
      return null;
  }
}

/** The record of an operation after `event` (one of its events), given the record so far. */
export function operationRecordOf(earlier: OperationRecord | null, event: DomainEvent): OperationRecord | null {
  switch (event.type) {
    case 'CreditsWithdrawn': {
      const { key, credits_requested_to_withdraw, credits_withdrawn, credits_available_at_start, credits_available_at_end } = event.data;
      return {
        kind: 'withdraw',
        key,
        amount: credits_requested_to_withdraw,
        result: { credits_available_at_start, credits_available_at_end, credits_requested_to_withdraw, credits_withdrawn },
      };
    }
    case 'RewardGranted': {
      const granted = earlier?.kind === 'grant' ? earlier.result.granted : [];
      return { kind: 'grant', key: event.data.reward_key, amount: null, result: { created: true, granted: [...granted, event.data] } };
    }
    case 'RewardGrantSkipped':
      return { kind: 'grant', key: event.data.reward_key, amount: null, result: { created: false, granted: [] } };
    default:
      return earlier;
  }
}

/** A request that carries an operation id, as far as comparing it with the first use goes. */
export type IdempotentRequest = { kind: 'withdraw'; key: string; amount: number } | { kind: 'grant'; key: string };

type AnswerOf<K extends IdempotentRequest['kind']> = K extends 'withdraw' ? WithdrawResult : GrantAnswer;

const REUSED = { withdraw: 'WITHDRAW.OPERATION_ID_REUSED', grant: 'GRANT.OPERATION_ID_REUSED' } as const;

function sameRequest(earlier: OperationRecord, request: IdempotentRequest): boolean {
  if (earlier.kind !== request.kind || earlier.key !== request.key) return false;
  return request.kind === 'grant' || earlier.amount === request.amount;
}

/**
 * The answer to replay when `request` repeats the operation `earlier` records: a withdrawal
 * gets the first answer; a grant adds nothing (`created: false`) and names what the first call
 * granted. `earlier` is what the id was first used for by an operation of the same kind (null:
 * the id is new to that kind); `*.OPERATION_ID_REUSED` when it served another request (another key or amount).
 */
export function replayed<K extends IdempotentRequest['kind']>(earlier: OperationRecord | null, request: IdempotentRequest & { kind: K }): AnswerOf<K> | null {
  if (earlier === null) return null;
  if (!sameRequest(earlier, request)) throw new DomainError(REUSED[request.kind], 'operation_id was already used for a different operation', '/operation_id');
  const answer = earlier.kind === 'withdraw' ? earlier.result : { created: false, granted: earlier.result.granted };
  return answer as AnswerOf<K>;
}
