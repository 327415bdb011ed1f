import { expect } from 'chai';
import { GenericContainer, Wait } from 'testcontainers';
import { MongoReadStore } from '../../src/adapters/mongodb/mongo-read-store.js';
import { ConfigError } from '../../src/config.js';
import { rejection } from '../support/rejection.js';
import { MONGO_IMAGE } from './backend-containers.js';

// A standalone server runs no transactions: a crash between a commit's documents and its
// checkpoint would fold the same events twice after the restart. The service refuses it.
describe('MongoDB without a replica set (testcontainers)', () => {
  it('is refused at connect with a ConfigError, which a start reports with exit 78', async () => {
    const container = await new GenericContainer(MONGO_IMAGE)
      .withCommand(['mongod', '--bind_ip_all'])
      .withExposedPorts(27017)
      .withWaitStrategy(Wait.forLogMessage(/Waiting for connections/))
      .withStartupTimeout(180_000)
      .start();
    try {
      const url = `mongodb://${container.getHost()}:${container.getMappedPort(27017)}/?directConnection=true`;
      const error = await rejection(() => MongoReadStore.connect(url, 'standalone_tests'));
      expect(error).to.be.instanceOf(ConfigError);
      expect((error as ConfigError).problems[0]).to.contain('replica set');
    } finally {
      await container.stop();
    }
  });
});
