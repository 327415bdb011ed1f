import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { ProjectionStatus } from '../ports/read-consistency.js';

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
}
