import { createHash } from 'node:crypto';
import type { Decision, Evolver } from '../decider.js';
import type { DomainEvent } from '../events/index.js';
import type { TransactionProvider } from '../events/transaction-events.js';

/**
 * A store transaction linked to its user (SPEC §15): the first link stands for ever; a repeat
 * by the same user changes nothing; another user's attempt is refused and kept for review
 * (once per user, so an app that re-sends its transactions at every launch adds nothing).
 */
export interface TransactionState {
  linked_to: string | null;
  /** Users whose attempt was refused (each recorded once). */
  refused: string[];
}

export interface LinkTransactionCommand {
  provider: TransactionProvider;
  transaction_id: string;
  app_user_id: string;
  app_account_token: string | null;
  obfuscated_external_account_id: string | null;
  now: Date;
}

/** `linked`: this call linked it; `already_linked`: it was linked to this user before; `refused`: another user holds it. */
export type LinkOutcome = 'linked' | 'already_linked' | 'refused';

/**
 * The stream key of a transaction: App Store ids (digits, ≤ 32) as they are; Play purchase
 * tokens (up to 4096 characters) by their SHA-256, so stream names stay short on every backend.
 */
export function transactionKey(provider: TransactionProvider, transactionId: string): string {
  return provider === 'app-store' ? transactionId : createHash('sha256').update(transactionId).digest('hex');
}

export const transactionEvolver: Evolver<TransactionState> = {
  name: 'transaction',
  version: 1,
  initialState: () => ({ linked_to: null, refused: [] }),
  evolve(state: TransactionState, event: DomainEvent): TransactionState {
    switch (event.type) {
      case 'TransactionLinked':
        return state.linked_to === null ? { ...state, linked_to: event.data.app_user_id } : state;
      case 'TransactionLinkRefused':
        return state.refused.includes(event.data.app_user_id) ? state : { ...state, refused: [...state.refused, event.data.app_user_id] };
      default:
        return state;
    }
  },
};

export function decideLinkTransaction(state: TransactionState, command: LinkTransactionCommand): Decision<LinkOutcome> {
  const { now, ...fields } = command;
  if (state.linked_to === null) {
    return { events: [{ type: 'TransactionLinked', data: { ...fields, linked_at: now.toISOString() } }], result: 'linked' };
  }
  if (state.linked_to === command.app_user_id) return { events: [], result: 'already_linked' };
  if (state.refused.includes(command.app_user_id)) return { events: [], result: 'refused' };
  return {
    events: [{ type: 'TransactionLinkRefused', data: { ...fields, linked_app_user_id: state.linked_to, attempted_at: now.toISOString() } }],
    result: 'refused',
  };
}
