import { expect } from 'chai';
import { type Db, MongoServerError } from 'mongodb';
import { KEY_CONCERNS, MongoKeyStore } from '../../../src/adapters/mongodb/mongo-key-store.js';
import { StoreUnavailableError } from '../../../src/ports/event-store.js';

interface StoredKey {
  _id: string;
  subject: string;
}

/**
 * A collection as a replica set shows it to majority reads: an insert is in the unique index at
 * once (a second insert of the subject fails with E11000), but `findOne` sees it only after
 * `visibleAfterReads` more reads (its creator still waits for a majority to acknowledge it).
 */
function laggingMajority(visibleAfterReads: number) {
  const stored: StoredKey[] = [];
  let readsUntilVisible = Number.POSITIVE_INFINITY;
  const collection = {
    createIndex: async () => 'subject_1',
    findOne: async ({ subject }: { subject: string }) => {
      readsUntilVisible -= 1;
      return readsUntilVisible < 0 ? (stored.find((doc) => doc.subject === subject) ?? null) : null;
    },
    insertOne: async (doc: StoredKey) => {
      if (stored.some((existing) => existing.subject === doc.subject)) throw new MongoServerError({ message: 'E11000 duplicate key error', code: 11000 });
      stored.push(doc);
      readsUntilVisible = visibleAfterReads;
      return { insertedId: doc._id };
    },
  };
  return { db: { collection: () => collection } as unknown as Db, stored };
}

describe('MongoDB key store (without a server)', function () {
  it('reads and writes data keys with majority concerns, so no key is handed out that a failover could roll back', function () {
    const opened: { name: string; options: unknown }[] = [];
    const db = { collection: (name: string, options: unknown) => opened.push({ name, options }) && {} } as unknown as Db;
    new MongoKeyStore(db);
    expect(opened).to.deep.equal([{ name: 'data_keys', options: KEY_CONCERNS }]);
    expect(KEY_CONCERNS).to.deep.equal({ readConcern: { level: 'majority' }, writeConcern: { w: 'majority', journal: true } });
  });

  it("a caller that lost the race to create a key waits until the majority read shows the winner's key, however many reads that takes", async () => {
    const { db, stored } = laggingMajority(8);
    const keys = new MongoKeyStore(db);
    const [winner, loser] = await Promise.all([keys.keyFor('user:ann'), keys.keyFor('user:ann')]);
    expect(stored).to.have.length(1);
    expect(loser.id).to.equal(winner.id);
    expect(loser.key.equals(winner.key)).to.equal(true);
  });

  it("a winner's key that never becomes readable is a StoreUnavailableError (503) after the wait, not a bare E11000 (500)", async () => {
    const { db } = laggingMajority(Number.POSITIVE_INFINITY);
    const keys = new MongoKeyStore(db, 'data_keys', 50);
    const [winner, loser] = await Promise.allSettled([keys.keyFor('user:ann'), keys.keyFor('user:ann')]);
    expect(winner.status).to.equal('fulfilled');
    expect(loser.status === 'rejected' && loser.reason).to.be.instanceOf(StoreUnavailableError);
  });
});
