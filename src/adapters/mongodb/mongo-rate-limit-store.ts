import type { Collection, Db } from 'mongodb';
import { CLOCK_SLACK_MS } from '../../domain/clock-slack.js';
import type { RateLimitCounter, RateLimitStore } from '../../ports/rate-limit-store.js';
import { guardMongo, isDuplicateKey } from './mongo-mapping.js';

interface RateLimitDocument {
  _id: string;
  points: number;
  reset_at: Date;
}

const COLLECTION = 'rate_limits';

/**
 * Counters in MongoDB, shared by every API instance. One `findOneAndUpdate` with an update
 * pipeline per hit (atomic on the document); a TTL index removes ended windows.
 */
export class MongoRateLimitStore implements RateLimitStore {
  private readonly counters: Collection<RateLimitDocument>;
  private indexed: Promise<unknown> | null = null;

  constructor(db: Db, collection = COLLECTION) {
    this.counters = db.collection<RateLimitDocument>(collection);
  }

  private ensureIndexes(): Promise<unknown> {
    this.indexed ??= this.counters.createIndex({ reset_at: 1 }, { expireAfterSeconds: 0 }).catch((error) => {
      this.indexed = null;
      throw error;
    });
    return this.indexed;
  }

  hit(key: string, points: number, windowMs: number, nowMs: number): Promise<RateLimitCounter> {
    return guardMongo(() => this.hitUnguarded(key, points, windowMs, nowMs));
  }

  private async hitUnguarded(key: string, points: number, windowMs: number, nowMs: number): Promise<RateLimitCounter> {
    await this.ensureIndexes();
    const now = new Date(nowMs);
    const resetAt = { $ifNull: ['$reset_at', new Date(0)] };
    // Live: it ends after now, and no later than one window from now (one ending later was started by a clock that was ahead).
    const live = { $and: [{ $gt: [resetAt, now] }, { $lte: [resetAt, new Date(nowMs + windowMs + CLOCK_SLACK_MS)] }] };
    const pipeline = [
      {
        $set: {
          points: { $cond: [live, { $max: [{ $add: ['$points', points] }, 0] }, Math.max(points, 0)] },
          reset_at: { $cond: [live, '$reset_at', new Date(nowMs + windowMs)] },
        },
      },
    ];
    // Two first hits on one key may both try to insert; the loser retries as an update.
    for (let attempt = 0; ; attempt++) {
      try {
        const doc = await this.counters.findOneAndUpdate({ _id: key }, pipeline, { upsert: true, returnDocument: 'after' });
        return { points: doc!.points, resetAtMs: doc!.reset_at.getTime() };
      } catch (error) {
        if (!isDuplicateKey(error) || attempt >= 2) throw error;
      }
    }
  }

  async removeExpired(nowMs: number): Promise<number> {
    const result = await guardMongo(() => this.counters.deleteMany({ reset_at: { $lte: new Date(nowMs) } }));
    return result.deletedCount;
  }

  async close(): Promise<void> {}
}
