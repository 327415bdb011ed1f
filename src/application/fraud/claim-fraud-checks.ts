import { inject, injectable } from 'tsyringe';
import { type DomainEvent, streams } from '../../domain/events/index.js';
import type { ClaimHold, FraudRule, RuleRef } from '../../domain/events/fraud-events.js';
import { hasKind, judgeParties, paymentCustomerOf, type RuleHit, type Verdict } from '../../domain/fraud/claim-rules.js';
import type { ClaimTarget } from '../../domain/users/claim-code.js';
import { type UserState, userEvolver } from '../../domain/users/user-state.js';
import type { Ids } from '../../ports/ids.js';
import { TOKENS } from '../../ports/tokens.js';
import type { CommandContext } from '../event-log.js';
import { StreamExecutor } from '../stream-executor.js';
import { FraudRuleQueries } from './fraud-rule-queries.js';
import { PaymentCustomerClaimers } from './payment-customer-claimers.js';

/**
 * The fraud rules' steps of one claim, bound to its target, claimer and request: `runClaim`
 * (src/application/commands/claim-code.ts) runs them between its own steps.
 */
export interface ClaimFraudSteps {
  /** The enabled rules (never empty: a claim no rule judges has no fraud steps). */
  rules: FraudRule[];
  /** The rules judged on the claimer and the referrer alone (before the slot). */
  judgeParties(claimer: UserState, now: Date): Promise<Verdict>;
  /** Counts the claimer's claim `claimId` for its payment customer; the stream to release if the claim fails. */
  countPaymentCustomer(claimer: UserState, claimId: string): Promise<{ hold: RuleHit | null; stream: string | null }>;
  releasePaymentCustomer(stream: string | null, claimId: string): Promise<void>;
  /** The hold recorded on the claim (same review id on every retry of the claim). */
  holdOf(hit: RuleHit | null, claimId: string): ClaimHold | null;
  /** Records a refusal by a `reject` rule in the claimer's stream. */
  recordRejection(rule: RuleRef, now: Date): Promise<void>;
}

/**
 * The claim's side of the fraud rules (SPEC §13): loads what the pure judges need (the rules in
 * force, the referrer's payment customer) and records their decisions. Rules guard referral
 * claims only: they protect referrer rewards; promo and affiliate codes have their own limits
 * and status.
 */
@injectable()
export class ClaimFraudChecks {
  constructor(
    @inject(FraudRuleQueries) private readonly rules: FraudRuleQueries,
    @inject(PaymentCustomerClaimers) private readonly paymentCustomers: PaymentCustomerClaimers,
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(TOKENS.Ids) private readonly ids: Ids,
  ) {}

  /** The rules that judge a claim of `target` (none for promo and affiliate codes, or unknown codes). */
  async rulesFor(target: ClaimTarget | null): Promise<FraudRule[]> {
    return target?.type === 'referral' ? this.rules.enabled() : [];
  }

  /** The fraud steps of `claimer`'s claim of `target`; null when no rule judges it. */
  async stepsFor(target: ClaimTarget | null, claimer: string, context: CommandContext): Promise<ClaimFraudSteps | null> {
    const rules = await this.rulesFor(target);
    if (rules.length === 0 || target === null) return null;
    return {
      rules,
      judgeParties: (state, now) => this.judgeParties(rules, state, target, now),
      countPaymentCustomer: (state, claimId) => this.countPaymentCustomer(rules, state, claimId, context),
      releasePaymentCustomer: (stream, claimId) => this.releasePaymentCustomer(stream, claimer, claimId, context),
      holdOf: (hit, claimId) => this.holdOf(hit, claimId),
      recordRejection: (rule, now) => this.recordRejection(claimer, rule, target, now, context),
    };
  }

  /** The rules judged on the claimer and the referrer alone. */
  async judgeParties(rules: FraudRule[], claimer: UserState, target: ClaimTarget, now: Date): Promise<Verdict> {
    if (!hasKind(rules, 'blocked_users', 'min_seconds_user_to_claim', 'same_payment_customer')) return { reject: null, hold: null };
    const referrer = target.owner_app_user_id ?? target.owner_id;
    // A claimer without a payment customer cannot share one: the referrer is not loaded then.
    const claimerCustomer = paymentCustomerOf(claimer);
    const referrerCustomer =
      hasKind(rules, 'same_payment_customer') && claimerCustomer !== null
        ? paymentCustomerOf((await this.executor.load(streams.user(referrer), userEvolver)).state)
        : null;
    return judgeParties(rules, {
      claimer: { app_user_id: claimer.app_user_id, created_at: claimer.created_at, payment_customer_id: claimerCustomer },
      referrer: { app_user_id: referrer, payment_customer_id: referrerCustomer },
      now,
    });
  }

  /** Counts the claimer for its payment customer when a rule needs it; the stream to release if the claim fails. */
  async countPaymentCustomer(
    rules: FraudRule[],
    claimer: UserState,
    claimId: string,
    context: CommandContext,
  ): Promise<{ hold: RuleHit | null; stream: string | null }> {
    const customer = paymentCustomerOf(claimer);
    if (!hasKind(rules, 'payment_customer_claimers') || customer === null) return { hold: null, stream: null };
    return this.paymentCustomers.count(customer, claimer.app_user_id, claimId, rules, context);
  }

  releasePaymentCustomer(stream: string | null, claimer: string, claimId: string, context: CommandContext): Promise<void> {
    return stream === null ? Promise.resolve() : this.paymentCustomers.release(stream, claimer, claimId, context);
  }

  /** The hold recorded on a claim: its review id derives from the claim, so it is the same on every retry. */
  holdOf(hit: RuleHit | null, claimId: string): ClaimHold | null {
    return hit === null ? null : { rule_id: hit.rule_id, kind: hit.kind, review_id: this.ids.derived('review', claimId) };
  }

  /** `ClaimRejectedByRule` in the claimer's stream: the refusal, naming the rule, for auditors. */
  async recordRejection(claimer: string, rule: RuleRef, target: ClaimTarget, now: Date, context: CommandContext): Promise<void> {
    const event: DomainEvent = {
      type: 'ClaimRejectedByRule',
      data: {
        rule_id: rule.rule_id,
        kind: rule.kind,
        code: target.code,
        referrer: target.owner_app_user_id ?? target.owner_id,
        rejected_at: now.toISOString(),
      },
    };
    await this.executor.execute(streams.user(claimer), userEvolver, () => ({ events: [event], result: null }), context);
  }
}
