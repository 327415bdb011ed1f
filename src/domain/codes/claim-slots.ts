import type { Decision } from '../decider.js';
import { DomainError } from '../domain-error.js';
import type { DomainEvent } from '../events/index.js';

/** The latest event of a `code-{CODE}` stream tells how many claim slots are held. */
export function slotsTaken(latest: DomainEvent | undefined): number {
  if (latest && (latest.type === 'ClaimSlotTaken' || latest.type === 'ClaimSlotReleased')) return latest.data.taken;
  return 0;
}

/** SPEC §5.1 step 8: a code with limit N is claimed by at most N users (0 = unlimited). */
export function decideTakeSlot(taken: number, limit: number, claimId: string, claimer: string): Decision<number> {
  if (limit > 0 && taken >= limit) throw new DomainError('CLAIM.LIMIT_REACHED', 'This code has reached its claim limit', '/code');
  return { events: [{ type: 'ClaimSlotTaken', data: { claim_id: claimId, claimer, taken: taken + 1 } }], result: taken + 1 };
}

export function decideReleaseSlot(taken: number, claimId: string, claimer: string): Decision<number> {
  return {
    events: [{ type: 'ClaimSlotReleased', data: { claim_id: claimId, claimer, taken: Math.max(0, taken - 1) } }],
    result: taken - 1,
  };
}
