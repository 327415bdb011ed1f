import type { ReviewStatus } from '../src/domain/fraud/review.js';
import { type Projection, sortablePosition } from './projection.js';

export const REVIEWS = 'reviews';

/**
 * Held claims and conversions waiting for (or past) a reviewer's decision (SPEC §13). A review's
 * document id is the log position of its `ReviewOpened`, zero-padded, so id order is the order
 * reviews were opened in and a page continues after the last id. It holds user ids, never a
 * payment customer.
 */
export function reviewDocId(openedPosition: bigint | string): string {
  return sortablePosition(openedPosition);
}

export interface ReviewDoc extends Record<string, unknown> {
  id: string;
  rule_id: string;
  kind: string;
  status: ReviewStatus;
  referrer_app_user_id: string;
  claimer_app_user_id: string;
  code: string;
  variant: 'claim' | 'conversion';
  created_at: string;
  decided_at: string | null;
}

export const reviewsProjection: Projection = {
  name: 'reviews',
  version: 1,
  collections: [{ name: REVIEWS, indexes: ['status', 'review_id'] }],
  eventTypes: ['ReviewOpened', 'ReviewApproved', 'ReviewRejected'],
  targets: (event) => {
    if (event.type === 'ReviewOpened') return [{ collection: REVIEWS, id: reviewDocId(event.position) }];
    if (event.type === 'ReviewApproved' || event.type === 'ReviewRejected') return [{ collection: REVIEWS, id: reviewDocId(event.data.opened_position) }];
    return [];
  },
  evolve: (ref, doc, event) => {
    if (event.type === 'ReviewOpened') {
      const data = event.data;
      const opened: ReviewDoc = {
        id: data.review_id,
        rule_id: data.rule_id,
        kind: data.kind,
        status: 'pending',
        referrer_app_user_id: data.referrer,
        claimer_app_user_id: data.claimer,
        code: data.code,
        variant: data.variant,
        created_at: data.opened_at,
        decided_at: null,
      };
      // `review_id` is indexed: the approve and reject answers find the review by its id; `seq`
      // is the document id (the paging cursor).
      return { ...opened, review_id: data.review_id, seq: ref.id };
    }
    if ((event.type === 'ReviewApproved' || event.type === 'ReviewRejected') && doc !== null) {
      return { ...doc, status: event.type === 'ReviewApproved' ? 'approved' : 'rejected', decided_at: event.data.decided_at };
    }
    return doc;
  },
};
