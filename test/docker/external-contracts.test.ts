import { randomUUID } from 'node:crypto';
import { EventStoreDbEventStore } from '../../src/adapters/eventstoredb/eventstoredb-event-store.js';
import { MongoKeyStore } from '../../src/adapters/mongodb/mongo-key-store.js';
import { MongoRateLimitStore } from '../../src/adapters/mongodb/mongo-rate-limit-store.js';
import { MongoReadStore } from '../../src/adapters/mongodb/mongo-read-store.js';
import { MongoWebhookOutbox } from '../../src/adapters/mongodb/mongo-webhook-outbox.js';
import { analyticsReadModelContract } from '../contract/analytics-read-model.contract.js';
import { eventStoreContract } from '../contract/event-store.contract.js';
import { keyStoreContract } from '../contract/key-store.contract.js';
import { rateLimitStoreContract } from '../contract/rate-limit-store.contract.js';
import { readStoreContract } from '../contract/read-store.contract.js';
import { webhookOutboxContract } from '../contract/webhook-outbox.contract.js';
import { backendContainers } from './containers.setup.js';

// The same suites the SQLite adapters pass (test/contract), unchanged, on the real servers.
// One server serves every test, so the suites isolate themselves by unique names.

eventStoreContract(
  'EventStoreDB 24.10 (testcontainers)',
  async () => {
    const store = EventStoreDbEventStore.connect(backendContainers().eventStoreUrl);
    return { store, dispose: () => store.close() };
  },
  { freshStorePerTest: false },
);

readStoreContract(
  'MongoDB 7 replica set (testcontainers)',
  async () => {
    const store = await MongoReadStore.connect(backendContainers().mongoUrl, 'contract_tests');
    return { store, dispose: () => store.close() };
  },
  { freshStorePerTest: false },
);

rateLimitStoreContract(
  'MongoDB 7 replica set (testcontainers)',
  async () => {
    const readStore = await MongoReadStore.connect(backendContainers().mongoUrl, 'contract_tests');
    return { store: new MongoRateLimitStore(readStore.database), dispose: () => readStore.close() };
  },
  { freshStorePerTest: false },
);

webhookOutboxContract(
  'MongoDB 7 replica set (testcontainers)',
  async () => {
    // A database per test: the contract's sweep of delivered messages (removeDelivered) is not
    // limited to one endpoint, so messages other tests delivered would be counted too.
    const readStore = await MongoReadStore.connect(backendContainers().mongoUrl, `outbox_contract_${randomUUID().slice(0, 8)}`);
    const store = await MongoWebhookOutbox.open(readStore.database);
    return { store, dispose: () => readStore.close() };
  },
  { freshStorePerTest: false },
);

keyStoreContract(
  'MongoDB 7 replica set (testcontainers)',
  async () => {
    const readStore = await MongoReadStore.connect(backendContainers().mongoUrl, 'contract_tests');
    return { store: new MongoKeyStore(readStore.database), dispose: () => readStore.close() };
  },
  { freshStorePerTest: false },
);
analyticsReadModelContract('MongoDB 7 replica set (testcontainers)', async () => {
  // Its own database: the suite needs the analytics collections to itself.
  const store = await MongoReadStore.connect(backendContainers().mongoUrl, `analytics_contract_${Date.now()}`);
  return { store, dispose: () => store.close() };
});
