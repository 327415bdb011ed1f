import 'reflect-metadata';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DependencyContainer } from 'tsyringe';
import { type CompositionOptions, composeService, PROCESS, type Projector, type Role } from './composition-root.js';
import { BackgroundJobs } from './application/maintenance/background-jobs.js';
import { configuredRevenueProviders } from './config.js';
import { createApp } from './http/app.js';
import { createHttpServer } from './http/http-server.js';

export type { Role };

export type ServiceOptions = CompositionOptions;

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

/**
 * The requests the server is answering, to tell what holds a shutdown. Once draining, every
 * answer closes its connection (`connection: close`): a client that keeps a connection busy
 * with request after request would otherwise hold the shutdown to its deadline, its later
 * requests cut off unanswered when the process exits.
 */
class RequestTracker {
  readonly inFlight = new Map<IncomingMessage, { since: number; response: ServerResponse }>();
  private draining = false;

  constructor(private readonly server: Server) {
    const track = (request: IncomingMessage, response: ServerResponse) => {
      if (this.draining) response.shouldKeepAlive = false;
      this.inFlight.set(request, { since: Date.now(), response });
      response.once('close', () => {
        this.inFlight.delete(request);
        // An answer whose head went out before the drain began kept its connection open: close it once idle.
        if (this.draining) setImmediate(() => this.server.closeIdleConnections());
      });
    };
    // Before the app's own listener, so an answer written at once closes its connection too.
    for (const event of ['request', 'checkContinue', 'checkExpectation'] as const) server.prependListener(event, track);
  }

  /** Stops taking connections; each open one closes after the answer it is giving, or at once if idle. */
  drain(): Promise<void> {
    this.draining = true;
    for (const { response } of this.inFlight.values()) if (!response.headersSent) response.shouldKeepAlive = false;
    return new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeIdleConnections();
    });
  }
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

/** The line that says where the service listens and which pid stops it (README: "the pid the `service started` log line prints"). */
export function startedMessage(url: string): string {
  return `service started on ${url} (pid ${process.pid}; stop with Ctrl-C or kill -TERM ${process.pid})`;
}

export async function startService(options: ServiceOptions): Promise<RunningService> {
  const { config, backend, logger, role } = options;
  const container = await composeService(options);
  const runsProjector = role !== 'api';
  const jobs = container.resolve(BackgroundJobs);
  const projector = backend.exclusively(container.resolve<Projector>(PROCESS.Projector), logger);
  if (runsProjector) await projector.start();

  const app = createApp(container, role === 'projector' ? 'operator' : 'full');
  const server = createHttpServer(app);
  const requests = new RequestTracker(server);
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
  logger.info({ url, role, backend: backend.name, pid: process.pid }, startedMessage(url));

  let stage: StopStage = 'running';
  let stopping: Promise<void> | null = null;
  return {
    url,
    container,
    runMaintenance: () => jobs.runOnce(),
    stop() {
      stopping ??= (async () => {
        stage = 'draining requests';
        await requests.drain();
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
          const open = [...requests.inFlight].map(
            ([request, { since }]) => `${request.method} ${request.url} (open for ${Math.round((now - since) / 1000)} s)`,
          );
          return [`${open.length} HTTP request(s) in flight${open.length > 0 ? `: ${open.join(', ')}` : ' (connections closing)'}`];
        }
        case 'stopping the projector':
          return ['the projector (reactions, background jobs and projections stopping at a checkpoint)'];
        case 'closing the stores':
          return [`the ${backend.name} stores (closing)`];
      }
    },
  };
}
