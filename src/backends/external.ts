import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { EventStoreDbEventStore } from '../adapters/eventstoredb/eventstoredb-event-store.js';
import { MongoKeyStore } from '../adapters/mongodb/mongo-key-store.js';
import { LeaseKeeper, MongoLease } from '../adapters/mongodb/mongo-lease.js';
import { MongoRateLimitStore } from '../adapters/mongodb/mongo-rate-limit-store.js';
import { MongoReadStore } from '../adapters/mongodb/mongo-read-store.js';
import { MongoWebhookOutbox } from '../adapters/mongodb/mongo-webhook-outbox.js';
import { PersonalDataCipher } from '../application/privacy/personal-data-cipher.js';
import { PersonalDataEventStore } from '../application/privacy/personal-data-event-store.js';
import { PersonalDataOutbox } from '../application/privacy/personal-data-outbox.js';
import type { Logger } from '../ports/logger.js';
import type { Backend, ExclusiveWork } from './backend.js';

/** How long a projector's lease lasts without renewal; a standby takes over after at most this. */
const PROJECTOR_LEASE_TTL_MS = 15_000;

export interface ExternalBackend extends Backend {
  name: 'external';
  /**
   * The lease that keeps one projector process writing the read models at a time. Each call
   * makes a new owner identity (host, pid, random), so call it once per process.
   */
  projectorLease(): MongoLease;
}

/** Runs `work` only while this process holds the projector lease; renews it every ttl/3. */
function whileHoldingLease(lease: MongoLease, work: ExclusiveWork, logger: Logger): ExclusiveWork {
  const keeper = new LeaseKeeper(
    lease,
    {
      onAcquired: async () => {
        logger.info({ owner: lease.owner }, 'projector lease acquired: projecting');
        await work.start();
      },
      onLost: async (reason) => {
        logger.warn({ owner: lease.owner, err: reason }, 'projector lease lost: standing by');
        await work.stop();
      },
      onError: (error) => logger.warn({ err: error }, 'projector lease renewal failed'),
    },
    PROJECTOR_LEASE_TTL_MS / 3,
  );
  return { start: async () => keeper.start(), stop: () => keeper.stop() };
}

/** Events in EventStoreDB, read models (and the projector lease) in MongoDB. */
export async function openExternalBackend(eventStoreUrl: string, mongoUrl: string, database: string, logger?: Logger): Promise<ExternalBackend> {
  const eventStore = EventStoreDbEventStore.connect(eventStoreUrl, {
    onDropped: (error, retryInMs) => logger?.warn({ err: error, retryInMs }, 'EventStoreDB live subscription dropped; re-subscribing'),
  });
  let readStore: MongoReadStore;
  let webhookOutbox: MongoWebhookOutbox;
  try {
    readStore = await MongoReadStore.connect(mongoUrl, database);
    webhookOutbox = await MongoWebhookOutbox.open(readStore.database);
  } catch (error) {
    await eventStore.close();
    throw error;
  }
  const projectorLease = () =>
    new MongoLease(readStore.database, {
      name: 'projector',
      owner: `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
      ttlMs: PROJECTOR_LEASE_TTL_MS,
    });
  const keyStore = new MongoKeyStore(readStore.database);
  const cipher = new PersonalDataCipher(keyStore);
  return {
    name: 'external',
    eventStore: new PersonalDataEventStore(eventStore, cipher),
    keyStore,
    purgeOverwritten: async () => {},
    readStore,
    rateLimits: new MongoRateLimitStore(readStore.database),
    webhookOutbox: new PersonalDataOutbox(webhookOutbox, cipher),
    projectorLease,
    exclusively: (work, workLogger) => whileHoldingLease(projectorLease(), work, workLogger),
    async close() {
      await eventStore.close();
      await readStore.close();
    },
  };
}
