import type { DomainEvent, EventDataOf } from '../events/index.js';
import type { PooledValue } from '../events/user-events.js';
import type { RewardKind } from './reward-kinds.js';

/**
 * A reward entry (SPEC §5.3): what one grant opened, plus the credit grants of the same reward
 * and `expires_at` added to it, the credits withdrawn or clawed back from it and its pooled
 * value. The user's decision state (HeldEntry, src/domain/users/user-state.ts) and the users
 * read model (RewardEntryDoc, projections/users.ts) both keep these fields and change them by
 * the rules below, the one home of the entry arithmetic. What each keeps of an ended entry
 * differs, and stays with each: the decision state drops it, the read model marks it expired.
 */
export interface RewardEntry {
  /** The grant_id of the entry's first grant. */
  entry_id: string;
  reward_key: string;
  kind: RewardKind;
  /** Credits left (credit entries; 0 once drained, listed until it expires); null for other kinds. */
  credits: number | null;
  expires_at: string | null;
  /** The pooled one-time code given to it (offer_code, store_promo_code), else null. */
  value: PooledValue | null;
  /** Its first grant. */
  created_at: string;
  /** Its last change (a grant adding to it, a withdrawal, a code given), null before one. */
  updated_at: string | null;
}

/** The entry a grant opens; null when the grant adds to the entry its `entry_id` names. */
export function entryOpenedBy(grant: EventDataOf<'RewardGranted'>): RewardEntry | null {
  if (grant.entry_id !== grant.grant_id) return null;
  return {
    entry_id: grant.entry_id,
    reward_key: grant.reward_key,
    kind: grant.kind,
    credits: grant.credits,
    expires_at: grant.expires_at,
    value: null,
    created_at: grant.granted_at,
    updated_at: null,
  };
}

/** Credits debited from `entryId` by a withdrawal or a credit clawback. */
function debitedFrom(entryId: string, debits: readonly { grant_id: string; credits: number }[]): number {
  return debits.reduce((sum, debit) => (debit.grant_id === entryId ? sum + debit.credits : sum), 0);
}

/** The ids of the existing entries whose credits or value `event` changes (an entry it opens is not one). */
export function entriesChangedBy(event: DomainEvent): string[] {
  switch (event.type) {
    case 'RewardGranted':
      return event.data.entry_id === event.data.grant_id ? [] : [event.data.entry_id];
    case 'RewardValueAssigned':
      return [event.data.grant_id];
    case 'CreditsWithdrawn':
      return [...new Set(event.data.debits.map((debit) => debit.grant_id))];
    case 'RewardRevoked':
      return event.data.kind === 'credit' ? [...new Set(event.data.debits.map((debit) => debit.grant_id))] : [];
    default:
      return [];
  }
}

/** `entry` after `event`, for an entry `entriesChangedBy(event)` names. */
export function entryAfter<E extends RewardEntry>(entry: E, event: DomainEvent): E {
  switch (event.type) {
    case 'RewardGranted':
      return { ...entry, credits: (entry.credits ?? 0) + (event.data.credits ?? 0), updated_at: event.data.granted_at };
    case 'RewardValueAssigned':
      return { ...entry, value: event.data.value, updated_at: event.data.assigned_at };
    case 'CreditsWithdrawn':
      return { ...entry, credits: (entry.credits ?? 0) - debitedFrom(entry.entry_id, event.data.debits), updated_at: event.data.withdrawn_at };
    case 'RewardRevoked':
      return { ...entry, credits: (entry.credits ?? 0) - debitedFrom(entry.entry_id, event.data.debits), updated_at: event.data.revoked_at };
    default:
      return entry;
  }
}
