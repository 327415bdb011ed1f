import { inject, injectable } from 'tsyringe';
import { REVIEWS, type ReviewDoc, reviewDocId } from '../../../projections/reviews.js';
import { DomainError } from '../../domain/domain-error.js';
import { streams } from '../../domain/events/index.js';
import { decideReview, type ReviewDecision, type ReviewState, reviewEvolver } from '../../domain/fraud/review.js';
import { decideReleaseHeldRewards } from '../../domain/users/held-rewards.js';
import { userEvolver } from '../../domain/users/user-state.js';
import type { Clock } from '../../ports/clock.js';
import type { Ids } from '../../ports/ids.js';
import type { ReadStore } from '../../ports/read-store.js';
import { TOKENS } from '../../ports/tokens.js';
import type { CommandContext } from '../event-log.js';
import { CommandExecutor } from '../command-executor.js';
import { StreamExecutor } from '../stream-executor.js';

export interface ReviewPage {
  reviews: ReviewDoc[];
  next_after: string | null;
}

/**
 * Reviews of held claims (SPEC §13). A decision is two steps on two streams: the review's own
 * stream decides once (exact expected revision), then the referrer's stream grants the held
 * rewards (approved) or drops them (rejected) — once, because the referrer's state knows which
 * reviews still hold rewards and the grant ids derive from the review. If the process dies
 * between the steps, the review reaction repeats the second.
 */
@injectable()
export class ReviewDecisions {
  constructor(
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(CommandExecutor) private readonly commands: CommandExecutor,
    @inject(TOKENS.ReadStore) private readonly readStore: ReadStore,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Ids) private readonly ids: Ids,
  ) {}

  async decide(reviewId: string, decision: ReviewDecision, context: CommandContext): Promise<ReviewDoc> {
    const executed = await this.executor.execute<ReviewState, { changed: boolean }, bigint>(
      streams.review(reviewId),
      reviewEvolver,
      (state, openedPosition) => decideReview(state, { decision, now: this.clock.now(), openedPosition }),
      context,
      { prepare: async (loaded) => loaded.position ?? 0n },
    );
    const review = executed.state!;
    const released = await this.release(review.referrer, reviewId, review.status as ReviewDecision, context);
    // Two streams written: the after-commit work waits for the later write (for everything
    // committed so far when neither wrote: a decision repeated).
    const positions = [executed.position, released].filter((position) => position !== null);
    await this.commands.afterCommit(positions.length === 0 ? null : positions.reduce((a, b) => (a > b ? a : b)), context);
    const doc = await this.get(reviewId);
    if (doc === null) throw new DomainError('NOT_FOUND.REVIEW', 'No such review', 'path:/id');
    return doc;
  }

  /**
   * The referrer's side of a decided review: idempotent, so the request and the reaction may both
   * run it. The position of what it wrote; null when the other had done it.
   */
  async release(referrer: string, reviewId: string, decision: ReviewDecision, context: CommandContext): Promise<bigint | null> {
    const { position } = await this.executor.execute(
      streams.user(referrer),
      userEvolver,
      (state) => {
        const released = decideReleaseHeldRewards(state, { review_id: reviewId, decision, now: this.clock.now() });
        return {
          events: released.events.map((event, index) => ({ ...event, id: this.ids.derived(reviewId, decision, String(index)) })),
          result: released.result,
        };
      },
      context,
    );
    return position;
  }

  async get(reviewId: string): Promise<ReviewDoc | null> {
    const [doc] = await this.readStore.find<ReviewDoc>(REVIEWS, { where: { review_id: reviewId }, limit: 1 });
    return doc ? reviewView(doc) : null;
  }

  /** In the order reviews were opened; `after` is the `next_after` of the previous page. */
  async list(query: { status?: ReviewDoc['status']; after?: bigint; limit: number }): Promise<ReviewPage> {
    const docs = await this.readStore.find<ReviewDoc & { seq: string }>(REVIEWS, {
      ...(query.status ? { where: { status: query.status } } : {}),
      ...(query.after !== undefined ? { afterId: reviewDocId(query.after) } : {}),
      // One more than the page, to know whether another follows.
      limit: query.limit + 1,
    });
    const shown = docs.slice(0, query.limit);
    const last = docs.length > query.limit ? shown[shown.length - 1] : undefined;
    return { reviews: shown.map(reviewView), next_after: last ? BigInt(last.seq).toString() : null };
  }
}

/** The review as the API shows it (SPEC §13). */
function reviewView(doc: ReviewDoc): ReviewDoc {
  const { id, rule_id, kind, status, referrer_app_user_id, claimer_app_user_id, code, variant, created_at, decided_at } = doc;
  return { id, rule_id, kind, status, referrer_app_user_id, claimer_app_user_id, code, variant, created_at, decided_at };
}
