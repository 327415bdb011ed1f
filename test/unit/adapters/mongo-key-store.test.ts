import { expect } from 'chai';
import type { Db } from 'mongodb';
import { KEY_CONCERNS, MongoKeyStore } from '../../../src/adapters/mongodb/mongo-key-store.js';

describe('MongoDB key store (without a server)', function () {
  it('reads and writes data keys with majority concerns, so no key is handed out that a failover could roll back', function () {
    const opened: { name: string; options: unknown }[] = [];
    const db = { collection: (name: string, options: unknown) => opened.push({ name, options }) && {} } as unknown as Db;
    new MongoKeyStore(db);
    expect(opened).to.deep.equal([{ name: 'data_keys', options: KEY_CONCERNS }]);
    expect(KEY_CONCERNS).to.deep.equal({ readConcern: { level: 'majority' }, writeConcern: { w: 'majority', journal: true } });
  });
});
