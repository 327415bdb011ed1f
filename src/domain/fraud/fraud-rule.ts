import type { Decision } from '../decider.js';
import { DomainError } from '../domain-error.js';
import { timestamps } from '../catalog/config-state.js';
import type { FraudRule, FraudRuleKind } from '../events/fraud-events.js';
import type { Evolver } from '../decider.js';

/** The parameters of each rule kind (SPEC §13); the admin API validates them (src/http/schemas/fraud.ts). */
interface RuleParamsByKind {
  referrer_claims_per_hour: { max: number };
  referrer_claims_per_day: { max: number };
  min_seconds_user_to_claim: { seconds: number };
  min_seconds_claim_to_conversion: { seconds: number };
  same_payment_customer: Record<string, never>;
  payment_customer_claimers: { max: number };
  blocked_users: { app_user_ids: string[] };
}

export type RuleParams<K extends FraudRuleKind> = RuleParamsByKind[K];

export type RuleInput = Omit<FraudRule, 'created_at' | 'updated_at'>;

export const fraudRuleEvolver: Evolver<FraudRule | null> = {
  name: 'fraud-rule',
  version: 1,
  initialState: () => null,
  evolve: (state, event) => (event.type === 'FraudRuleCreated' || event.type === 'FraudRuleUpdated' ? event.data.rule : state),
};

/**
 * PUT /admin/rules/{id}. The kind is fixed once created (decisions in the log name the rule by
 * id, so an id keeps one meaning); params, action and enabled may change.
 */
export function decideDefineRule(existing: FraudRule | null, input: RuleInput, now: Date): Decision<{ created: boolean; rule: FraudRule }> {
  if (existing && existing.kind !== input.kind) {
    throw new DomainError('RULE.IMMUTABLE_FIELD', `The kind of rule ${input.id} is ${existing.kind}; create a new rule for another kind`, '/kind');
  }
  const rule: FraudRule = { ...input, ...timestamps(existing, now) };
  return { events: [{ type: existing ? 'FraudRuleUpdated' : 'FraudRuleCreated', data: { rule } }], result: { created: existing === null, rule } };
}
