import { expect } from 'chai';
import { type Db, MongoServerError } from 'mongodb';
import { MongoRateLimitStore } from '../../../src/adapters/mongodb/mongo-rate-limit-store.js';

/** A collection that records its index calls and answers a hit with one counter. */
function recordingCollection(indexes: () => Promise<object[]>) {
  const calls: unknown[][] = [];
  const collection = {
    indexes: async () => {
      calls.push(['indexes']);
      return indexes();
    },
    dropIndex: async (name: string) => calls.push(['dropIndex', name]),
    createIndex: async (...args: unknown[]) => calls.push(['createIndex', ...args]),
    findOneAndUpdate: async () => ({ _id: 'k', points: 1, reset_at: new Date(60_000) }),
  };
  return { db: { collection: () => collection } as unknown as Db, calls };
}

// Windows end on the service's clock (the cleanup job's removeExpired); a TTL index would end them
// on MongoDB's clock, deleting live windows when that clock runs ahead.
describe('MongoDB rate-limit store (without a server): no TTL index', () => {
  it('indexes reset_at for the cleanup job without a TTL, on a new collection', async () => {
    const { db, calls } = recordingCollection(async () => {
      throw new MongoServerError({ message: 'ns does not exist', code: 26 });
    });
    expect(await new MongoRateLimitStore(db).hit('k', 1, 60_000, 0)).to.deep.equal({ points: 1, resetAtMs: 60_000 });
    expect(calls).to.deep.equal([['indexes'], ['createIndex', { reset_at: 1 }, { name: 'reset_at_1' }]]);
  });

  it('drops the TTL index earlier versions made, then makes it again without the TTL; the other indexes stay', async () => {
    const { db, calls } = recordingCollection(async () => [
      { v: 2, key: { _id: 1 }, name: '_id_' },
      { v: 2, key: { reset_at: 1 }, name: 'reset_at_1', expireAfterSeconds: 0 },
    ]);
    await new MongoRateLimitStore(db).hit('k', 1, 60_000, 0);
    expect(calls).to.deep.equal([['indexes'], ['dropIndex', 'reset_at_1'], ['createIndex', { reset_at: 1 }, { name: 'reset_at_1' }]]);
  });

  it('other errors listing the indexes are not swallowed', async () => {
    const failure = new MongoServerError({ message: 'not authorized', code: 13 });
    const { db } = recordingCollection(async () => {
      throw failure;
    });
    const error = await new MongoRateLimitStore(db).hit('k', 1, 60_000, 0).catch((caught: unknown) => caught);
    expect(error).to.equal(failure);
  });
});
