import type { DependencyContainer } from 'tsyringe';
import { AnalyticsQueries, dayCount, MAX_RANGE_DAYS, TOP_CODES_ORDERS } from '../../application/queries/analytics-queries.js';
import { normalizeCode } from '../../domain/codes/referral-code.js';
import { CODE_TYPES } from '../../domain/events/code-events.js';
import { ApiError } from '../errors.js';
import { type AnyRoute, route } from '../route.js';
import { programId } from '../schemas/admin.js';
import { checkOrder, pageLimit, utcDay } from '../schemas/common.js';
import { z } from '../schemas/zod-openapi.js';

const TAG = 'admin: analytics';

const range = {
  from: utcDay.openapi({ description: 'First UTC day, included' }),
  to: utcDay.openapi({ description: `Last UTC day, included; not before \`from\`, and at most ${MAX_RANGE_DAYS} days from it counting both ends` }),
  program_id: programId.optional().openapi({ description: 'Only what came through codes of this program' }),
};

const dailyQuery = z.object({
  ...range,
  code: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must match [A-Za-z0-9_-]{1,64}')
    .transform(normalizeCode)
    .optional()
    .openapi({ type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'Only this code (matched case-insensitively)' }),
});

const topCodesQuery = z.object({
  ...range,
  by: z.enum(TOP_CODES_ORDERS).default('claims').openapi({
    description: '`revenue`: the largest gross_minor − refunded_minor of any one currency over the range',
  }),
  limit: pageLimit(100, 10),
});

const revenueOut = z
  .array(z.object({ currency: z.string(), gross_minor: z.number().int(), refunded_minor: z.number().int() }))
  .openapi({ description: 'Per currency, in integer minor units, currencies in alphabetical order; [] when none' });

const dailyOut = z.object({
  data: z.object({
    from: z.string().openapi({ format: 'date' }),
    to: z.string().openapi({ format: 'date' }),
    days: z.array(
      z.object({
        date: z.string().openapi({ format: 'date' }),
        claims: z.number().int(),
        conversions: z.number().int(),
        churns: z.number().int(),
        refunds: z.number().int(),
        revenue: revenueOut,
      }),
    ),
  }),
});

const topCodesOut = z.object({
  data: z.object({
    codes: z.array(
      z.object({
        code: z.string(),
        kind: z.enum(CODE_TYPES),
        program_id: z.string().nullable(),
        app_user_id: z.string().nullable().openapi({ description: "The code's owner: the referrer, the affiliate's linked user; null for promo codes" }),
        claims: z.number().int(),
        conversions: z.number().int(),
        revenue: revenueOut,
      }),
    ),
  }),
});

/** from ≤ to, and at most MAX_RANGE_DAYS days: 400 BAD_REQUEST naming the parameter otherwise. */
function checkRange(from: string, to: string): void {
  checkOrder(from, to);
  const days = dayCount(from, to);
  if (days > MAX_RANGE_DAYS) throw new ApiError('BAD_REQUEST', `to: the range covers ${days} days, at most ${MAX_RANGE_DAYS}`, 'query:/to');
}

/** SPEC §14: daily series and top codes from the analytics read model (secret key). */
export function adminAnalyticsRoutes(container: DependencyContainer): AnyRoute[] {
  const analytics = container.resolve(AnalyticsQueries);
  return [
    route({
      method: 'get',
      path: '/admin/analytics/daily',
      operationId: 'getAnalyticsDaily',
      summary: 'Claims, conversions, churns, refunds and revenue per UTC day, one entry per day of the range (zeros included), oldest first',
      tags: [TAG],
      query: dailyQuery,
      responses: { 200: { description: 'The series', schema: dailyOut } },
      errors: [],
      auth: 'secret',
      async handle({ query }) {
        checkRange(query.from, query.to);
        const days = await analytics.daily({ from: query.from, to: query.to, programId: query.program_id ?? null, code: query.code ?? null });
        return { status: 200, body: { data: { from: query.from, to: query.to, days } } };
      },
    }),
    route({
      method: 'get',
      path: '/admin/analytics/top-codes',
      operationId: 'getAnalyticsTopCodes',
      summary: 'The codes with the most claims, conversions or revenue over a range, highest first (ties: code ascending)',
      tags: [TAG],
      query: topCodesQuery,
      responses: { 200: { description: 'At most `limit` codes whose figure is above zero', schema: topCodesOut } },
      errors: [],
      auth: 'secret',
      async handle({ query }) {
        checkRange(query.from, query.to);
        const codes = await analytics.topCodes({ from: query.from, to: query.to, programId: query.program_id ?? null, by: query.by, limit: query.limit });
        return { status: 200, body: { data: { codes } } };
      },
    }),
  ];
}
