import type { NewDomainEvent } from '../decider.js';
import type { GrantCause } from '../events/user-events.js';
import { activeGrants, evolveUser, type UserState } from '../users/user-state.js';
import { expiryFor, isActiveAt } from './expiry.js';
import { SINGLETON_KINDS } from './reward-kinds.js';
import type { Deactivation, RewardDefinition } from './reward-schemas.js';

/** One reward to grant: its current definition and how long the entry lasts. */
export interface GrantSpec {
  reward: Pick<RewardDefinition, 'key' | 'kind' | 'credits'>;
  deactivation: Deactivation;
}

/**
 * `RewardGranted` events for `specs`, in order. Grant ids derive from `grantIdPrefix`
 * so a repeated decision produces the same ids. A basic or partner reward that is
 * already active is skipped (re-granting extends nothing); credits stack.
 */
export function grantRewards(
  state: UserState,
  specs: GrantSpec[],
  cause: GrantCause,
  grantIdPrefix: string,
  now: Date,
): NewDomainEvent[] {
  const events: NewDomainEvent[] = [];
  let current = state;
  specs.forEach((spec, index) => {
    const { reward } = spec;
    if (SINGLETON_KINDS.includes(reward.kind) && activeGrants(current, now).some((grant) => grant.reward_key === reward.key)) {
      return;
    }
    const expiresAt = expiryFor(spec.deactivation, now);
    const credits = reward.kind === 'credit' ? (reward.credits ?? 0) : null;
    const event: NewDomainEvent = {
      type: 'RewardGranted',
      data: {
        grant_id: `${grantIdPrefix}/${index}`,
        entry_id: `${grantIdPrefix}/${index}`,
        reward_key: reward.key,
        kind: reward.kind,
        credits,
        granted_at: now.toISOString(),
        expires_at: expiresAt,
        cause,
        balance_after:
          credits === null ? null : ledgerBalance(current, reward.key) + credits,
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
  for (const grant of state.grants) {
    if (grant.expired || isActiveAt(grant.expires_at, now)) continue;
    const balanceBefore = grant.kind === 'credit' ? ledgerBalance(current, grant.reward_key) : null;
    const event: NewDomainEvent = {
      type: 'RewardExpired',
      data: {
        grant_id: grant.grant_id,
        reward_key: grant.reward_key,
        kind: grant.kind,
        expired_at: grant.expires_at!,
        credits_forfeited: grant.credits,
        balance_after: balanceBefore === null ? null : balanceBefore - (grant.credits ?? 0),
      },
    };
    current = evolveUser(current, event);
    events.push(event);
  }
  return events;
}

/**
 * Credits of `key` in entries whose expiry is not recorded yet: the running balance of the
 * credit ledger. Deciders record due expiries first, so it equals the active balance.
 */
export function ledgerBalance(state: UserState, key: string): number {
  return state.grants
    .filter((grant) => grant.reward_key === key && grant.kind === 'credit' && !grant.expired)
    .reduce((sum, grant) => sum + (grant.credits ?? 0), 0);
}
