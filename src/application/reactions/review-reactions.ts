import { inject, injectable } from 'tsyringe';
import type { LoggedEvent } from '../event-log.js';
import { ReviewDecisions } from '../fraud/review-decisions.js';
import type { Reaction } from './reaction-runner.js';

/**
 * Finishes a review decision in the referrer's stream (grant or drop the held rewards) when the
 * request that decided it did not get there (a crash between the two appends). Idempotent:
 * after the request did it, this changes nothing.
 */
@injectable()
export class ReviewReactions implements Reaction {
  readonly name = 'reviews';
  readonly eventTypes = ['ReviewApproved', 'ReviewRejected'] as const;

  constructor(@inject(ReviewDecisions) private readonly decisions: ReviewDecisions) {}

  async handle(event: LoggedEvent): Promise<void> {
    if (event.type !== 'ReviewApproved' && event.type !== 'ReviewRejected') return;
    await this.decisions.release(event.data.referrer, event.data.review_id, event.type === 'ReviewApproved' ? 'approved' : 'rejected', {
      correlation_id: String(event.metadata.correlation_id),
      causation_id: event.id,
      actor: 'process:reviews',
    });
  }
}
