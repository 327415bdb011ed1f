import type { Decision } from '../decider.js';
import type { DomainEvent } from '../events/index.js';
import type { FraudRule } from '../events/fraud-events.js';
import { judgePaymentCustomerClaimers, rejectedByRule, type RuleHit } from './claim-rules.js';

/**
 * The payment customer's claimers counter (SPEC §13, `payment_customer_claimers`), decided on
 * the latest event of `payment-customer-{digest}` alone: it carries the count and the recent
 * claimers (keyed digests), so a decision costs the same however many claims went before.
 */
type RecentClaimer = { claimer: string; claims: string[] };
interface Counter {
  claimers: number;
  recent: RecentClaimer[];
}

/** Claimers remembered with their unreleased claims, and claims remembered per claimer. */
const RECENT_CLAIMERS = 32;
const CLAIMS_PER_CLAIMER = 4;

function counterOf(latest: DomainEvent | undefined): Counter {
  return latest && (latest.type === 'PaymentCustomerClaimCounted' || latest.type === 'PaymentCustomerClaimReleased')
    ? { claimers: latest.data.claimers, recent: latest.data.recent ?? [] }
    : { claimers: 0, recent: [] };
}

/**
 * The rule `payment_customer_claimers`: `claimer`'s claim `claimId` (both keyed digests) when its
 * payment customer already has `claimers`. A claimer already counted with a claim that was not
 * released (one that died between the count and the claim, or one in flight elsewhere) is the
 * same claimer: judged against the other claimers counted, and not counted again.
 */
export function decideCountPaymentCustomerClaim(
  latest: DomainEvent | undefined,
  rules: readonly FraudRule[],
  claimer: string,
  claimId: string,
): Decision<RuleHit | null> {
  const { claimers, recent } = counterOf(latest);
  const earlier = recent.find((entry) => entry.claimer === claimer);
  const verdict = judgePaymentCustomerClaimers(rules, earlier ? claimers - 1 : claimers);
  if (verdict.reject) throw rejectedByRule(verdict.reject);
  const counted: Counter = earlier
    ? { claimers, recent: recent.map((entry) => (entry === earlier ? { claimer, claims: [...entry.claims, claimId].slice(-CLAIMS_PER_CLAIMER) } : entry)) }
    : { claimers: claimers + 1, recent: [...recent, { claimer, claims: [claimId] }].slice(-RECENT_CLAIMERS) };
  return { events: [{ type: 'PaymentCustomerClaimCounted', data: counted }], result: verdict.hold };
}

/**
 * Gives `claimer`'s claim `claimId` back when it did not happen after all: the claimer stops
 * counting once none of its claims is left. A claim of a remembered claimer released already
 * changes nothing; a claimer not remembered (counted before `recent` was kept, or pushed out by
 * RECENT_CLAIMERS later ones) is uncounted, as every release was before.
 */
export function decideReleasePaymentCustomerClaim(latest: DomainEvent | undefined, claimer: string, claimId: string): Decision<null> {
  const { claimers, recent } = counterOf(latest);
  const entry = recent.find((candidate) => candidate.claimer === claimer);
  let released: Counter;
  if (!entry) released = { claimers: Math.max(0, claimers - 1), recent };
  else if (!entry.claims.includes(claimId)) return { events: [], result: null };
  else {
    const claims = entry.claims.filter((id) => id !== claimId);
    released =
      claims.length > 0
        ? { claimers, recent: recent.map((candidate) => (candidate === entry ? { claimer, claims } : candidate)) }
        : { claimers: Math.max(0, claimers - 1), recent: recent.filter((candidate) => candidate !== entry) };
  }
  return { events: [{ type: 'PaymentCustomerClaimReleased', data: released }], result: null };
}
