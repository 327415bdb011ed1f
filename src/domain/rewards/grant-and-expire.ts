import type { NewDomainEvent } from '../decider.js';
import type { GrantCause } from '../events/user-events.js';
import { activeEntries, evolveUser, ledgerBalance, type UserState } from '../users/user-state.js';
import { expiryFor, isActiveAt } from './expiry.js';
import { SINGLETON_KINDS } from './reward-kinds.js';
import type { Deactivation, RewardDefinition } from './reward-schemas.js';

/** One reward to grant: its current definition and how long the entry lasts. */
export interface GrantSpec {
  reward: Pick<RewardDefinition, 'key' | 'kind' | 'credits'>;
  deactivation: Deactivation;
  /** The entry's clawback policy (SPEC §11); none when not given. */
  clawback?: 'none' | 'on_refund';
}

/**
 * `RewardGranted` events for `specs`, in order. Grant ids derive from `grantIdPrefix`
 * so a repeated decision produces the same ids. A basic or partner reward that is
 * already active is skipped (re-granting extends nothing). Credits accumulate: a credit grant
 * adds to the active entry of that reward with the same `expires_at`, or opens a new one
 * (SPEC §5.3); every other grant opens its own entry.
 */
export function grantRewards(state: UserState, specs: GrantSpec[], cause: GrantCause, grantIdPrefix: string, now: Date): NewDomainEvent[] {
  const events: NewDomainEvent[] = [];
  let current = state;
  specs.forEach((spec, index) => {
    const { reward } = spec;
    const active = activeEntries(current, now);
    if (SINGLETON_KINDS.includes(reward.kind) && active.some((entry) => entry.reward_key === reward.key)) return;
    const grantId = `${grantIdPrefix}/${index}`;
    const expiresAt = expiryFor(spec.deactivation, now);
    const credits = reward.kind === 'credit' ? (reward.credits ?? 0) : null;
    const sameEntry =
      reward.kind === 'credit'
        ? active.find((entry) => entry.kind === 'credit' && entry.reward_key === reward.key && entry.expires_at === expiresAt)
        : undefined;
    const event: NewDomainEvent = {
      type: 'RewardGranted',
      data: {
        grant_id: grantId,
        entry_id: sameEntry?.entry_id ?? grantId,
        reward_key: reward.key,
        kind: reward.kind,
        credits,
        granted_at: now.toISOString(),
        expires_at: expiresAt,
        cause,
        clawback: spec.clawback ?? 'none',
        balance_after: credits === null ? null : ledgerBalance(current, reward.key) + credits,
      },
    };
    current = evolveUser(current, event);
    events.push(event);
  });
  return events;
}

/**
 * `RewardExpired` for every entry whose `expires_at` has passed but whose expiry is not
 * yet recorded. Commands put these first so the credit ledger sees expiries before the
 * movements that follow them.
 */
export function expireDueRewards(state: UserState, now: Date): NewDomainEvent[] {
  const events: NewDomainEvent[] = [];
  let current = state;
  for (const entry of state.entries) {
    if (isActiveAt(entry.expires_at, now)) continue;
    const balanceBefore = entry.kind === 'credit' ? ledgerBalance(current, entry.reward_key) : null;
    const event: NewDomainEvent = {
      type: 'RewardExpired',
      data: {
        grant_id: entry.entry_id,
        reward_key: entry.reward_key,
        kind: entry.kind,
        expired_at: entry.expires_at!,
        credits_forfeited: entry.credits,
        balance_after: balanceBefore === null ? null : balanceBefore - (entry.credits ?? 0),
      },
    };
    current = evolveUser(current, event);
    events.push(event);
  }
  return events;
}
