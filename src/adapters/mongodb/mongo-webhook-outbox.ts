import { isDue } from '../../domain/webhooks/retry-schedule.js';
import type { AnyBulkWriteOperation, Collection, Db } from 'mongodb';
import { StoreUnavailableError } from '../../ports/event-store.js';
import {
  type AttemptRecord,
  type EndpointQueueStats,
  FeedCheckpointMovedError,
  type NewOutboxMessage,
  type OutboxListQuery,
  type OutboxMessage,
  type WebhookOutbox,
} from '../../ports/webhook-outbox.js';
import { classifyWriteErrors, formatPosition, isDuplicateKey, isTransientMongoError, parsePosition } from './mongo-mapping.js';

/** A message as stored: positions as 20-digit strings so they sort as they compare. */
interface StoredMessage extends Omit<OutboxMessage, 'position'> {
  _id: string;
  position: string;
  open: boolean;
}

interface StoredFeed {
  _id: string;
  position: string | null;
}

interface StoredHealth {
  _id: string;
  failing_since: string | null;
}

async function guard<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isTransientMongoError(error)) throw new StoreUnavailableError(`MongoDB unavailable: ${(error as Error).message}`, { cause: error });
    throw error;
  }
}

const key = (endpointId: string, messageId: string) => `${endpointId}\u0000${messageId}`;

function toMessage(stored: StoredMessage): OutboxMessage {
  const { _id, open: _open, position, ...rest } = stored;
  return { ...rest, position: parsePosition(position)! };
}

function fresh(message: NewOutboxMessage, due: string): StoredMessage {
  return {
    _id: key(message.endpoint_id, message.message_id),
    ...message,
    position: formatPosition(message.position),
    status: 'pending',
    open: true,
    attempts: 0,
    first_attempt_at: null,
    next_attempt_at: due,
    last_status_code: null,
    last_error: null,
    last_latency_ms: null,
    delivered_at: null,
  };
}

/**
 * The outbox in MongoDB. Without a transaction across messages and checkpoint, the feed inserts
 * first (duplicates ignored: ids are deterministic) and then moves the checkpoint with a
 * compare-and-set, so a crash in between re-feeds harmlessly.
 */
export class MongoWebhookOutbox implements WebhookOutbox {
  private readonly messages: Collection<StoredMessage>;
  private readonly feeds: Collection<StoredFeed>;
  private readonly health: Collection<StoredHealth>;

  private constructor(db: Db) {
    this.messages = db.collection<StoredMessage>('webhook_messages');
    this.feeds = db.collection<StoredFeed>('webhook_feeds');
    this.health = db.collection<StoredHealth>('webhook_endpoint_health');
  }

  static async open(db: Db): Promise<MongoWebhookOutbox> {
    const outbox = new MongoWebhookOutbox(db);
    await guard(() =>
      outbox.messages.createIndexes([
        { key: { open: 1, endpoint_id: 1, position: 1 } },
        { key: { endpoint_id: 1, position: 1 } },
        // A deliveries page by status reads its page, not every message the endpoint ever had.
        { key: { endpoint_id: 1, status: 1, position: 1 } },
        // Retention finds the messages delivered before a time without reading the others.
        { key: { delivered_at: 1 }, partialFilterExpression: { status: 'delivered' } },
      ]),
    );
    return outbox;
  }

  async feed(name: string, messages: NewOutboxMessage[], after: bigint | null, position: bigint): Promise<void> {
    // A feeder whose checkpoint moved (a stale one, during a lease overlap) adds nothing: messages
    // inserted before the compare-and-set below fails would stay, and could reach an endpoint
    // created again since under the same id. (The window left is between this look and the insert.)
    if (messages.length > 0 && (await this.feedCheckpoint(name)) !== after) throw new FeedCheckpointMovedError(name);
    if (messages.length > 0) {
      const writes: AnyBulkWriteOperation<StoredMessage>[] = messages.map((message) => ({ insertOne: { document: fresh(message, message.enqueued_at) } }));
      try {
        await guard(() => this.messages.bulkWrite(writes, { ordered: false }));
      } catch (error) {
        const verdict = classifyWriteErrors(error);
        if (verdict === null || !verdict.onlyAlreadyApplied) throw error;
      }
    }
    // Compare-and-set: a first feed (after null) inserts the checkpoint, and collides with one
    // stored meanwhile; a later one moves it only from `after`, and a checkpoint that is not
    // there (never stored, or reset) is not created from a stale feeder's `after`.
    let matched: number;
    try {
      ({ matchedCount: matched } = await guard(() =>
        this.feeds.updateOne(
          { _id: name, position: after === null ? null : formatPosition(after) },
          { $set: { position: formatPosition(position) } },
          { upsert: after === null },
        ),
      ));
    } catch (error) {
      if (isDuplicateKey(error)) throw new FeedCheckpointMovedError(name);
      throw error;
    }
    if (after !== null && matched === 0) throw new FeedCheckpointMovedError(name);
  }

  async feedCheckpoint(name: string): Promise<bigint | null> {
    return parsePosition((await guard(() => this.feeds.findOne({ _id: name })))?.position);
  }

  async requeue(messages: NewOutboxMessage[], now: string): Promise<number> {
    if (messages.length === 0) return 0;
    // As SQLite's: a message already there is put back to pending, attempts from zero; what it was
    // enqueued as and how its last attempt went stay (the deliveries view, the queue-age metric).
    const writes: AnyBulkWriteOperation<StoredMessage>[] = messages.map((message) => {
      const { _id, status, open, attempts, first_attempt_at, next_attempt_at, delivered_at, payload, ...kept } = fresh(message, now);
      return {
        updateOne: {
          filter: { _id },
          update: { $set: { status, open, attempts, first_attempt_at, next_attempt_at, delivered_at, payload }, $setOnInsert: kept },
          upsert: true,
        },
      };
    });
    await guard(() => this.messages.bulkWrite(writes, { ordered: false }));
    return messages.length;
  }

  async dueEndpoints(now: string): Promise<string[]> {
    const heads = await this.openHeads();
    return heads.filter((head) => isDue(head.next_attempt_at, now)).map((head) => head.endpoint_id);
  }

  /**
   * The first open message of each endpoint that has one, as SQLite's: the endpoints from the
   * `{open, endpoint_id, position}` index (a distinct scan), then one search each. Grouping every
   * open message, on every delivery tick, cost as much as the backlog (soak probe, on SQLite).
   */
  private async openHeads(): Promise<{ endpoint_id: string; next_attempt_at: string; enqueued_at: string }[]> {
    const endpoints = await guard(() => this.messages.distinct('endpoint_id', { open: true }));
    const heads = await Promise.all(
      endpoints.map((endpointId) =>
        guard(() =>
          this.messages.findOne(
            { open: true, endpoint_id: endpointId },
            { sort: { position: 1 }, projection: { _id: 0, endpoint_id: 1, next_attempt_at: 1, enqueued_at: 1 } },
          ),
        ),
      ),
    );
    return heads.filter((head) => head !== null);
  }

  async head(endpointId: string): Promise<OutboxMessage | null> {
    const stored = await guard(() => this.messages.findOne({ open: true, endpoint_id: endpointId }, { sort: { position: 1 } }));
    return stored ? toMessage(stored) : null;
  }

  async recordAttempt(endpointId: string, messageId: string, attempt: AttemptRecord): Promise<void> {
    const _id = key(endpointId, messageId);
    const stored = await guard(() => this.messages.findOne({ _id }));
    if (!stored || stored.next_attempt_at !== attempt.due_at) return;
    await guard(() =>
      this.messages.updateOne(
        { _id, next_attempt_at: attempt.due_at },
        {
          $set: {
            status: attempt.status,
            open: attempt.status === 'failed',
            first_attempt_at: stored.first_attempt_at ?? attempt.attempted_at,
            next_attempt_at: attempt.next_attempt_at,
            last_status_code: attempt.status_code,
            last_error: attempt.error,
            last_latency_ms: attempt.latency_ms,
            delivered_at: attempt.status === 'delivered' ? attempt.attempted_at : null,
          },
          $inc: { attempts: 1 },
        },
      ),
    );
  }

  async get(endpointId: string, messageId: string): Promise<OutboxMessage | null> {
    const stored = await guard(() => this.messages.findOne({ _id: key(endpointId, messageId) }));
    return stored ? toMessage(stored) : null;
  }

  async list(endpointId: string, query: OutboxListQuery): Promise<OutboxMessage[]> {
    const filter: Record<string, unknown> = { endpoint_id: endpointId };
    if (query.status) filter.status = query.status;
    if (query.after !== undefined && query.after !== null) filter.position = { $gt: formatPosition(query.after) };
    const stored = await guard(() => this.messages.find(filter).sort({ position: 1 }).limit(query.limit).toArray());
    return stored.map(toMessage);
  }

  async redeliver(endpointId: string, messageId: string, now: string): Promise<boolean> {
    const result = await guard(() =>
      this.messages.updateOne(
        { _id: key(endpointId, messageId) },
        { $set: { status: 'pending', open: true, attempts: 0, first_attempt_at: null, next_attempt_at: now, delivered_at: null } },
      ),
    );
    return result.matchedCount > 0;
  }

  async stats(): Promise<EndpointQueueStats[]> {
    const heads = await this.openHeads();
    return Promise.all(
      heads.map(async (head) => ({
        endpoint_id: head.endpoint_id,
        // Counted in the index alone.
        depth: await guard(() => this.messages.countDocuments({ open: true, endpoint_id: head.endpoint_id })),
        oldest_enqueued_at: head.enqueued_at,
      })),
    );
  }

  async failingSince(endpointId: string): Promise<string | null> {
    return (await guard(() => this.health.findOne({ _id: endpointId })))?.failing_since ?? null;
  }

  async setFailingSince(endpointId: string, since: string | null): Promise<void> {
    await guard(() => this.health.updateOne({ _id: endpointId }, { $set: { failing_since: since } }, { upsert: true }));
  }

  async removeDelivered(before: string, limit: number): Promise<number> {
    const old = await guard(() =>
      this.messages
        .find({ status: 'delivered', delivered_at: { $lt: before } }, { projection: { _id: 1 } })
        .limit(limit)
        .toArray(),
    );
    if (old.length === 0) return 0;
    // Checked again: a message put back to pending since it was found, or delivered again since, stays.
    const removed = await guard(() =>
      this.messages.deleteMany({ _id: { $in: old.map((message) => message._id) }, status: 'delivered', delivered_at: { $lt: before } }),
    );
    return removed.deletedCount;
  }

  /** Only the messages there when it starts (as on SQLite): an endpoint created again meanwhile keeps its own. */
  async removeEndpoint(endpointId: string): Promise<void> {
    const last = await guard(() => this.messages.findOne({ endpoint_id: endpointId }, { sort: { position: -1 }, projection: { position: 1 } }));
    await guard(() => this.health.deleteOne({ _id: endpointId }));
    if (last === null) return;
    await guard(() => this.messages.deleteMany({ endpoint_id: endpointId, position: { $lte: last.position } }));
  }

  async close(): Promise<void> {}
}
