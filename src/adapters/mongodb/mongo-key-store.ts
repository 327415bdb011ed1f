import { randomUUID } from 'node:crypto';
import { newDataKeyBytes } from '../../application/pooled-random-bytes.js';
import { Binary, type Collection, type Db } from 'mongodb';
import { StoreUnavailableError } from '../../ports/event-store.js';
import type { DataKey, KeyStore } from '../../ports/key-store.js';
import { guardMongo, isDuplicateKey } from './mongo-mapping.js';

interface KeyDocument {
  _id: string;
  subject: string;
  key: Binary;
  created_at: Date;
}

const COLLECTION = 'data_keys';

/**
 * How long a caller that lost the race to create a subject's key waits for the winner's key to
 * become readable: the winner's insert is in the index at once (the loser's insert fails on it),
 * but a majority read sees it only once a majority holds it.
 */
const WINNER_VISIBLE_WITHIN_MS = 10_000;

/** Reads see only what a majority holds; writes are acknowledged once a majority has journalled them. */
export const KEY_CONCERNS = { readConcern: { level: 'majority' }, writeConcern: { w: 'majority', journal: true } } as const;

/**
 * Data keys in a MongoDB collection beside the read models (never in EventStoreDB): `subject`
 * is unique, so concurrent creators on any instance end up with the same key. Deleting the
 * document destroys the key; MongoDB backups and the oplog keep it for their retention (README).
 */
export class MongoKeyStore implements KeyStore {
  private readonly keys: Collection<KeyDocument>;
  private indexed: Promise<unknown> | null = null;

  constructor(
    db: Db,
    collection = COLLECTION,
    private readonly winnerVisibleWithinMs = WINNER_VISIBLE_WITHIN_MS,
  ) {
    // A key is handed out only once a majority holds it, as the embedded store hands one out only
    // once it is synced: a key read from one member before the others had it could be rolled back
    // at a failover, leaving the values sealed with it unreadable (an erasure nobody asked for).
    this.keys = db.collection<KeyDocument>(collection, KEY_CONCERNS);
  }

  private ensureIndexes(): Promise<unknown> {
    this.indexed ??= this.keys.createIndex({ subject: 1 }, { unique: true }).catch((error) => {
      this.indexed = null;
      throw error;
    });
    return this.indexed;
  }

  keyFor(subject: string, material?: Buffer): Promise<DataKey> {
    return guardMongo(() => this.keyForUnguarded(subject, material));
  }

  private async keyForUnguarded(subject: string, material?: Buffer): Promise<DataKey> {
    await this.ensureIndexes();
    const existing = await this.keys.findOne({ subject });
    if (existing) return toKey(existing);
    const created: KeyDocument = { _id: randomUUID(), subject, key: new Binary(material ?? newDataKeyBytes()), created_at: new Date() };
    try {
      // Acknowledged once a majority holds it (KEY_CONCERNS): safe to hand out.
      await this.keys.insertOne(created);
      return toKey(created);
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
    }
    // Another caller created the subject's key first: wait until a majority read sees it.
    const deadline = Date.now() + this.winnerVisibleWithinMs;
    for (let pause = 2; ; pause = Math.min(pause * 2, 100)) {
      const winner = await this.keys.findOne({ subject });
      if (winner) return toKey(winner);
      if (Date.now() >= deadline)
        throw new StoreUnavailableError(
          `MongoDB: the data key of ${subject} was created by another caller but is not readable from a majority after ${this.winnerVisibleWithinMs} ms`,
        );
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  async existingKey(subject: string): Promise<DataKey | null> {
    const existing = await guardMongo(() => this.keys.findOne({ subject }));
    return existing ? toKey(existing) : null;
  }

  async keysById(ids: readonly string[]): Promise<Map<string, DataKey>> {
    const found = new Map<string, DataKey>();
    if (ids.length === 0) return found;
    for (const doc of await guardMongo(() => this.keys.find({ _id: { $in: [...new Set(ids)] } }).toArray())) found.set(doc._id, toKey(doc));
    return found;
  }

  async destroy(subject: string): Promise<number> {
    return (await guardMongo(() => this.keys.deleteMany({ subject }))).deletedCount;
  }

  async close(): Promise<void> {}
}

function toKey(doc: KeyDocument): DataKey {
  return { id: doc._id, subject: doc.subject, key: Buffer.from(doc.key.buffer) };
}
