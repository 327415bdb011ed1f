import { expect } from 'chai';
import type { Db } from 'mongodb';
import { requireTransactions } from '../../../src/adapters/mongodb/mongo-read-store.js';
import { ConfigError } from '../../../src/config.js';
import { rejection } from '../../support/rejection.js';

/** A database whose server answers `hello` with `reply`. */
function answering(reply: Record<string, unknown>): Db {
  return { admin: () => ({ command: async () => reply }) } as unknown as Db;
}

describe('MongoDB read store (without a server): a deployment without transactions is refused', () => {
  it('a standalone mongod is a configuration error naming MONGODB_URL and what to run instead', async () => {
    const error = await rejection(() => requireTransactions(answering({ isWritablePrimary: true, maxWireVersion: 21 })));
    expect(error).to.be.instanceOf(ConfigError);
    expect((error as ConfigError).problems).to.have.length(1);
    expect((error as ConfigError).problems[0])
      .to.match(/^MONGODB_URL: /)
      .and.to.contain('replica set')
      .and.to.contain('rs.initiate()');
  });

  it('a replica set member (even of one member) and a sharded cluster (mongos) are accepted', async () => {
    await requireTransactions(answering({ isWritablePrimary: true, setName: 'rs0' }));
    await requireTransactions(answering({ isWritablePrimary: true, msg: 'isdbgrid' }));
  });
});
