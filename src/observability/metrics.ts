import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { ProjectionStatus } from '../ports/read-consistency.js';
import type { EndpointQueueStats } from '../ports/webhook-outbox.js';

const STANDARD_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT']);

/**
 * A request's method as a metrics label: HTTP's standard methods, and `other` for any token a
 * client makes up (each distinct label is a series kept for the life of the process, so a client
 * sending new methods would grow memory and every scrape without bound).
 */
export const methodLabel = (method: string): string => (STANDARD_METHODS.has(method) ? method : 'other');

/** Prometheus metrics of the service: requests, latencies, appends, projection lag and health. */
export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by method and route',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly eventsAppended = new Counter({
    name: 'events_appended_total',
    help: 'Events appended to the log, by event type',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });
  readonly appendConflicts = new Counter({
    name: 'append_conflicts_total',
    help: 'Appends rejected for a wrong expected revision (then retried)',
    registers: [this.registry],
  });

  readonly webhookDeliveries = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Outgoing delivery attempts by endpoint (_revenuecat: partner fulfilment) and outcome: delivered, failed (will retry), dead, refused (permanent partner refusal)',
    labelNames: ['endpoint', 'outcome'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** 1 while the process managers are held at a failing event (only where they run). */
  watchReactions(failing: () => boolean): void {
    const gauge = new Gauge({
      name: 'reactions_failing',
      help: '1 when the process managers (referrer rewards, pooled codes) are held at a failing event',
      registers: [this.registry],
      collect() {
        gauge.set(failing() ? 1 : 0);
      },
    });
  }

  /** Gauges read at scrape time from the projection runner and the log head. */
  watchProjections(statuses: () => Promise<ProjectionStatus[]>, head: () => Promise<bigint | null>): void {
    const lag = new Gauge({
      name: 'projection_lag_positions',
      help: 'Log head position minus the projection checkpoint',
      labelNames: ['projection'] as const,
      registers: [this.registry],
      async collect() {
        const headPosition = (await head()) ?? 0n;
        for (const status of await statuses()) lag.set({ projection: status.name }, Number(headPosition - (status.checkpoint ?? 0n)));
      },
    });
    const failing = new Gauge({
      name: 'projection_failing',
      help: '1 when the projection is held at a poison event',
      labelNames: ['projection'] as const,
      registers: [this.registry],
      async collect() {
        for (const status of await statuses()) failing.set({ projection: status.name }, status.failure ? 1 : 0);
      },
    });
  }

  /** Outbox gauges read at scrape time: messages waiting per endpoint and the age of the oldest. */
  watchWebhooks(stats: () => Promise<EndpointQueueStats[]>, now: () => Date): void {
    let last: Promise<EndpointQueueStats[]> | null = null;
    const read = () => (last ??= stats().finally(() => setImmediate(() => (last = null))));
    const depth = new Gauge({
      name: 'webhook_queue_depth',
      help: 'Outgoing messages not yet delivered nor dead, by endpoint',
      labelNames: ['endpoint'] as const,
      registers: [this.registry],
      async collect() {
        depth.reset();
        for (const row of await read()) depth.set({ endpoint: row.endpoint_id }, row.depth);
      },
    });
    const age = new Gauge({
      name: 'webhook_oldest_undelivered_age_seconds',
      help: 'Age of the undelivered outgoing message next in line (the first in log order, which the others wait on), by endpoint',
      labelNames: ['endpoint'] as const,
      registers: [this.registry],
      async collect() {
        age.reset();
        const at = now().getTime();
        for (const row of await read()) {
          if (row.oldest_enqueued_at !== null) age.set({ endpoint: row.endpoint_id }, Math.max(0, (at - Date.parse(row.oldest_enqueued_at)) / 1000));
        }
      },
    });
  }
}
