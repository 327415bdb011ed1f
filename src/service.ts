import 'reflect-metadata';
import type { IncomingMessage, Server } from 'node:http';
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
  const container = await composeService(options);
  const runsProjector = role !== 'api';
  const jobs = container.resolve(BackgroundJobs);
  const projector = backend.exclusively(container.resolve<Projector>(PROCESS.Projector), logger);
  if (runsProjector) await projector.start();

  const app = createApp(container, role === 'projector' ? 'operator' : 'full');
  const server = createHttpServer(app);
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
