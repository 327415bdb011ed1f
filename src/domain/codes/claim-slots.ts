import type { Decision } from '../decider.js';
import { DomainError } from '../domain-error.js';
import type { ClaimWindow } from '../events/code-events.js';
import type { FraudRule } from '../events/fraud-events.js';
import type { DomainEvent } from '../events/index.js';
import { judgeReferrerRate, type RuleHit, rejectedByRule, windowAfterClaim, windowWithoutClaim } from '../fraud/claim-rules.js';

/** What the latest event of a `code-{CODE}` stream tells: slots held and this hour's and day's claims. */
export interface SlotCounts {
  taken: number;
  window: ClaimWindow | undefined;
}

export function slotCounts(latest: DomainEvent | undefined): SlotCounts {
  if (latest && (latest.type === 'ClaimSlotTaken' || latest.type === 'ClaimSlotReleased')) return { taken: latest.data.taken, window: latest.data.window };
  return { taken: 0, window: undefined };
}

/** The latest event of a `code-{CODE}` stream tells how many claim slots are held. */
export function slotsTaken(latest: DomainEvent | undefined): number {
  return slotCounts(latest).taken;
}

export interface TakeSlot {
  claim_id: string;
  claimer: string;
  limit: number;
  /** When the claim is made: the hour and day it counts in (absent: no window is kept). */
  now?: Date;
  /** The enabled fraud rules (referral codes only); the referrer's rate rules are judged here, on the counts. */
  rules?: readonly FraudRule[];
  /** A `reject` rule the claim's parties already hit: refused here, after the limit (SPEC §5.1's order first). */
  refused?: RuleHit | null;
  /**
   * Slots the same claimer still holds from earlier claims abandoned in its stream (an attempt
   * that died half-way): released just before this one is taken, whatever its outcome, so that
   * no other claimer takes the slot in between.
   */
  replacing?: readonly string[];
}

/** SPEC §5.1 step 8: a code with limit N is claimed by at most N users (0 = unlimited). */
export function hasFreeSlot(taken: number, limit: number): boolean {
  return limit === 0 || taken < limit;
}

export function decideTakeSlot(taken: number, limit: number, claimId: string, claimer: string): Decision<number> {
  if (!hasFreeSlot(taken, limit)) throw new DomainError('CLAIM.LIMIT_REACHED', 'This code has reached its claim limit', '/code');
  return { events: [{ type: 'ClaimSlotTaken', data: { claim_id: claimId, claimer, taken: taken + 1 } }], result: taken + 1 };
}

/**
 * The limit (step 8), then the fraud rules (SPEC §13): a `reject` rule refuses the claim, the
 * first `hold` rule is the result. The slot event carries this hour's and day's claims.
 */
export function decideGuardedTake(counts: SlotCounts, take: TakeSlot): Decision<{ counts: SlotCounts; hold: RuleHit | null }> {
  const limited = decideTakeSlot(counts.taken, take.limit, take.claim_id, take.claimer);
  if (take.refused) throw rejectedByRule(take.refused);
  if (take.now === undefined) return { events: limited.events, result: { counts: { taken: limited.result, window: counts.window }, hold: null } };
  const rate = judgeReferrerRate(take.rules ?? [], counts.window, take.now);
  if (rate.reject) throw rejectedByRule(rate.reject);
  const after = { taken: limited.result, window: windowAfterClaim(counts.window, take.now) };
  return {
    events: [{ type: 'ClaimSlotTaken', data: { claim_id: take.claim_id, claimer: take.claimer, taken: after.taken, window: after.window } }],
    result: { counts: after, hold: rate.hold },
  };
}

/**
 * A released slot no longer counts toward the limit. A claim that was refused after its slot was
 * taken (`refusedAt`: when it was made; the payment-customer rule) no longer counts in its hour
 * and day either: it did not happen. One that did not complete for another reason (a crash, a
 * lost race) still counts there, on the safe side: the service cannot tell it never happened.
 */
export function decideReleaseSlot(counts: SlotCounts, claimId: string, claimer: string, refusedAt?: Date): Decision<{ counts: SlotCounts }> {
  const after = { taken: Math.max(0, counts.taken - 1), window: refusedAt ? windowWithoutClaim(counts.window, refusedAt) : counts.window };
  return {
    events: [{ type: 'ClaimSlotReleased', data: { claim_id: claimId, claimer, taken: after.taken, ...(after.window ? { window: after.window } : {}) } }],
    result: { counts: after },
  };
}

export type SlotRequest = ({ kind: 'take' } & TakeSlot) | { kind: 'release'; claim_id: string; claimer: string; refused_at?: Date };

export type SlotOutcome = { ok: true; hold: RuleHit | null } | { ok: false; error: DomainError };

/**
 * Slot requests queued on one code, decided in arrival order against the running counts, so
 * they can be appended together. `requestOfEvent[i]` is the request that produced event i.
 */
export function decideSlotRequests(start: SlotCounts, requests: SlotRequest[]): Decision<{ outcomes: SlotOutcome[]; requestOfEvent: number[] }> {
  const events: Decision<unknown>['events'] = [];
  const outcomes: SlotOutcome[] = [];
  const requestOfEvent: number[] = [];
  let current = start;
  requests.forEach((request, index) => {
    const emit = (decision: Decision<unknown>) => {
      for (const event of decision.events) {
        events.push(event);
        requestOfEvent.push(index);
      }
    };
    const release = (claimId: string, refusedAt?: Date) => {
      const released = decideReleaseSlot(current, claimId, request.claimer, refusedAt);
      current = released.result.counts;
      emit(released);
    };
    if (request.kind === 'release') {
      release(request.claim_id, request.refused_at);
      outcomes.push({ ok: true, hold: null });
      return;
    }
    for (const claimId of request.replacing ?? []) release(claimId);
    try {
      const taken = decideGuardedTake(current, request);
      current = taken.result.counts;
      emit(taken);
      outcomes.push({ ok: true, hold: taken.result.hold });
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      outcomes.push({ ok: false, error });
    }
  });
  return { events, result: { outcomes, requestOfEvent } };
}
