import { FraudRuleQueries } from './application/fraud/fraud-rule-queries.js';
import { type DependencyContainer, type InjectionToken, instanceCachingFactory, container as rootContainer } from 'tsyringe';
import { allProjections } from '../projections/index.js';
import type { Projection } from '../projections/projection.js';
import { openAppStoreConnect } from './adapters/appstore/open-app-store-connect.js';
import { RevenueCatEntitlements } from './adapters/revenuecat/revenuecat-entitlements.js';
import { RandomIds } from './adapters/system/random-ids.js';
import { SystemClock } from './adapters/system/system-clock.js';
import { EventLog } from './application/event-log.js';
import { BackgroundJobs } from './application/maintenance/background-jobs.js';
import { ClaimRepair } from './application/maintenance/claim-repair.js';
import { ExpirySweep } from './application/maintenance/expiry-sweep.js';
import { CustomerErasureLock } from './application/privacy/customer-erasure-lock.js';
import { ExportErasureGate } from './application/privacy/export-erasure-gate.js';
import { PersonalDataCipher } from './application/privacy/personal-data-cipher.js';
import { PersonalDataSnapshots } from './application/privacy/personal-data-snapshots.js';
import { CheckpointPoller } from './application/projections/checkpoint-poller.js';
import { ProjectingOrStandby } from './application/projections/projecting-or-standby.js';
import { ProjectionRunner } from './application/projections/projection-runner.js';
import { ReadModelGate } from './application/projections/read-model-gate.js';
import { ClaimCodeHandler } from './application/commands/claim-code.js';
import { CatalogQueries } from './application/queries/catalog-queries.js';
import { PoolReactions } from './application/reactions/pool-reactions.js';
import { ReactionRunner } from './application/reactions/reaction-runner.js';
import { ReferralReactions } from './application/reactions/referral-reactions.js';
import { RevenueReactions } from './application/reactions/revenue-reactions.js';
import { OfferCodeLookup } from './application/offer-codes/offer-code-lookup.js';
import { StreamExecutor } from './application/stream-executor.js';
import { DeliveryEngine } from './application/webhooks/delivery-engine.js';
import { WebhookAdmin } from './application/webhooks/webhook-admin.js';
import { WebhookFeeder } from './application/webhooks/webhook-feeder.js';
import { webhookHealth } from './application/webhooks/webhook-health.js';
import type { Backend } from './backends/backend.js';
import type { Config } from './config.js';
import { MeteredEventStore } from './observability/metered-event-store.js';
import { Metrics } from './observability/metrics.js';
import { RequestActivity } from './observability/request-activity.js';
import { APP_STORE_CONNECT } from './ports/app-store.js';
import type { Clock } from './ports/clock.js';
import type { EventStore } from './ports/event-store.js';
import type { Ids } from './ports/ids.js';
import type { KeyStore } from './ports/key-store.js';
import type { Logger } from './ports/logger.js';
import type { PartnerEntitlements } from './ports/partner-entitlements.js';
import type { ReadConsistency } from './ports/read-consistency.js';
import type { ReadStore } from './ports/read-store.js';
import { TOKENS } from './ports/tokens.js';
import { webhookRetention } from './application/webhooks/webhook-retention.js';
import { needsReplay } from './application/projections/replay-gate.js';
import type { WebhookOutbox } from './ports/webhook-outbox.js';

/**
 * What a process runs: `all` (embedded default: API + projector), `api` (HTTP only; the
 * projector is another process), `projector` (read models, reactions and sweeps; only the
 * operator endpoints over HTTP).
 */
export type Role = 'all' | 'api' | 'projector';

export interface CompositionOptions {
  config: Config;
  backend: Backend;
  logger: Logger;
  role: Role;
  clock?: Clock;
  ids?: Ids;
}

/** What the projector process starts and stops, in order (src/service.ts runs it exclusively). */
export interface Projector {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Tokens of the process's parts that share a class or are not classes of their own. */
export const PROCESS = {
  /** The reactions that follow the log on the main checkpoint (referrals, pooled codes). */
  ReactionRunner: Symbol('ReactionRunner'),
  /** Revenue notifications (SPEC §11): their own checkpoint. */
  RevenueReactionRunner: Symbol('RevenueReactionRunner'),
  /** RevenueCat fulfilment (PartnerEntitlements | null: null when not configured). */
  PartnerEntitlements: Symbol('PartnerEntitlements'),
  Projector: Symbol('Projector'),
} as const;

/** How often a projector waiting for a replay looks again. */
const REPLAY_POLL_MS = 1_000;

/** A singleton built by `build` on first resolve. */
function singleton<T>(container: DependencyContainer, token: InjectionToken<T>, build: (c: DependencyContainer) => T): void {
  container.register(token, { useFactory: instanceCachingFactory(build) });
}

/**
 * The composition root: every part of the service is registered here, in one tsyringe container
 * per service. Ports are values (the backend's adapters); classes that need only ports and other
 * classes are `@injectable()` and resolved by tsyringe; classes that also need values (the
 * projections, the jobs, callbacks between parts) are registered with factories below. The
 * process (src/service.ts) only resolves what it starts: the HTTP app, the projector, the jobs.
 */
export async function composeService(options: CompositionOptions): Promise<DependencyContainer> {
  const { config, backend, logger, role } = options;
  const container = rootContainer.createChildContainer();
  const runsProjector = role !== 'api';

  // Ports and settings: values.
  container.register(TOKENS.Config, { useValue: config });
  container.register(TOKENS.Logger, { useValue: logger });
  container.register(TOKENS.ReadStore, { useValue: backend.readStore });
  container.register(TOKENS.RateLimitStore, { useValue: backend.rateLimits });
  container.register(TOKENS.WebhookOutbox, { useValue: backend.webhookOutbox });
  container.register(TOKENS.KeyStore, { useValue: backend.keyStore });
  container.register(TOKENS.PurgeOverwritten, { useValue: () => backend.purgeOverwritten() });
  container.register(TOKENS.Clock, { useValue: options.clock ?? new SystemClock() });
  container.register(TOKENS.Ids, { useValue: options.ids ?? new RandomIds() });
  container.register(TOKENS.Projections, { useValue: allProjections({ accountTokenNamespace: config.ACCOUNT_TOKEN_NAMESPACE }) });
  container.register(TOKENS.Metrics, { useValue: new Metrics() });
  container.register(RequestActivity, { useValue: new RequestActivity() });
  singleton(container, TOKENS.EventStore, (c) => new MeteredEventStore(backend.eventStore, c.resolve<Metrics>(TOKENS.Metrics)));
  container.register(APP_STORE_CONNECT, { useValue: await openAppStoreConnect(config, container.resolve<Clock>(TOKENS.Clock)) });

  // The write path and the read models.
  singleton(container, EventLog, (c) => new EventLog(c.resolve<EventStore>(TOKENS.EventStore), c.resolve<Ids>(TOKENS.Ids)));
  singleton(container, PersonalDataCipher, (c) => new PersonalDataCipher(c.resolve<KeyStore>(TOKENS.KeyStore)));
  singleton(container, PersonalDataSnapshots, (c) => new PersonalDataSnapshots(c.resolve(PersonalDataCipher)));
  singleton(
    container,
    StreamExecutor,
    (c) => new StreamExecutor(c.resolve(EventLog), c.resolve<ReadStore>(TOKENS.ReadStore), c.resolve(PersonalDataSnapshots)),
  );
  singleton(container, CatalogQueries, (c) => new CatalogQueries(c.resolve<ReadStore>(TOKENS.ReadStore)));
  container.registerSingleton(OfferCodeLookup);
  // One gate per process: the projector's commits wait for the multi-read answers under way.
  container.registerSingleton(ReadModelGate);
  // One instance: it queues each claimer's claims (one at a time per user).
  container.registerSingleton(ClaimCodeHandler);
  // One instance, so the rules in force stay cached between claims.
  container.registerSingleton(FraudRuleQueries);
  // One per service: erasures and the notifications naming their customers wait for each other.
  container.registerSingleton(CustomerErasureLock);
  container.registerSingleton(ExportErasureGate);
  const projections = (c: DependencyContainer) => c.resolve<Projection[]>(TOKENS.Projections);
  singleton(
    container,
    ProjectionRunner,
    (c) =>
      new ProjectionRunner(
        c.resolve(EventLog),
        c.resolve<ReadStore>(TOKENS.ReadStore),
        projections(c),
        c.resolve<Logger>(TOKENS.Logger),
        c.resolve(ReadModelGate),
      ),
  );
  singleton(container, CheckpointPoller, (c) => new CheckpointPoller(c.resolve<ReadStore>(TOKENS.ReadStore), projections(c)));
  // On the embedded backend, the local runner tells progress as it commits while this process
  // projects; a standby (another process holds the DATA_DIR's projector lock) follows the
  // checkpoints in the read store. On the external backend, always the checkpoints.
  if (runsProjector && backend.name === 'embedded') {
    singleton(container, ProjectingOrStandby, (c) => new ProjectingOrStandby(c.resolve(ProjectionRunner), c.resolve(CheckpointPoller)));
    container.register(TOKENS.ReadConsistency, { useToken: ProjectingOrStandby });
  } else {
    container.register(TOKENS.ReadConsistency, { useToken: CheckpointPoller });
  }

  // Reactions (process managers).
  const reactionRunner = (c: DependencyContainer) => c.resolve<ReactionRunner>(PROCESS.ReactionRunner);
  singleton(
    container,
    PROCESS.ReactionRunner,
    (c) =>
      new ReactionRunner(
        c.resolve(EventLog),
        c.resolve<ReadStore>(TOKENS.ReadStore),
        [c.resolve(ReferralReactions), c.resolve(PoolReactions)],
        c.resolve<Logger>(TOKENS.Logger),
      ),
  );
  singleton(container, PROCESS.RevenueReactionRunner, (c) => {
    // A clawback waits for the referral reactions to pass its refund, so the conversion's sender grants exist.
    const revenueReactions = c.resolve(RevenueReactions);
    const reactions = reactionRunner(c);
    revenueReactions.referralsPassed = async (position) => {
      while (runsProjector && BigInt(reactions.health().checkpoint ?? '-1') < position && reactions.health().failure === null) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    return new ReactionRunner(c.resolve(EventLog), c.resolve<ReadStore>(TOKENS.ReadStore), [revenueReactions], c.resolve<Logger>(TOKENS.Logger));
  });
  container.register(TOKENS.ReactionHealth, {
    useFactory: instanceCachingFactory((c) => () => {
      // A standby (its projector not running) does not run them either.
      if (!runsProjector || !c.resolve(ProjectionRunner).following) return null;
      const main = reactionRunner(c).health();
      return main.failure === null ? { ...main, failure: c.resolve<ReactionRunner>(PROCESS.RevenueReactionRunner).health().failure } : main;
    }),
  });

  // Outgoing webhooks and RevenueCat fulfilment: fed from the log and delivered by the projector only.
  const fulfilment = config.REVENUECAT_SECRET_API_KEY !== null;
  const partner = fulfilment ? new RevenueCatEntitlements(config.REVENUECAT_SECRET_API_KEY!, config.REVENUECAT_BASE_URL, config.WEBHOOK_TIMEOUT_MS) : null;
  // A factory: tsyringe does not take null as a value.
  container.register(PROCESS.PartnerEntitlements, { useFactory: () => partner });
  singleton(container, DeliveryEngine, (c) => {
    const webhookAdmin = c.resolve(WebhookAdmin);
    return new DeliveryEngine({
      outbox: c.resolve<WebhookOutbox>(TOKENS.WebhookOutbox),
      readStore: c.resolve<ReadStore>(TOKENS.ReadStore),
      consistency: c.resolve<ReadConsistency>(TOKENS.ReadConsistency),
      clock: c.resolve<Clock>(TOKENS.Clock),
      settings: config,
      metrics: c.resolve<Metrics>(TOKENS.Metrics),
      logger: c.resolve<Logger>(TOKENS.Logger),
      partner: c.resolve<PartnerEntitlements | null>(PROCESS.PartnerEntitlements),
      disable: (endpointId, reason, attempted) => webhookAdmin.disable(endpointId, reason, attempted),
      activity: c.resolve(RequestActivity),
    });
  });
  singleton(container, WebhookFeeder, (c) => {
    const delivery = c.resolve(DeliveryEngine);
    return new WebhookFeeder(
      c.resolve(EventLog),
      c.resolve<WebhookOutbox>(TOKENS.WebhookOutbox),
      c.resolve<Ids>(TOKENS.Ids),
      c.resolve<Clock>(TOKENS.Clock),
      fulfilment,
      () => delivery.wake(),
      c.resolve<Logger>(TOKENS.Logger),
    );
  });
  container.register(TOKENS.WebhookHealth, { useValue: () => webhookHealth(backend.readStore, backend.webhookOutbox, fulfilment) });

  // Background jobs and the projector process.
  singleton(
    container,
    BackgroundJobs,
    (c) =>
      new BackgroundJobs(
        [
          { name: 'expiry-sweep', run: () => c.resolve(ExpirySweep).run() },
          { name: 'claim-repair', run: () => c.resolve(ClaimRepair).run() },
          { name: 'rate-limit-cleanup', run: () => backend.rateLimits.removeExpired(c.resolve<Clock>(TOKENS.Clock).now().getTime()) },
          { name: 'webhook-retention', run: () => webhookRetention(backend.webhookOutbox, c.resolve<Clock>(TOKENS.Clock), config.WEBHOOK_RETENTION_DAYS) },
        ],
        config.SWEEP_INTERVAL_S * 1000,
        c.resolve<Logger>(TOKENS.Logger),
      ),
  );
  singleton(container, PROCESS.Projector, (c): Projector => {
    const runner = c.resolve(ProjectionRunner);
    const reactions = reactionRunner(c);
    const revenueRunner = c.resolve<ReactionRunner>(PROCESS.RevenueReactionRunner);
    const feeder = c.resolve(WebhookFeeder);
    const delivery = c.resolve(DeliveryEngine);
    const jobs = c.resolve(BackgroundJobs);
    // Process managers, deliveries and maintenance jobs read the read models: they start only once
    // this version can read every one of them (src/application/projections/replay-gate.ts), after
    // `npm run replay` has rebuilt those another version built. The projections run meanwhile, and
    // see the rebuilt ones switched in.
    let started = false;
    let waiting: NodeJS.Timeout | null = null;
    const startReaders = () => {
      started = true;
      reactions.start();
      revenueRunner.start();
      feeder.start();
      delivery.start();
      jobs.start();
    };
    const startWhenReadable = () => {
      waiting = null;
      if (!runner.status().some(needsReplay)) startReaders();
      else waiting = setTimeout(startWhenReadable, REPLAY_POLL_MS).unref();
    };
    return {
      async start() {
        await runner.init();
        await reactions.init();
        await revenueRunner.init();
        await feeder.init();
        runner.start();
        const stale = runner.status().filter(needsReplay);
        if (stale.length === 0) return startReaders();
        c.resolve<Logger>(TOKENS.Logger).warn(
          { projections: stale.map((status) => status.name) },
          'read models built by another version: process managers, deliveries and jobs wait for `npm run replay`',
        );
        startWhenReadable();
      },
      async stop() {
        if (waiting) clearTimeout(waiting);
        if (started) {
          await jobs.stop();
          await delivery.stop();
          await feeder.stop();
          await revenueRunner.stop();
          await reactions.stop();
        }
        await runner.stop();
      },
    };
  });

  // Metrics watch the parts (scraped at /metrics).
  const metrics = container.resolve<Metrics>(TOKENS.Metrics);
  const consistency = container.resolve<ReadConsistency>(TOKENS.ReadConsistency);
  const eventStore = container.resolve<EventStore>(TOKENS.EventStore);
  metrics.watchProjections(
    () => consistency.projections(),
    () => eventStore.headPosition(),
  );
  if (runsProjector) metrics.watchReactions(() => reactionRunner(container).health().failure !== null);
  const clock = container.resolve<Clock>(TOKENS.Clock);
  metrics.watchWebhooks(
    () => backend.webhookOutbox.stats(),
    () => clock.now(),
  );
  return container;
}
