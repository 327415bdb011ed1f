import type { Response } from 'express';
import type { ZodTypeAny } from 'zod';
import type { IdPage } from '../../application/queries/catalog-queries.js';
import type { ErrorCode } from '../error-codes.js';
import { ApiError } from '../errors.js';
import { type AnyRoute, route } from '../route.js';
import { optionalPageLimit } from '../schemas/common.js';
import { z } from '../schemas/zod-openapi.js';

/** One configuration resource of the admin API: PUT upsert, GET one, GET the collection. */
export interface AdminResource<T, B extends ZodTypeAny> {
  tag: string;
  /** Collection path under /admin, e.g. /rewards. */
  path: string;
  param: string;
  paramSchema: ZodTypeAny;
  singular: string;
  plural: string;
  /** Names the operations: putReward, getReward, listRewards. */
  name: string;
  notFoundCode: ErrorCode;
  /** The business rules a PUT can break. */
  putErrors: ErrorCode[];
  body: B;
  out: ZodTypeAny;
  get(id: string): Promise<T | null>;
  /** The collection; with a page, in id order, at most `limit` items after the id `after`. */
  list(page: IdPage): Promise<T[]>;
  /**
   * An item's id, for collections that can grow large (promo codes, affiliates): their GET takes
   * `?limit=&after=` and answers `next_after`. Without it the collection is always listed whole.
   */
  idOf?(value: T): string;
  view(value: T): Promise<unknown> | unknown;
  put(id: string, body: z.infer<B>, res: Response): Promise<{ created: boolean; value: T }>;
}

/** The resource's three routes: PUT and GET of one item under /admin, GET of the collection. */
export function adminResourceRoutes<T, B extends ZodTypeAny>(resource: AdminResource<T, B>): AnyRoute[] {
  const itemPath = `/admin${resource.path}/{${resource.param}}`;
  const params = z.object({ [resource.param]: resource.paramSchema });
  const wrap = (value: unknown) => ({ data: { [resource.singular]: value } });
  const one = z.object({ data: z.object({ [resource.singular]: resource.out }) });
  const label = resource.singular.replace('_', ' ');
  const listOut = z.object({
    [resource.plural]: z.array(resource.out),
    ...(resource.idOf
      ? {
          next_after: z
            .string()
            .nullable()
            .openapi({ description: 'With `limit`: pass it as `after` to read the next page; null on the last page (and always without `limit`)' }),
        }
      : {}),
  });
  return [
    route({
      method: 'put',
      path: itemPath,
      operationId: `put${resource.name}`,
      summary: `Create or update a ${label} (201 created, 200 updated)`,
      tags: [resource.tag],
      params,
      body: resource.body,
      responses: { 201: { description: 'Created', schema: one }, 200: { description: 'Updated', schema: one } },
      errors: resource.putErrors,
      auth: 'secret',
      async handle({ params: parsed, body, res }) {
        const { created, value } = await resource.put(parsed[resource.param] as string, body as z.infer<B>, res);
        return { status: created ? 201 : 200, body: wrap(await resource.view(value)) };
      },
    }),
    route({
      method: 'get',
      path: itemPath,
      operationId: `get${resource.name}`,
      summary: `Get a ${label}`,
      tags: [resource.tag],
      params,
      responses: { 200: { description: 'Found', schema: one } },
      errors: [resource.notFoundCode],
      auth: 'secret',
      async handle({ params: parsed }) {
        const id = parsed[resource.param] as string;
        const value = await resource.get(id);
        if (value === null) throw new ApiError(resource.notFoundCode, `No ${label} ${id}`, `path:/${resource.param}`);
        return { status: 200, body: wrap(await resource.view(value)) };
      },
    }),
    route({
      method: 'get',
      path: `/admin${resource.path}`,
      operationId: `list${resource.name}s`,
      summary: `List ${resource.plural.replace('_', ' ')}${resource.idOf ? ' in id order, whole or a page at a time (`limit`, `after`)' : ''}`,
      tags: [resource.tag],
      ...(resource.idOf
        ? {
            query: z.object({
              limit: optionalPageLimit(1000).openapi({ description: 'At most this many, with `next_after` to read on; without it, every one' }),
              after: resource.paramSchema
                .optional()
                .openapi({ description: `Exclusive: the ${label}s after this ${resource.param} (\`next_after\` of the previous page)` }),
            }),
          }
        : {}),
      responses: { 200: { description: 'All of them, or a page', schema: z.object({ data: listOut }) } },
      errors: [],
      auth: 'secret',
      async handle({ query }) {
        const { limit = null, after = null } = query as { limit?: number; after?: string };
        // One more than the page, to know whether another follows.
        const found = await resource.list({ after, limit: limit === null ? null : limit + 1 });
        const shown = limit === null ? found : found.slice(0, limit);
        const views = await Promise.all(shown.map((value) => resource.view(value)));
        if (!resource.idOf) return { status: 200, body: { data: { [resource.plural]: views } } };
        const nextAfter = limit !== null && found.length > limit ? resource.idOf(shown[shown.length - 1]!) : null;
        return { status: 200, body: { data: { [resource.plural]: views, next_after: nextAfter } } };
      },
    }),
  ];
}
