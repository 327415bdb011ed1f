import type { DependencyContainer } from 'tsyringe';
import { ReviewDecisions } from '../../application/fraud/review-decisions.js';
import type { ReviewDecision } from '../../domain/fraud/review.js';
import { commandContext } from '../context.js';
import { type AnyRoute, route } from '../route.js';
import { reviewId, reviewOut, reviewsQuery } from '../schemas/fraud.js';
import { z } from '../schemas/zod-openapi.js';

const TAG = 'admin: reviews';

/** SPEC §13: claims held by a fraud rule, and the reviewer's decision on each (secret key). */
export function adminReviewRoutes(container: DependencyContainer): AnyRoute[] {
  const reviews = container.resolve(ReviewDecisions);
  const one = z.object({ data: z.object({ review: reviewOut }) });
  const params = z.object({ id: reviewId });
  const common = { tags: [TAG], auth: 'secret' as const };

  const decision = (verb: 'approve' | 'reject', outcome: ReviewDecision, summary: string) =>
    route({
      ...common,
      method: 'post',
      path: `/admin/reviews/{id}/${verb}`,
      operationId: `${verb}Review`,
      summary,
      params,
      responses: { 200: { description: `The review, ${outcome}`, schema: one } },
      errors: ['NOT_FOUND.REVIEW', 'REVIEW.ALREADY_DECIDED'],
      async handle({ params: { id }, res }) {
        return { status: 200, body: { data: { review: await reviews.decide(id, outcome, commandContext(res)) } } };
      },
    });

  return [
    route({
      ...common,
      method: 'get',
      path: '/admin/reviews',
      operationId: 'listReviews',
      summary: 'List reviews of held claims, in the order they were opened (paged by `after` = `next_after`)',
      query: reviewsQuery,
      responses: {
        200: {
          description: 'A page of reviews',
          schema: z.object({ data: z.object({ reviews: z.array(reviewOut), next_after: z.string().nullable() }) }),
        },
      },
      errors: [],
      async handle({ query }) {
        return { status: 200, body: { data: await reviews.list(query) } };
      },
    }),
    decision('approve', 'approved', 'Approve a held claim: its held referrer rewards are granted, once (repeating it answers the same review)'),
    decision('reject', 'rejected', 'Reject a held claim: its held referrer rewards are dropped (repeating it answers the same review)'),
  ];
}
