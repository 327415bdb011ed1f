import { expect } from 'chai';
import { type Db, MongoNetworkError, MongoServerError } from 'mongodb';
import { MongoKeyStore } from '../../../src/adapters/mongodb/mongo-key-store.js';
import { MongoRateLimitStore } from '../../../src/adapters/mongodb/mongo-rate-limit-store.js';
import { StoreUnavailableError } from '../../../src/ports/event-store.js';
import { rejection } from '../../support/rejection.js';

/** A database whose every collection call fails with `error`. */
function failingDb(error: Error): Db {
  const fail = () => {
    throw error;
  };
  const failAsync = async () => fail();
  const collection = {
    createIndex: failAsync,
    indexes: failAsync,
    findOne: failAsync,
    insertOne: failAsync,
    deleteMany: failAsync,
    findOneAndUpdate: failAsync,
    find: () => ({ toArray: failAsync }),
  };
  return { collection: () => collection } as unknown as Db;
}

/** Like the read store: MongoDB unreachable is the ports' StoreUnavailableError (503), never a bare driver error (500). */
describe('MongoDB key and rate-limit stores: an unreachable server is StoreUnavailableError', () => {
  it('every key-store call', async () => {
    const keys = new MongoKeyStore(failingDb(new MongoNetworkError('connection reset')));
    for (const call of [() => keys.keyFor('user:ann'), () => keys.existingKey('user:ann'), () => keys.keysById(['k1']), () => keys.destroy('user:ann')]) {
      expect(await rejection(call)).to.be.instanceOf(StoreUnavailableError);
    }
  });

  it('every rate-limit call', async () => {
    const limits = new MongoRateLimitStore(failingDb(new MongoNetworkError('connection reset')));
    expect(await rejection(() => limits.hit('k', 1, 60_000, 0))).to.be.instanceOf(StoreUnavailableError);
    expect(await rejection(() => limits.removeExpired(0))).to.be.instanceOf(StoreUnavailableError);
  });

  it('other server errors stay as they are', async () => {
    const error = new MongoServerError({ message: 'bad value', code: 2 });
    expect(await rejection(() => new MongoKeyStore(failingDb(error)).existingKey('user:ann'))).to.equal(error);
  });
});
