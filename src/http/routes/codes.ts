import type { DependencyContainer } from 'tsyringe';
import { CatalogQueries } from '../../application/queries/catalog-queries.js';
import { CodeResolver } from '../../application/queries/code-resolver.js';
import { entriesByKind } from '../../application/queries/reward-views.js';
import { type AnyRoute, route } from '../route.js';
import { codeResponse } from '../schemas/codes.js';
import { codeLookup } from '../schemas/common.js';
import { hasFreeSlot } from '../../domain/codes/claim-slots.js';
import { codeNotFound } from '../../domain/domain-error.js';
import { z } from '../schemas/zod-openapi.js';

/** Resolving a code before claiming it. */
export function codeRoutes(container: DependencyContainer): AnyRoute[] {
  const resolver = container.resolve(CodeResolver);
  const catalog = container.resolve(CatalogQueries);
  return [
    route({
      method: 'get',
      path: '/codes/{code}',
      operationId: 'getCode',
      summary: 'Resolve a code to its type, owner and the rewards a claimer would receive',
      tags: ['codes'],
      params: z.object({ code: codeLookup }),
      responses: { 200: { description: 'The code', schema: codeResponse } },
      errors: ['NOT_FOUND.CODE'],
      async handle({ params }) {
        const resolved = await resolver.resolve(params.code);
        if (!resolved) throw codeNotFound();
        const rewards = await catalog.rewards(resolved.receiverEntries.map((entry) => entry.reward_key));
        return {
          status: 200,
          body: {
            data: {
              type: resolved.type,
              code: resolved.code,
              is_active: resolved.owner_active && hasFreeSlot(resolved.taken, resolved.limit),
              entity: resolved.entity,
              rewards: entriesByKind(resolved.receiverEntries, rewards, 'receiver'),
            },
          },
        };
      },
    }),
  ];
}
