import autocannon from 'autocannon';
import { CLIENT_KEY } from './processes.js';

export interface Measurement {
  req_per_s: number;
  p50_ms: number;
  p99_ms: number;
  requests: number;
  /** Answers with a 2xx status. */
  ok: number;
  non_2xx: number;
  errors: number;
  seconds: number;
}

type Request = NonNullable<autocannon.Options['requests']>[number];

export interface LoadOptions {
  url: string;
  connections: number;
  /** Seconds; the run also stops after `maxRequests` requests. */
  duration: number;
  maxRequests: number;
  /** Each request's method, path and body (called once per request). */
  request: () => { method: 'GET' | 'POST'; path: string; body?: string };
  key?: string;
}

/** One bounded autocannon run against 127.0.0.1. */
export async function load(options: LoadOptions): Promise<Measurement> {
  const started = performance.now();
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.duration,
    maxOverallRequests: Math.max(options.maxRequests, options.connections),
    // autocannon notices that a run is over (its duration passed, or every connection sent its
    // share of maxOverallRequests) only at its next sample tick. With its default of one tick a
    // second, a run that sent its last request after 1.2 s lasted 2 s, and every rate bounded by
    // --max-requests came out as 20,000 / N. Ticking every 10 ms ends the run when it is over.
    sampleInt: 10,
    headers: { 'x-api-key': options.key ?? CLIENT_KEY, 'content-type': 'application/json' },
    requests: [{ setupRequest: (request: Request) => ({ ...request, ...options.request() }) }] as Request[],
  });
  const seconds = (performance.now() - started) / 1000;
  const ok = result['2xx'];
  return {
    // Completed requests over the run's real length (autocannon's average is per whole second).
    req_per_s: Math.round(result.requests.total / Math.max(seconds, 0.001)),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    requests: result.requests.total,
    ok,
    non_2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    seconds: Math.round(seconds * 10) / 10,
  };
}
