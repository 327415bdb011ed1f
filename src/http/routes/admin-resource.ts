import type { Response, Router } from 'express';
import type { ZodTypeAny } from 'zod';
import type { ErrorCode } from '../error-codes.js';
import { ApiError, methodNotAllowed } from '../errors.js';
import type { ApiDescription } from '../openapi.js';
import { z } from '../schemas/zod-openapi.js';
import { parseBody, parsePathParam } from '../validation.js';

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

export function mountAdminResource<T, B extends ZodTypeAny>(router: Router, api: ApiDescription, resource: AdminResource<T, B>): void {
  const itemPath = `${resource.path}/:${resource.param}`;
  const docItemPath = `/admin${resource.path}/{${resource.param}}`;
  const params = z.object({ [resource.param]: resource.paramSchema });
  const wrap = (value: unknown) => ({ data: { [resource.singular]: value } });
  const one = z.object({ data: z.object({ [resource.singular]: resource.out }) });

  api.operation({
    method: 'put',
    path: docItemPath,
    operationId: `put${resource.name}`,
    summary: `Create or update a ${resource.singular.replace('_', ' ')} (201 created, 200 updated)`,
    tags: [resource.tag],
    params,
    body: resource.body,
    responses: { 201: { description: 'Created', schema: one }, 200: { description: 'Updated', schema: one } },
    errors: resource.putErrors,
    auth: 'secret',
  });
  api.operation({
    method: 'get',
    path: docItemPath,
    operationId: `get${resource.name}`,
    summary: `Get a ${resource.singular.replace('_', ' ')}`,
    tags: [resource.tag],
    params,
    responses: { 200: { description: 'Found', schema: one } },
    errors: [resource.notFoundCode],
    auth: 'secret',
  });
  api.operation({
    method: 'get',
    path: `/admin${resource.path}`,
    operationId: `list${resource.name}s`,
    summary: `List ${resource.plural.replace('_', ' ')}`,
    tags: [resource.tag],
    responses: { 200: { description: 'All of them', schema: z.object({ data: z.object({ [resource.plural]: z.array(resource.out) }) }) } },
    errors: [],
    auth: 'secret',
  });

  router
    .route(itemPath)
    .put(async (req, res) => {
      const id = parsePathParam(req, resource.param, resource.paramSchema) as string;
      const body = parseBody(req, resource.body);
      const { created, value } = await resource.put(id, body, res);
      res.status(created ? 201 : 200).json(wrap(await resource.view(value)));
    })
    .get(async (req, res) => {
      const id = parsePathParam(req, resource.param, resource.paramSchema) as string;
      const value = await resource.get(id);
      if (value === null) throw new ApiError(404, resource.notFoundCode, `No ${resource.singular.replace('_', ' ')} ${id}`, `path:/${resource.param}`);
      res.json(wrap(await resource.view(value)));
    })
    .all(methodNotAllowed(['GET', 'PUT']));
  router
    .route(resource.path)
    .get(async (_req, res) => {
      const values = await resource.list();
      res.json({ data: { [resource.plural]: await Promise.all(values.map((value) => resource.view(value))) } });
    })
    .all(methodNotAllowed(['GET']));
}
