import type { DependencyContainer } from 'tsyringe';
import { jsonArray } from '../../application/json-pieces.js';
import { EventQueries, ledgerEntry } from '../../application/queries/event-queries.js';
import { UserQueries } from '../../application/queries/user-queries.js';
import { ApiError } from '../errors.js';
import { userNotFound } from '../../domain/domain-error.js';
import { type AnyRoute, route, sendJsonPieces } from '../route.js';
import { appUserId } from '../schemas/common.js';
import { creditLedgerOut, eventPageOut, eventsQuery, ledgerQuery } from '../schemas/audit.js';
import { z } from '../schemas/zod-openapi.js';

/** For analysts and auditors (secret key): the event log and each user's credit ledger. */
export function adminAuditRoutes(container: DependencyContainer): AnyRoute[] {
  const events = container.resolve(EventQueries);
  const users = container.resolve(UserQueries);
  return [
    route({
      method: 'get',
      path: '/admin/events',
      operationId: 'listEvents',
      summary: 'The event log in commit order (one stream also newest first), paged by position',
      tags: ['admin: audit'],
      query: eventsQuery,
      responses: { 200: { description: 'A page of events', schema: z.object({ data: eventPageOut }) } },
      errors: [],
      auth: 'secret',
      async handle({ query }) {
        if (query.order === 'desc' && query.stream === undefined) throw new ApiError('BAD_REQUEST', 'order: desc needs a stream', 'query:/order');
        if (query.stream !== undefined && query.stream_prefix !== undefined) {
          throw new ApiError('BAD_REQUEST', 'stream_prefix: give stream or stream_prefix, not both', 'query:/stream_prefix');
        }
        const page = await events.page({
          after: query.after ?? null,
          limit: query.limit,
          stream: query.stream ?? null,
          newestFirst: query.order === 'desc',
          streamPrefix: query.stream_prefix ?? null,
          types: query.type ?? null,
        });
        return { status: 200, body: { data: page } };
      },
    }),
    route({
      method: 'get',
      path: '/admin/users/{app_user_id}/credit-ledger',
      operationId: 'getCreditLedger',
      summary: 'Every credit movement of a user, oldest first, with running balances (paged with `limit`)',
      description:
        'Expiries whose time has passed are recorded first (a `RewardExpired` event, actor `process:expiry-sweep`), so the last `balance_after` is the balance `GET /users/{app_user_id}` shows.',
      tags: ['admin: audit'],
      params: z.object({ app_user_id: appUserId }),
      query: ledgerQuery,
      responses: { 200: { description: 'The ledger', schema: z.object({ data: creditLedgerOut }) } },
      errors: ['NOT_FOUND.USER'],
      auth: 'secret',
      async handle({ params: { app_user_id: id }, query: { key, limit, after }, res }) {
        if (!(await users.exists(id))) throw userNotFound();
        if (limit === undefined) {
          // Every row: written as it is read, a page at a time, so a long ledger holds no other request.
          const entries = await events.creditLedgerPages(id, key ?? null, res.locals.requestId, after ?? null);
          return sendJsonPieces(res, jsonDocument(`{"data":{"app_user_id":${JSON.stringify(id)},"entries":`, jsonArray(entries), ',"next_after":null}}'));
        }
        const { rows, nextAfter } = await events.creditLedger(id, key ?? null, res.locals.requestId, { after: after ?? null, limit });
        return { status: 200, body: { data: { app_user_id: id, entries: rows.map(ledgerEntry), next_after: nextAfter } } };
      },
    }),
  ];
}

/** `head`, the pieces of `body`, then `tail`: one JSON document written in pieces. */
async function* jsonDocument(head: string, body: AsyncIterable<string>, tail: string): AsyncIterable<string> {
  yield head;
  yield* body;
  yield tail;
}
