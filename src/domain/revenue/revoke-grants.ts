import type { Decision, NewDomainEvent } from '../decider.js';
import type { PurchaseRef } from '../events/revenue-events.js';
import { expireDueRewards } from '../rewards/grant-and-expire.js';
import type { RewardKind } from '../rewards/reward-kinds.js';
import { evolveUser, ledgerBalance, type UserState } from '../users/user-state.js';

/** A grant to take back, as the clawback index (projections/revenue-index.ts) lists it. */
export interface GrantToRevoke {
  grant_id: string;
  entry_id: string;
  reward_key: string;
  kind: RewardKind;
  credits: number | null;
}

export interface RevokeGrantsCommand {
  grants: GrantToRevoke[];
  /** The converted user whose purchase was refunded. */
  claimer: string;
  refund: PurchaseRef;
  now: Date;
  /** Event id of the revocation of a grant (deterministic: derived from the refund event). */
  eventId: (grantId: string) => string;
}

/**
 * Clawback (SPEC §11): each grant made because of a refunded conversion is revoked. Credits
 * come back from the user's live entries of that reward, its own entry first; what was already
 * spent is a shortfall (the balance never goes below 0). Any other kind ends at once.
 */
export function decideRevokeGrants(state: UserState, command: RevokeGrantsCommand): Decision<null> {
  if (!state.exists) return { events: [], result: null };
  const revoked_at = command.now.toISOString();
  const events: NewDomainEvent[] = expireDueRewards(state, command.now);
  let current = events.reduce(evolveUser, state);
  for (const grant of command.grants) {
    const debits: { grant_id: string; credits: number }[] = [];
    let shortfall: number | null = null;
    let balanceAfter: number | null = null;
    if (grant.kind === 'credit') {
      let due = grant.credits ?? 0;
      const entries = current.entries
        .filter((entry) => entry.kind === 'credit' && entry.reward_key === grant.reward_key && (entry.credits ?? 0) > 0)
        .sort((a, b) => Number(b.entry_id === grant.entry_id) - Number(a.entry_id === grant.entry_id));
      for (const entry of entries) {
        if (due === 0) break;
        const taken = Math.min(due, entry.credits ?? 0);
        debits.push({ grant_id: entry.entry_id, credits: taken });
        due -= taken;
      }
      shortfall = due;
      balanceAfter = ledgerBalance(current, grant.reward_key) - debits.reduce((sum, debit) => sum + debit.credits, 0);
    }
    const event: NewDomainEvent = {
      id: command.eventId(grant.grant_id),
      type: 'RewardRevoked',
      data: {
        grant_id: grant.grant_id,
        entry_id: grant.entry_id,
        reward_key: grant.reward_key,
        kind: grant.kind,
        revoked_at,
        credits_granted: grant.credits,
        debits,
        shortfall,
        balance_after: balanceAfter,
        claimer: command.claimer,
        refund: command.refund,
      },
    };
    current = evolveUser(current, event);
    events.push(event);
  }
  return { events, result: null };
}
