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
  const after = Math.max(0, taken - 1);
  return { events: [{ type: 'ClaimSlotReleased', data: { claim_id: claimId, claimer, taken: after } }], result: after };
}

export type SlotRequest = { kind: 'take'; claim_id: string; claimer: string; limit: number } | { kind: 'release'; claim_id: string; claimer: string };

export type SlotOutcome = { ok: true } | { ok: false; error: DomainError };

/**
 * Slot requests queued on one code, decided in arrival order against the running count, so
 * they can be appended together. `requestOfEvent[i]` is the request that produced event i.
 */
export function decideSlotRequests(taken: number, requests: SlotRequest[]): Decision<{ outcomes: SlotOutcome[]; requestOfEvent: number[] }> {
  const events: Decision<unknown>['events'] = [];
  const outcomes: SlotOutcome[] = [];
  const requestOfEvent: number[] = [];
  let current = taken;
  requests.forEach((request, index) => {
    try {
      const decision =
        request.kind === 'take'
          ? decideTakeSlot(current, request.limit, request.claim_id, request.claimer)
          : decideReleaseSlot(current, request.claim_id, request.claimer);
      current = decision.result;
      for (const event of decision.events) {
        events.push(event);
        requestOfEvent.push(index);
      }
      outcomes.push({ ok: true });
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      outcomes.push({ ok: false, error });
    }
  });
  return { events, result: { outcomes, requestOfEvent } };
}
