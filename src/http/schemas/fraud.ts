import { FRAUD_RULE_KINDS, RULE_ACTIONS } from '../../domain/events/fraud-events.js';
import { REVIEW_STATUSES } from '../../domain/fraud/review.js';
import { appUserId, logPosition, logPositionDoc, outDateTime, pageLimit } from './common.js';
import { programId } from './admin.js';
import { z } from './zod-openapi.js';

export const ruleId = programId.openapi({ example: 'referrer-hourly' });
export const reviewId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be a review id')
  .openapi({ example: '8b0c6a5e-0f53-5c0e-9d43-3f6c4c1a2b77' });

const max = z.number().int().min(1).max(1_000_000).openapi({ description: 'The largest count allowed; one more triggers the rule' });
const seconds = z
  .number()
  .int()
  .min(1)
  .max(366 * 86_400)
  .openapi({ description: 'Seconds (at most a year)' });

const action = z
  .enum(RULE_ACTIONS)
  .openapi({ description: '`reject`: 422 CLAIM.REJECTED_BY_RULE; `hold`: the claim succeeds, its referrer rewards wait for review' });
const enabled = z.boolean().default(true).openapi({ description: 'Default true' });
const rule = <K extends (typeof FRAUD_RULE_KINDS)[number], P extends z.ZodTypeAny>(kind: K, params: P) =>
  z.object({ kind: z.literal(kind), params, action, enabled });

/** What each kind takes in `params` (SPEC §13): the one place they are checked. */
export const ruleBody = z.discriminatedUnion('kind', [
  rule('referrer_claims_per_hour', z.object({ max })),
  rule('referrer_claims_per_day', z.object({ max })),
  rule('min_seconds_user_to_claim', z.object({ seconds })),
  rule('min_seconds_claim_to_conversion', z.object({ seconds })),
  rule('same_payment_customer', z.object({})),
  rule('payment_customer_claimers', z.object({ max })),
  rule('blocked_users', z.object({ app_user_ids: z.array(appUserId).max(10_000) })),
]);

export const ruleOut = z.object({
  id: z.string(),
  kind: z.enum(FRAUD_RULE_KINDS),
  params: z.record(z.string(), z.unknown()),
  action: z.enum(RULE_ACTIONS),
  enabled: z.boolean(),
  created_at: outDateTime,
  updated_at: outDateTime.nullable(),
});

export const reviewsQuery = z.object({
  status: z.enum(REVIEW_STATUSES).optional(),
  after: logPosition.optional().openapi({ ...logPositionDoc, description: 'Exclusive: `next_after` of the previous page' }),
  limit: pageLimit(1000, 100),
});

export const reviewOut = z.object({
  id: z.string(),
  rule_id: z.string(),
  kind: z.enum(FRAUD_RULE_KINDS).openapi({ description: "The rule's kind" }),
  status: z.enum(REVIEW_STATUSES),
  referrer_app_user_id: z.string(),
  claimer_app_user_id: z.string(),
  code: z.string(),
  variant: z.enum(['claim', 'conversion']).openapi({ description: 'What was held: the claim, or a conversion (min_seconds_claim_to_conversion)' }),
  created_at: outDateTime,
  decided_at: outDateTime.nullable(),
});
