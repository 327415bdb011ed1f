import type { Response } from 'express';
import type { ZodTypeAny } from 'zod';
import type { ErrorCode } from '../error-codes.js';
import { ApiError } from '../errors.js';
import { type AnyRoute, route } from '../route.js';
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
  list(): Promise<T[]>;
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
        if (value === null) throw new ApiError(404, resource.notFoundCode, `No ${label} ${id}`, `path:/${resource.param}`);
        return { status: 200, body: wrap(await resource.view(value)) };
      },
    }),
    route({
      method: 'get',
      path: `/admin${resource.path}`,
      operationId: `list${resource.name}s`,
      summary: `List ${resource.plural.replace('_', ' ')}`,
      tags: [resource.tag],
      responses: { 200: { description: 'All of them', schema: z.object({ data: z.object({ [resource.plural]: z.array(resource.out) }) }) } },
      errors: [],
      auth: 'secret',
      async handle() {
        const values = await resource.list();
        return { status: 200, body: { data: { [resource.plural]: await Promise.all(values.map((value) => resource.view(value))) } } };
      },
    }),
  ];
}
