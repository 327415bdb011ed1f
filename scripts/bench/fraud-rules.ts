import { call } from './processes.js';

/**
 * `claims.guarded`: every fraud rule kind switched on (SPEC §13), with parameters no bench claim
 * reaches, so each claim pays for judging them — the rule lookup, the referrer's payment
 * customer, the hourly and daily counts in the code stream, and one more append to the
 * claimer's payment-customer counter — and every claim still succeeds.
 */
const GUARD_RULES: Record<string, { kind: string; params: Record<string, unknown> }> = {
  'bench-hourly': { kind: 'referrer_claims_per_hour', params: { max: 1_000_000 } },
  'bench-daily': { kind: 'referrer_claims_per_day', params: { max: 1_000_000 } },
  'bench-account-age': { kind: 'min_seconds_user_to_claim', params: { seconds: 1 } },
  'bench-conversion-delay': { kind: 'min_seconds_claim_to_conversion', params: { seconds: 60 } },
  'bench-self-referral': { kind: 'same_payment_customer', params: {} },
  'bench-shared-card': { kind: 'payment_customer_claimers', params: { max: 1_000_000 } },
  'bench-blocklist': { kind: 'blocked_users', params: { app_user_ids: Array.from({ length: 1000 }, (_, index) => `blocked-${index}`) } },
};

export async function setGuardRules(url: string, enabled: boolean): Promise<void> {
  for (const [id, rule] of Object.entries(GUARD_RULES)) {
    const answer = await call(url, 'PUT', `/admin/rules/${id}`, { ...rule, action: 'reject', enabled });
    if (answer.status !== 200 && answer.status !== 201) throw new Error(`PUT /admin/rules/${id} answered ${answer.status}: ${answer.text}`);
  }
}
