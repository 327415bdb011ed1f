import { DomainError } from '../domain-error.js';
import type { ClaimWindow } from '../events/code-events.js';
import type { FraudRule, FraudRuleKind, RuleAction, RuleRef } from '../events/fraud-events.js';
import type { RuleParams } from './fraud-rule.js';

/*
 * What the fraud rules (SPEC §13) say about one referral claim or conversion. Pure: the
 * caller loads the rules, the parties and the counters first. Rules are judged in id order;
 * any `reject` wins over every `hold`.
 */

/** A rule that a claim or conversion met, and what it does. */
export interface RuleHit extends RuleRef {
  action: RuleAction;
}

export interface Verdict {
  reject: RuleHit | null;
  hold: RuleHit | null;
}

export const NO_VERDICT: Verdict = { reject: null, hold: null };

function params<K extends FraudRuleKind>(rule: FraudRule, _kind: K): RuleParams<K> {
  return rule.params as RuleParams<K>;
}

function hit(rule: FraudRule): RuleHit {
  return { rule_id: rule.id, kind: rule.kind, action: rule.action };
}

function verdictOf(hits: RuleHit[]): Verdict {
  return { reject: hits.find((one) => one.action === 'reject') ?? null, hold: hits.find((one) => one.action === 'hold') ?? null };
}

/** 422 `CLAIM.REJECTED_BY_RULE`; `source` names the rule (`rule:{id}`). */
export class RejectedByRule extends DomainError {
  readonly rule: RuleRef;

  constructor(rule: RuleRef) {
    super('CLAIM.REJECTED_BY_RULE', `The claim was refused by fraud rule ${rule.rule_id} (${rule.kind})`, `rule:${rule.rule_id}`);
    this.rule = { rule_id: rule.rule_id, kind: rule.kind };
  }
}

export function rejectedByRule(rule: RuleRef): RejectedByRule {
  return new RejectedByRule(rule);
}

export interface ClaimParties {
  claimer: { app_user_id: string; created_at: string | null; payment_customer_id: string | null };
  referrer: { app_user_id: string; payment_customer_id: string | null };
  now: Date;
}

/**
 * A blocklist as a set, made once per list: the rules in force are cached between claims, so
 * the same list comes back claim after claim, and a 1,000-id list is not scanned twice per claim.
 * Keyed by the list itself, which never changes (the cached rules are frozen, FraudRuleQueries):
 * a changed rule is a new list, and the old one's set goes with it.
 */
const blocklists = new WeakMap<readonly string[], ReadonlySet<string>>();
function blocklistOf(rule: FraudRule): ReadonlySet<string> {
  const ids = params(rule, 'blocked_users').app_user_ids;
  const known = blocklists.get(ids);
  if (known) return known;
  const made = new Set(ids);
  blocklists.set(ids, made);
  return made;
}

/** The rules judged on the two users alone: blocked users, account age, a shared payment customer. */
export function judgeParties(rules: readonly FraudRule[], parties: ClaimParties): Verdict {
  const { claimer, referrer, now } = parties;
  const hits = rules.filter((rule) => {
    switch (rule.kind) {
      case 'blocked_users': {
        const blocked = blocklistOf(rule);
        return blocked.has(claimer.app_user_id) || blocked.has(referrer.app_user_id);
      }
      case 'min_seconds_user_to_claim':
        // The service's own registration time: first_seen_at comes from the client and could be backdated.
        return claimer.created_at !== null && now.getTime() - Date.parse(claimer.created_at) < params(rule, 'min_seconds_user_to_claim').seconds * 1000;
      case 'same_payment_customer':
        return paymentCustomerOf(claimer) !== null && paymentCustomerOf(claimer) === paymentCustomerOf(referrer);
      default:
        return false;
    }
  });
  return verdictOf(hits.map(hit));
}

/**
 * The payment customer a user names for the fraud rules: an empty or blank
 * `payment_customer_id` (how some SDKs send "unset") names none, so it is never shared.
 */
export function paymentCustomerOf(user: { payment_customer_id: string | null }): string | null {
  const id = user.payment_customer_id;
  return id === null || id.trim() === '' ? null : id;
}

const hourOf = (now: Date) => now.toISOString().slice(0, 13);
const dayOf = (now: Date) => now.toISOString().slice(0, 10);

/** Claims already counted in the UTC hour and day of `now`. */
function claimsInWindow(window: ClaimWindow | undefined, now: Date): { hour: number; day: number } {
  if (!window) return { hour: 0, day: 0 };
  return { hour: window.hour === hourOf(now) ? window.hour_claims : 0, day: window.day === dayOf(now) ? window.day_claims : 0 };
}

/** The window after one more claim at `now`. */
export function windowAfterClaim(window: ClaimWindow | undefined, now: Date): ClaimWindow {
  const counted = claimsInWindow(window, now);
  return { hour: hourOf(now), hour_claims: counted.hour + 1, day: dayOf(now), day_claims: counted.day + 1 };
}

/**
 * The window without a claim made at `claimedAt` that was refused after it was counted: its hour
 * and day each lose one, if the window still counts that hour or day.
 */
export function windowWithoutClaim(window: ClaimWindow | undefined, claimedAt: Date): ClaimWindow | undefined {
  if (!window) return window;
  return {
    ...window,
    hour_claims: window.hour === hourOf(claimedAt) ? Math.max(0, window.hour_claims - 1) : window.hour_claims,
    day_claims: window.day === dayOf(claimedAt) ? Math.max(0, window.day_claims - 1) : window.day_claims,
  };
}

/** The referrer's rate rules: would this claim go past `max` claims in the clock hour or day? */
export function judgeReferrerRate(rules: readonly FraudRule[], window: ClaimWindow | undefined, now: Date): Verdict {
  const counted = claimsInWindow(window, now);
  const hits = rules.filter((rule) => {
    if (rule.kind === 'referrer_claims_per_hour') return counted.hour >= params(rule, 'referrer_claims_per_hour').max;
    if (rule.kind === 'referrer_claims_per_day') return counted.day >= params(rule, 'referrer_claims_per_day').max;
    return false;
  });
  return verdictOf(hits.map(hit));
}

/** Would this claimer go past `max` claimers of one payment customer? `claimers`: counted before it. */
export function judgePaymentCustomerClaimers(rules: readonly FraudRule[], claimers: number): Verdict {
  const hits = rules.filter((rule) => rule.kind === 'payment_customer_claimers' && claimers >= params(rule, 'payment_customer_claimers').max);
  return verdictOf(hits.map(hit));
}

/** A conversion sooner than `seconds` after its claim. */
export function judgeConversion(rules: readonly FraudRule[], claimedAt: string, convertedAt: string): Verdict {
  const elapsed = Date.parse(convertedAt) - Date.parse(claimedAt);
  const hits = rules.filter(
    (rule) => rule.kind === 'min_seconds_claim_to_conversion' && elapsed < params(rule, 'min_seconds_claim_to_conversion').seconds * 1000,
  );
  return verdictOf(hits.map(hit));
}

export function hasKind(rules: readonly FraudRule[], ...kinds: FraudRuleKind[]): boolean {
  return rules.some((rule) => kinds.includes(rule.kind));
}
