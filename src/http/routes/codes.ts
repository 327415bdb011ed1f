import { Router } from 'express';
import type { DependencyContainer } from 'tsyringe';
import { CatalogQueries } from '../../application/queries/catalog-queries.js';
import { CodeResolver } from '../../application/queries/code-resolver.js';
import { entriesByKind } from '../../application/queries/reward-views.js';
import { ApiError, methodNotAllowed } from '../errors.js';
import type { ApiDescription } from '../openapi.js';
import { codeResponse } from '../schemas/codes.js';
import { chars } from '../schemas/common.js';
import { z } from '../schemas/zod-openapi.js';
import { parsePathParam } from '../validation.js';

const codeParam = chars(1, 64);

export function codesRouter(container: DependencyContainer, api: ApiDescription): Router {
  const router = Router();
  const resolver = container.resolve(CodeResolver);
  const catalog = container.resolve(CatalogQueries);

  api.operation({
    method: 'get',
    path: '/codes/{code}',
    operationId: 'getCode',
    summary: 'Resolve a code to its type, owner and the rewards a claimer would receive',
    tags: ['codes'],
    params: z.object({ code: codeParam }),
    responses: { 200: { description: 'The code', schema: codeResponse } },
    errors: ['NOT_FOUND.CODE'],
  });
  router
    .route('/codes/:code')
    .get(async (req, res) => {
      const resolved = await resolver.resolve(parsePathParam(req, 'code', codeParam));
      if (!resolved) throw new ApiError(404, 'NOT_FOUND.CODE', 'No referral, promo or affiliate code matches', 'path:/code');
      const rewards = await catalog.rewards(resolved.receiverEntries.map((entry) => entry.reward_key));
      res.json({
        data: {
          type: resolved.type,
          code: resolved.code,
          is_active: resolved.owner_active && (resolved.limit === 0 || resolved.taken < resolved.limit),
          entity: resolved.entity,
          rewards: entriesByKind(resolved.receiverEntries, rewards, 'receiver'),
        },
      });
    })
    .all(methodNotAllowed(['GET']));
  return router;
}
