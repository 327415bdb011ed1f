import { randomUUID } from 'node:crypto';
import { newDataKeyBytes } from '../../application/pooled-random-bytes.js';
import { Binary, type Collection, type Db } from 'mongodb';
import type { DataKey, KeyStore } from '../../ports/key-store.js';
import { guardMongo, isDuplicateKey } from './mongo-mapping.js';

interface KeyDocument {
  _id: string;
  subject: string;
  key: Binary;
  created_at: Date;
}

const COLLECTION = 'data_keys';

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

  constructor(db: Db, collection = COLLECTION) {
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
    for (let attempt = 0; ; attempt++) {
      const existing = await this.keys.findOne({ subject });
      if (existing) return toKey(existing);
      try {
        await this.keys.insertOne({ _id: randomUUID(), subject, key: new Binary(material ?? newDataKeyBytes()), created_at: new Date() });
      } catch (error) {
        // Another instance created the subject's key first: read it.
        if (!isDuplicateKey(error) || attempt >= 2) throw error;
      }
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
