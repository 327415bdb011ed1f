import { Router } from 'express';
import type { DependencyContainer } from 'tsyringe';
import { ReviewDecisions } from '../../application/fraud/review-decisions.js';
import type { ReviewDecision } from '../../domain/fraud/review.js';
import { requireSecretKey } from '../auth.js';
import { commandContext } from '../context.js';
import { methodNotAllowed } from '../errors.js';
import type { ApiDescription } from '../openapi.js';
import { reviewId, reviewOut, reviewsQuery } from '../schemas/fraud.js';
import { z } from '../schemas/zod-openapi.js';
import { parsePathParam, parseQuery } from '../validation.js';

const TAG = 'admin: reviews';

/** SPEC §13: claims held by a fraud rule, and the reviewer's decision on each. */
export function adminReviewsRouter(container: DependencyContainer, api: ApiDescription): Router {
  const router = Router();
  router.use('/reviews', requireSecretKey);
  const reviews = container.resolve(ReviewDecisions);
  const one = z.object({ data: z.object({ review: reviewOut }) });
  const params = z.object({ id: reviewId });

  api.operation({
    method: 'get',
    path: '/admin/reviews',
    operationId: 'listReviews',
    summary: 'List reviews of held claims, in the order they were opened (paged by `after` = `next_after`)',
    tags: [TAG],
    query: reviewsQuery,
    responses: {
      200: {
        description: 'A page of reviews',
        schema: z.object({ data: z.object({ reviews: z.array(reviewOut), next_after: z.string().nullable() }) }),
      },
    },
    errors: [],
    auth: 'secret',
  });
  router
    .route('/reviews')
    .get(async (req, res) => {
      const query = parseQuery(req, reviewsQuery);
      res.json({ data: await reviews.list(query) });
    })
    .all(methodNotAllowed(['GET']));

  const decision = (verb: 'approve' | 'reject', outcome: ReviewDecision, summary: string) => {
    api.operation({
      method: 'post',
      path: `/admin/reviews/{id}/${verb}`,
      operationId: `${verb}Review`,
      summary,
      tags: [TAG],
      params,
      responses: { 200: { description: `The review, ${outcome}`, schema: one } },
      errors: ['NOT_FOUND.REVIEW', 'REVIEW.ALREADY_DECIDED'],
      auth: 'secret',
    });
    router
      .route(`/reviews/:id/${verb}`)
      .post(async (req, res) => {
        const id = parsePathParam(req, 'id', reviewId) as string;
        res.json({ data: { review: await reviews.decide(id, outcome, commandContext(res)) } });
      })
      .all(methodNotAllowed(['POST']));
  };
  decision('approve', 'approved', 'Approve a held claim: its held referrer rewards are granted, once (repeating it answers the same review)');
  decision('reject', 'rejected', 'Reject a held claim: its held referrer rewards are dropped (repeating it answers the same review)');
  return router;
}
