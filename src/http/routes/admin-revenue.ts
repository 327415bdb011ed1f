import type { DependencyContainer } from 'tsyringe';
import { ATTRIBUTION_GROUPS } from '../../../projections/attribution.js';
import { RevenueQueries } from '../../application/queries/revenue-queries.js';
import { UserQueries } from '../../application/queries/user-queries.js';
import type { Config } from '../../config.js';
import { accountToken } from '../../domain/revenue/account-token.js';
import { REVENUE_PROVIDERS } from '../../domain/revenue/revenue-notification.js';
import { TOKENS } from '../../ports/tokens.js';
import { userNotFound } from '../../domain/domain-error.js';
import { type AnyRoute, route } from '../route.js';
import { appUserId, checkOrder, logPosition, logPositionDoc, pageLimit, utcDay } from '../schemas/common.js';
import { z } from '../schemas/zod-openapi.js';

const inboundQuery = z.object({
  provider: z.enum(REVENUE_PROVIDERS).optional(),
  status: z.enum(['applied', 'duplicate', 'unmatched', 'rejected']).optional(),
  after: logPosition.optional().openapi({ ...logPositionDoc, description: 'Exclusive: notifications received after this log position' }),
  limit: pageLimit(1000, 100),
});
const attributionQuery = z.object({
  group_by: z.enum(ATTRIBUTION_GROUPS),
  from: utcDay.optional().openapi({ description: 'First UTC day included (a purchase or refund counts on the day the service recorded it)' }),
  to: utcDay.optional().openapi({ description: 'Last UTC day included; not before `from`' }),
});
const inboundOut = z.object({
  notifications: z.array(
    z.object({
      id: z.string().nullable().openapi({
        description:
          "The provider's notification id; null for a rejected delivery that could not be read (a missing or bad signature or token). One signed for another app, package or environment names its id.",
      }),
      provider: z.enum(REVENUE_PROVIDERS),
      received_at: z.string(),
      status: z.enum(['applied', 'duplicate', 'unmatched', 'rejected']),
      reason: z.string().nullable(),
      app_user_id: z.string().nullable(),
      event_ids: z.array(z.string()),
    }),
  ),
  next_after: z.string().nullable(),
});
const attributionOut = z.object({
  group_by: z.enum(ATTRIBUTION_GROUPS),
  groups: z.array(
    z.object({
      group: z.string(),
      claims: z.number().int(),
      conversions: z.number().int(),
      refunds: z.number().int(),
      revenue: z.array(z.object({ currency: z.string(), gross_minor: z.number().int(), refunded_minor: z.number().int() })),
    }),
  ),
});

/** Revenue for operators (secret key): the inbox of notifications, attribution, account tokens (SPEC §11). */
export function adminRevenueRoutes(container: DependencyContainer): AnyRoute[] {
  const revenue = container.resolve(RevenueQueries);
  const users = container.resolve(UserQueries);
  const config = container.resolve<Config>(TOKENS.Config);
  return [
    route({
      method: 'get',
      operationId: 'listInboundNotifications',
      path: '/admin/webhooks/inbound',
      summary: 'Received revenue notifications, oldest first, paged by position',
      tags: ['admin: revenue'],
      query: inboundQuery,
      responses: { 200: { description: 'A page of notifications', schema: z.object({ data: inboundOut }) } },
      errors: [],
      auth: 'secret',
      async handle({ query }) {
        const page = await revenue.inbound({ provider: query.provider ?? null, status: query.status ?? null, after: query.after ?? null, limit: query.limit });
        return { status: 200, body: { data: page } };
      },
    }),
    route({
      method: 'get',
      operationId: 'getAttribution',
      path: '/admin/attribution',
      summary: 'Claims, conversions, refunds and revenue per code, program or affiliate over a date range',
      tags: ['admin: revenue'],
      query: attributionQuery,
      responses: { 200: { description: 'One row per group', schema: z.object({ data: attributionOut }) } },
      errors: [],
      auth: 'secret',
      async handle({ query }) {
        if (query.from && query.to) checkOrder(query.from, query.to);
        const groups = await revenue.attribution(query.group_by, query.from ?? null, query.to ?? null);
        return { status: 200, body: { data: { group_by: query.group_by, groups } } };
      },
    }),
    route({
      method: 'get',
      operationId: 'getAccountToken',
      path: '/admin/users/{app_user_id}/account-token',
      summary: "The user's account token (App Store appAccountToken): UUIDv5 of app_user_id in ACCOUNT_TOKEN_NAMESPACE",
      tags: ['admin: revenue'],
      params: z.object({ app_user_id: appUserId }),
      responses: { 200: { description: 'The token', schema: z.object({ data: z.object({ app_user_id: z.string(), account_token: z.string() }) }) } },
      errors: ['NOT_FOUND.USER'],
      auth: 'secret',
      async handle({ params: { app_user_id: id } }) {
        if (!(await users.exists(id))) throw userNotFound();
        return { status: 200, body: { data: { app_user_id: id, account_token: accountToken(id, config.ACCOUNT_TOKEN_NAMESPACE) } } };
      },
    }),
  ];
}
