import { type Collection, type Db, MongoServerError } from 'mongodb';
import { CLOCK_SLACK_MS } from '../../domain/clock-slack.js';
import type { RateLimitCounter, RateLimitStore } from '../../ports/rate-limit-store.js';
import { guardMongo, isDuplicateKey, NAMESPACE_NOT_FOUND } from './mongo-mapping.js';

interface RateLimitDocument {
  _id: string;
  points: number;
  reset_at: Date;
}

const COLLECTION = 'rate_limits';

/**
 * Counters in MongoDB, shared by every API instance. One `findOneAndUpdate` with an update
 * pipeline per hit (atomic on the document). Ended windows are removed by `removeExpired` (the
 * service's rate-limit cleanup job), judged on the service's clock like every hit. Not by a TTL
 * index: MongoDB would judge them on its own server's clock, and a server clock ahead of the
 * service's deletes live windows (a fresh budget for the caller).
 */
export class MongoRateLimitStore implements RateLimitStore {
  private readonly counters: Collection<RateLimitDocument>;
  private indexed: Promise<unknown> | null = null;

  constructor(db: Db, collection = COLLECTION) {
    this.counters = db.collection<RateLimitDocument>(collection);
  }

  private ensureIndexes(): Promise<unknown> {
    this.indexed ??= this.createIndexes().catch((error) => {
      this.indexed = null;
      throw error;
    });
    return this.indexed;
  }

  private async createIndexes(): Promise<void> {
    // Earlier versions made `reset_at` a TTL index: dropped, then made again without the TTL.
    const existing = await this.counters.indexes().catch((error) => {
      if (error instanceof MongoServerError && error.code === NAMESPACE_NOT_FOUND) return [];
      throw error;
    });
    for (const index of existing) if (index.expireAfterSeconds !== undefined && index.name !== undefined) await this.counters.dropIndex(index.name);
    await this.counters.createIndex({ reset_at: 1 }, { name: 'reset_at_1' });
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
