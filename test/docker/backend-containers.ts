import { GenericContainer, getContainerRuntimeClient, type StartedTestContainer, Wait } from 'testcontainers';
import { MongoClient } from 'mongodb';

/**
 * The images the compose file uses too, unless EVENTSTORE_IMAGE or MONGO_IMAGE name others (on
 * ARM, the EventStoreDB 24.10 image may not run natively). EventStoreDB 24.x: no external-TCP options.
 */
export const EVENTSTORE_IMAGE = process.env.EVENTSTORE_IMAGE || 'eventstore/eventstore:24.10';
export const MONGO_IMAGE = process.env.MONGO_IMAGE || 'mongo:7.0';

export interface BackendContainers {
  eventStoreUrl: string;
  mongoUrl: string;
  stop(): Promise<void>;
}

/** The reason no container runtime can be used here, or null when one answers. */
export async function containerRuntimeProblem(): Promise<string | null> {
  try {
    // Throws when no strategy (socket, DOCKER_HOST, Podman, …) finds a working runtime.
    await getContainerRuntimeClient();
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

async function startEventStore(): Promise<StartedTestContainer> {
  return new GenericContainer(EVENTSTORE_IMAGE)
    .withEnvironment({
      EVENTSTORE_INSECURE: 'true',
      EVENTSTORE_CLUSTER_SIZE: '1',
      EVENTSTORE_RUN_PROJECTIONS: 'None',
      EVENTSTORE_MEM_DB: 'true',
      // As docker-compose.yml: one append carries a whole bulk upload.
      EVENTSTORE_MAX_APPEND_SIZE: '8388608',
    })
    .withExposedPorts(2113)
    .withWaitStrategy(Wait.forHttp('/health/live', 2113).forStatusCodeMatching((status) => status >= 200 && status < 300))
    .withStartupTimeout(180_000)
    .start();
}

/** MongoDB as a single-node replica set (transactions), initiated once it listens. */
async function startMongo(): Promise<{ container: StartedTestContainer; url: string }> {
  const container = await new GenericContainer(MONGO_IMAGE)
    .withCommand(['mongod', '--replSet', 'rs0', '--bind_ip_all'])
    .withExposedPorts(27017)
    .withWaitStrategy(Wait.forLogMessage(/Waiting for connections/))
    .withStartupTimeout(180_000)
    .start();
  const initiated = await container.exec([
    'mongosh',
    '--quiet',
    '--eval',
    "try { rs.status().ok } catch (e) { rs.initiate({ _id: 'rs0', members: [{ _id: 0, host: 'localhost:27017' }] }).ok }",
  ]);
  if (initiated.exitCode !== 0) throw new Error(`replica set initiation failed: ${initiated.output}`);
  // directConnection: talk to this node as mapped on the host, not to the member name inside the container.
  const url = `mongodb://${container.getHost()}:${container.getMappedPort(27017)}/?directConnection=true`;
  await waitForPrimary(url);
  return { container, url };
}

async function waitForPrimary(url: string): Promise<void> {
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 5_000 });
  try {
    await client.connect();
    for (let attempt = 0; attempt < 300; attempt += 1) {
      const hello = await client.db('admin').command({ hello: 1 });
      if (hello.isWritablePrimary === true) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error('MongoDB did not become primary');
  } finally {
    await client.close();
  }
}

export async function startBackendContainers(): Promise<BackendContainers> {
  const [eventStore, mongo] = await Promise.all([startEventStore(), startMongo()]);
  return {
    eventStoreUrl: `esdb://${eventStore.getHost()}:${eventStore.getMappedPort(2113)}?tls=false`,
    mongoUrl: mongo.url,
    async stop() {
      await Promise.allSettled([eventStore.stop(), mongo.container.stop()]);
    },
  };
}
