import 'reflect-metadata';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import { allProjections } from '../projections/index.js';
import { openAppStoreConnect } from './adapters/appstore/open-app-store-connect.js';
import { RevenueCatEntitlements } from './adapters/revenuecat/revenuecat-entitlements.js';
import { RandomIds } from './adapters/system/random-ids.js';
import { SystemClock } from './adapters/system/system-clock.js';
import { EventLog } from './application/event-log.js';
import { BackgroundJobs } from './application/maintenance/background-jobs.js';
import { ClaimRepair } from './application/maintenance/claim-repair.js';
import { ExpirySweep } from './application/maintenance/expiry-sweep.js';
import { CheckpointPoller } from './application/projections/checkpoint-poller.js';
import { ProjectionRunner } from './application/projections/projection-runner.js';
import { CatalogQueries } from './application/queries/catalog-queries.js';
import { PoolReactions } from './application/reactions/pool-reactions.js';
import { ReactionRunner } from './application/reactions/reaction-runner.js';
import { ReferralReactions } from './application/reactions/referral-reactions.js';
import { RevenueReactions } from './application/reactions/revenue-reactions.js';
import { useAccountTokenNamespace } from './domain/revenue/account-token.js';
import { OfferCodeLookup } from './application/store/offer-code-lookup.js';
import { PersonalDataCipher } from './application/privacy/personal-data-cipher.js';
import { PersonalDataSnapshots } from './application/privacy/personal-data-snapshots.js';
import { StreamExecutor } from './application/stream-executor.js';
import { DeliveryEngine } from './application/webhooks/delivery-engine.js';
import { WebhookAdmin } from './application/webhooks/webhook-admin.js';
import { WebhookFeeder } from './application/webhooks/webhook-feeder.js';
import { webhookHealth } from './application/webhooks/webhook-health.js';
import type { Backend } from './backends/backend.js';
import { type Config, configuredRevenueProviders } from './config.js';
import { createApp } from './http/app.js';
import { MeteredEventStore } from './observability/metered-event-store.js';
import { Metrics } from './observability/metrics.js';
import { APP_STORE_CONNECT } from './ports/app-store.js';
import type { Clock } from './ports/clock.js';
import type { Ids } from './ports/ids.js';
import type { Logger } from './ports/logger.js';
import { TOKENS } from './ports/tokens.js';

/**
 * What a process runs: `all` (embedded default: API + projector), `api` (HTTP only; the
 * projector is another process), `projector` (read models, reactions and sweeps; only the
 * operator endpoints over HTTP).
 */
export type Role = 'all' | 'api' | 'projector';

export interface ServiceOptions {
  config: Config;
  backend: Backend;
  logger: Logger;
  role: Role;
  clock?: Clock;
  ids?: Ids;
}

export interface RunningService {
  url: string;
  container: DependencyContainer;
  /** Runs the maintenance jobs now (tests; operators use the interval). */
  runMaintenance(): Promise<void>;
  /** Stops taking requests, finishes in-flight ones, stops at a checkpoint, closes the stores. */
  stop(): Promise<void>;
  /** What a stop is still waiting for (in-flight requests, the projector, the stores); empty when none. */
  pending(): string[];
}

/** Where a stop is: each step waits for the one before. */
type StopStage = 'running' | 'draining requests' | 'stopping the projector' | 'closing the stores' | 'stopped';

/** The requests the server is answering, to tell what holds a shutdown. */
function trackRequests(server: Server): Map<IncomingMessage, number> {
  const inFlight = new Map<IncomingMessage, number>();
  server.on('request', (request: IncomingMessage, response) => {
    inFlight.set(request, Date.now());
    response.once('close', () => inFlight.delete(request));
  });
  return inFlight;
}

function listen(server: Server, port: number, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address() as AddressInfo;
      const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      resolve(`http://${shownHost === '0.0.0.0' ? '127.0.0.1' : shownHost}:${address.port}`);
    });
  });
}

export async function startService(options: ServiceOptions): Promise<RunningService> {
  const { config, backend, logger, role } = options;
  const container = rootContainer.createChildContainer();
  const metrics = new Metrics();
  const eventStore = new MeteredEventStore(backend.eventStore, metrics);
  const ids = options.ids ?? new RandomIds();
  const log = new EventLog(eventStore, ids);

  container.register(TOKENS.Config, { useValue: config });
  container.register(TOKENS.Logger, { useValue: logger });
  container.register(TOKENS.Metrics, { useValue: metrics });
  container.register(TOKENS.EventStore, { useValue: eventStore });
  container.register(TOKENS.ReadStore, { useValue: backend.readStore });
  container.register(TOKENS.RateLimitStore, { useValue: backend.rateLimits });
  container.register(TOKENS.Clock, { useValue: options.clock ?? new SystemClock() });
  container.register(TOKENS.Ids, { useValue: ids });
  container.register(TOKENS.WebhookOutbox, { useValue: backend.webhookOutbox });
  container.register(EventLog, { useValue: log });
  container.register(TOKENS.KeyStore, { useValue: backend.keyStore });
  container.register(TOKENS.PurgeOverwritten, { useValue: () => backend.purgeOverwritten() });
  const snapshots = new PersonalDataSnapshots(new PersonalDataCipher(backend.keyStore));
  container.register(StreamExecutor, { useValue: new StreamExecutor(log, backend.readStore, snapshots) });
  container.register(CatalogQueries, { useValue: new CatalogQueries(backend.readStore) });
  container.register(APP_STORE_CONNECT, { useValue: await openAppStoreConnect(config, container.resolve<Clock>(TOKENS.Clock)) });
  container.registerSingleton(OfferCodeLookup);

  const runsProjector = role !== 'api';
  const runner = new ProjectionRunner(log, backend.readStore, allProjections, logger);
  // The local runner tells progress only when it is the projector for sure (embedded); on the
  // external backend it may be a standby, so follow the checkpoints in the read store.
  const consistency = runsProjector && backend.name === 'embedded' ? runner : new CheckpointPoller(backend.readStore, allProjections);
  container.register(TOKENS.ReadConsistency, { useValue: consistency });
  metrics.watchProjections(
    () => consistency.projections(),
    () => eventStore.headPosition(),
  );

  useAccountTokenNamespace(config.ACCOUNT_TOKEN_NAMESPACE);
  const reactions = new ReactionRunner(log, backend.readStore, [container.resolve(ReferralReactions), container.resolve(PoolReactions)], logger);
  // Revenue notifications (SPEC §11) follow the log on their own checkpoint; a clawback waits
  // for the referral reactions to pass its refund, so the conversion's sender grants exist.
  const revenueReactions = container.resolve(RevenueReactions);
  revenueReactions.referralsPassed = async (position) => {
    while (runsProjector && BigInt(reactions.health().checkpoint ?? '-1') < position && reactions.health().failure === null) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const revenueRunner = new ReactionRunner(log, backend.readStore, [revenueReactions], logger);
  container.register(TOKENS.ReactionHealth, {
    useValue: () => {
      if (!runsProjector) return null;
      const main = reactions.health();
      return main.failure === null ? { ...main, failure: revenueRunner.health().failure } : main;
    },
  });
  if (runsProjector) metrics.watchReactions(() => reactions.health().failure !== null);
  // Outgoing webhooks and RevenueCat fulfilment: fed from the log and delivered by the projector only.
  const clock = container.resolve<Clock>(TOKENS.Clock);
  const fulfilment = config.REVENUECAT_SECRET_API_KEY !== null;
  const partner = fulfilment ? new RevenueCatEntitlements(config.REVENUECAT_SECRET_API_KEY!, config.REVENUECAT_BASE_URL, config.WEBHOOK_TIMEOUT_MS) : null;
  const webhookAdmin = container.resolve(WebhookAdmin);
  const delivery = new DeliveryEngine({
    outbox: backend.webhookOutbox,
    readStore: backend.readStore,
    clock,
    settings: config,
    metrics,
    logger,
    partner,
    disable: (endpointId, reason) => webhookAdmin.disable(endpointId, reason),
  });
  const feeder = new WebhookFeeder(log, backend.webhookOutbox, ids, clock, fulfilment, () => delivery.wake(), logger);
  metrics.watchWebhooks(
    () => backend.webhookOutbox.stats(),
    () => clock.now(),
  );
  container.register(TOKENS.WebhookHealth, { useValue: () => webhookHealth(backend.readStore, backend.webhookOutbox, fulfilment) });
  const jobs = new BackgroundJobs(
    [
      { name: 'expiry-sweep', run: () => container.resolve(ExpirySweep).run() },
      { name: 'claim-repair', run: () => container.resolve(ClaimRepair).run() },
      { name: 'rate-limit-cleanup', run: () => backend.rateLimits.removeExpired(container.resolve<Clock>(TOKENS.Clock).now().getTime()) },
    ],
    config.SWEEP_INTERVAL_S * 1000,
    logger,
  );
  const projector = backend.exclusively(
    {
      async start() {
        await runner.init();
        await reactions.init();
        await revenueRunner.init();
        await feeder.init();
        runner.start();
        reactions.start();
        revenueRunner.start();
        feeder.start();
        delivery.start();
        jobs.start();
      },
      async stop() {
        await jobs.stop();
        await delivery.stop();
        await feeder.stop();
        await revenueRunner.stop();
        await reactions.stop();
        await runner.stop();
      },
    },
    logger,
  );
  if (runsProjector) await projector.start();

  const app = createApp(container, role === 'projector' ? 'operator' : 'full');
  const server = createServer(app);
  const inFlight = trackRequests(server);
  let url: string;
  try {
    url = await listen(server, config.PORT, config.HOST);
  } catch (error) {
    // Nothing may keep running after a failed start (the projector, its timers, the stores).
    if (runsProjector) await projector.stop().catch(() => {});
    await backend.close().catch(() => {});
    throw error;
  }
  logger.info({ providers: configuredRevenueProviders(config), conversionsFrom: config.CONVERSIONS_FROM }, 'revenue notifications');
  logger.info(
    { url, role, backend: backend.name, pid: process.pid },
    `service started on ${url} (pid ${process.pid}; stop with Ctrl-C or kill -TERM ${process.pid})`,
  );

  let stage: StopStage = 'running';
  let stopping: Promise<void> | null = null;
  return {
    url,
    container,
    runMaintenance: () => jobs.runOnce(),
    stop() {
      stopping ??= (async () => {
        stage = 'draining requests';
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        });
        stage = 'stopping the projector';
        if (runsProjector) await projector.stop();
        stage = 'closing the stores';
        await backend.close();
        stage = 'stopped';
        logger.info({}, 'service stopped');
      })();
      return stopping;
    },
    pending() {
      switch (stage) {
        case 'running':
        case 'stopped':
          return [];
        case 'draining requests': {
          const now = Date.now();
          const requests = [...inFlight].map(([request, since]) => `${request.method} ${request.url} (open for ${Math.round((now - since) / 1000)} s)`);
          return [`${requests.length} HTTP request(s) in flight${requests.length > 0 ? `: ${requests.join(', ')}` : ' (connections closing)'}`];
        }
        case 'stopping the projector':
          return ['the projector (reactions, background jobs and projections stopping at a checkpoint)'];
        case 'closing the stores':
          return [`the ${backend.name} stores (closing)`];
      }
    },
  };
}
