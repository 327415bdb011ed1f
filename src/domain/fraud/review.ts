import type { Decision, Evolver, NewDomainEvent } from '../decider.js';
import { DomainError } from '../domain-error.js';
import type { EventDataOf } from '../events/index.js';

/** Where a review stands (SPEC §13): the stream's state, the read model's and the API's filter. */
export const REVIEW_STATUSES = ['pending', 'approved', 'rejected'] as const;
export type ReviewStatus = (typeof REVIEW_STATUSES)[number];

/** A `review-{id}` stream: one held claim (or conversion) and the reviewer's decision. */
export type ReviewState = (EventDataOf<'ReviewOpened'> & { status: ReviewStatus; decided_at: string | null }) | null;

export const reviewEvolver: Evolver<ReviewState> = {
  name: 'review',
  version: 1,
  initialState: () => null,
  evolve: (state, event) => {
    if (event.type === 'ReviewOpened') return { ...event.data, status: 'pending', decided_at: null };
    if (state === null) return state;
    if (event.type === 'ReviewApproved') return { ...state, status: 'approved', decided_at: event.data.decided_at };
    if (event.type === 'ReviewRejected') return { ...state, status: 'rejected', decided_at: event.data.decided_at };
    return state;
  },
};

/** Opens the review once: the referral reaction may open it again after a crash, which changes nothing. */
export function decideOpenReview(state: ReviewState, opened: EventDataOf<'ReviewOpened'>): Decision<null> {
  return { events: state === null ? [{ type: 'ReviewOpened', data: opened }] : [], result: null };
}

export type ReviewDecision = 'approved' | 'rejected';

export interface DecideReviewCommand {
  decision: ReviewDecision;
  now: Date;
  /** Log position of the review's `ReviewOpened` (its place in the reviews list). */
  openedPosition: bigint;
}

/**
 * POST /admin/reviews/{id}/approve|reject. A review is decided once: the same decision again
 * changes nothing and answers the review as it is (a retried request is safe); the other
 * decision after it is 422 `REVIEW.ALREADY_DECIDED`.
 */
export function decideReview(state: ReviewState, command: DecideReviewCommand): Decision<{ changed: boolean }> {
  if (state === null) throw new DomainError('NOT_FOUND.REVIEW', 'No such review', 'path:/id');
  if (state.status === command.decision) return { events: [], result: { changed: false } };
  if (state.status !== 'pending') {
    throw new DomainError('REVIEW.ALREADY_DECIDED', `The review was already ${state.status}; a decision is final`, 'path:/id');
  }
  const data = {
    review_id: state.review_id,
    rule_id: state.rule_id,
    kind: state.kind,
    referrer: state.referrer,
    decided_at: command.now.toISOString(),
    opened_position: command.openedPosition.toString(),
  };
  const event: NewDomainEvent = command.decision === 'approved' ? { type: 'ReviewApproved', data } : { type: 'ReviewRejected', data };
  return { events: [event], result: { changed: true } };
}
