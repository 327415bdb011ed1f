import { z } from 'zod';
import { deactivationSchema, isoDateTime } from '../rewards/reward-schemas.js';
import { REWARD_KINDS } from '../rewards/reward-kinds.js';

/**
 * Fraud rules and their decisions (SPEC §13). Streams: `rule-{id}` (a rule's configuration,
 * with history), `review-{id}` (one held claim or conversion and its decision),
 * `payment-customer-{digest}` (how many claimers shared one payment customer; the stream is
 * named by a keyed digest, never by the plaintext id). Decisions about a claim are also
 * recorded where they happen: `ClaimRejectedByRule` in the claimer's stream, `SenderRewardsHeld`
 * / `HeldRewardsReleased` in the referrer's stream. Every decision names its rule.
 */

export const FRAUD_RULE_KINDS = [
  'referrer_claims_per_hour',
  'referrer_claims_per_day',
  'min_seconds_user_to_claim',
  'min_seconds_claim_to_conversion',
  'same_payment_customer',
  'payment_customer_claimers',
  'blocked_users',
] as const;
export type FraudRuleKind = (typeof FRAUD_RULE_KINDS)[number];

export const RULE_ACTIONS = ['reject', 'hold'] as const;
export type RuleAction = (typeof RULE_ACTIONS)[number];

const fraudRuleSchema = z.object({
  id: z.string(),
  kind: z.enum(FRAUD_RULE_KINDS),
  /** The kind's parameters, validated per kind by the admin API (src/domain/fraud/fraud-rule.ts). */
  params: z.record(z.string(), z.unknown()),
  action: z.enum(RULE_ACTIONS),
  enabled: z.boolean(),
  created_at: isoDateTime,
  updated_at: isoDateTime.nullable(),
});
export type FraudRule = z.infer<typeof fraudRuleSchema>;

/** The rule a decision followed: enough for an auditor without reading the rule's stream. */
const ruleRefSchema = z.object({ rule_id: z.string(), kind: z.enum(FRAUD_RULE_KINDS) });
export type RuleRef = z.infer<typeof ruleRefSchema>;

/** A claim put on hold: the review that decides its referrer's rewards. */
export const claimHoldSchema = ruleRefSchema.extend({ review_id: z.string() });
export type ClaimHold = z.infer<typeof claimHoldSchema>;

const heldGrantSchema = z.object({
  reward: z.object({ key: z.string(), kind: z.enum(REWARD_KINDS), credits: z.number().int().nullable() }),
  deactivation: deactivationSchema,
  clawback: z.enum(['none', 'on_refund']).optional(),
});
export type HeldGrant = z.infer<typeof heldGrantSchema>;

/** A claimer counted for a payment customer, by a keyed digest of its id, with its claims not released. */
const recentClaimerSchema = z.object({ claimer: z.string(), claims: z.array(z.string()) });

export const fraudEvents = {
  FraudRuleCreated: z.object({ rule: fraudRuleSchema }),
  FraudRuleUpdated: z.object({ rule: fraudRuleSchema }),
  /**
   * In the claimer's stream: a rule with action `reject` refused this claim. Nothing else changed,
   * but for what the claim had taken being given back (`ClaimAbandoned` and `ClaimSlotReleased`,
   * `PaymentCustomerClaimReleased`).
   */
  ClaimRejectedByRule: ruleRefSchema.extend({ code: z.string(), referrer: z.string(), rejected_at: isoDateTime }),
  /** In the referrer's stream, with the count it belongs to: the sender rewards that wait for the review. */
  SenderRewardsHeld: claimHoldSchema.extend({
    claimer: z.string(),
    code: z.string(),
    variant: z.enum(['claim', 'conversion']),
    count: z.number().int(),
    program_id: z.string().nullable(),
    rewards: z.array(heldGrantSchema),
  }),
  /** In the referrer's stream: a conversion's sender rewards refused by a `reject` rule (the conversion still counts). */
  SenderRewardsRefused: ruleRefSchema.extend({ claimer: z.string(), code: z.string(), variant: z.enum(['claim', 'conversion']), count: z.number().int() }),
  /** In the referrer's stream: the review decided; when approved, the held grants follow in the same append. */
  HeldRewardsReleased: claimHoldSchema.extend({ decision: z.enum(['approved', 'rejected']) }),
  ReviewOpened: claimHoldSchema.extend({
    referrer: z.string(),
    claimer: z.string(),
    code: z.string(),
    variant: z.enum(['claim', 'conversion']),
    opened_at: isoDateTime,
  }),
  /** `opened_position`: log position of the review's `ReviewOpened` (the reviews list is in that order). */
  ReviewApproved: claimHoldSchema.extend({ referrer: z.string(), decided_at: isoDateTime, opened_position: z.string() }),
  ReviewRejected: claimHoldSchema.extend({ referrer: z.string(), decided_at: isoDateTime, opened_position: z.string() }),
  /**
   * `claimers`: claimers counted for this payment customer after the event. `recent`: the latest
   * claimers counted (keyed digests of their ids, never the ids), each with the claims of theirs
   * counted and not released: a claimer's retry after a claim that died is not counted again.
   * Absent on events written before it was kept.
   */
  PaymentCustomerClaimCounted: z.object({ claimers: z.number().int(), recent: z.array(recentClaimerSchema).optional() }),
  PaymentCustomerClaimReleased: z.object({ claimers: z.number().int(), recent: z.array(recentClaimerSchema).optional() }),
};
