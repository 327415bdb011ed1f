import 'reflect-metadata';
import { pino } from 'pino';
import { openEmbeddedBackend } from '../../src/backends/embedded.js';
import { loadConfig } from '../../src/config.js';
import type { Backend } from '../../src/backends/backend.js';
import type { Clock } from '../../src/ports/clock.js';
import type { Logger } from '../../src/ports/logger.js';
import { type RunningService, startService } from '../../src/service.js';
import { type OpenApiResponseValidator, validatorFor } from './openapi-validator.js';
import { tempDir } from './temp-dir.js';

export const CLIENT_KEY = 'test-client-key';
export const SECRET_KEY = 'test-secret-key';

/** A clock tests move by hand (expiry, claim windows) instead of sleeping. */
export class ManualClock implements Clock {
  private current: number;

  constructor(start: Date = new Date()) {
    this.current = start.getTime();
  }

  now(): Date {
    return new Date(this.current);
  }

  advance(ms: number): void {
    this.current += ms;
  }

  set(date: Date): void {
    this.current = date.getTime();
  }
}

export interface TestService {
  url: string;
  dataDir: string;
  service: RunningService;
  clock: ManualClock;
  /** fetch against the service with the client key (override headers to change it). */
  call(method: string, pathname: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>;
  admin(method: string, pathname: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers }>;
  stop(): Promise<void>;
}

export function tempDataDir(): string {
  return tempDir('referrals-test');
}

export interface TestServiceOptions {
  dataDir?: string;
  env?: Record<string, string>;
  clock?: ManualClock;
  /** Wrap or replace the stores (fault injection). */
  backend?: (backend: Backend) => Backend;
  /**
   * Check every response against the service's /openapi.json and throw when the document does
   * not describe it (default true: the API suite fails when the service and document disagree).
   */
  validateResponses?: boolean;
  /** `api`: the API alone, as `RUN_PROJECTOR=false` or `node dist/src/main.js api` runs it (default `all`). */
  role?: 'all' | 'api';
  /** Where the service logs (default: nowhere), for a test of what it says to the operator. */
  logger?: Logger;
}

/** Throws when the service's own document does not describe a response it gave. */
class UndocumentedResponseError extends Error {
  constructor(problems: string[], body: unknown) {
    super(`The response does not match /openapi.json:\n  ${problems.join('\n  ')}\nbody: ${JSON.stringify(body)?.slice(0, 2000)}`);
    this.name = 'UndocumentedResponseError';
  }
}

/** Starts the real service (HTTP on 127.0.0.1, embedded SQLite in a temp dir). */
export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const dataDir = options.dataDir ?? tempDataDir();
  const clock = options.clock ?? new ManualClock();
  const config = loadConfig({
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    CLIENT_API_KEYS: CLIENT_KEY,
    SECRET_API_KEYS: SECRET_KEY,
    LOG_LEVEL: 'silent',
    SWEEP_INTERVAL_S: '3600',
    // The suites fire many requests from one key and IP; rate limits are on in production and
    // tested on purpose (test/api/rate-limits.test.ts passes RATE_LIMITS=on).
    RATE_LIMITS: 'off',
    ...options.env,
  });
  const embedded = openEmbeddedBackend(dataDir);
  const backend = options.backend ? options.backend(embedded) : embedded;
  const service = await startService({ config, backend, logger: options.logger ?? pino({ level: 'silent' }), role: options.role ?? 'all', clock });
  let validator: OpenApiResponseValidator | null = null;
  if (options.validateResponses !== false) {
    const document = await fetch(`${service.url}/openapi.json`);
    validator = validatorFor((await document.json()) as Parameters<typeof validatorFor>[0]);
  }
  const request = async (key: string | null, method: string, pathname: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${service.url}${pathname}`, {
      method,
      headers: {
        ...(key ? { 'x-api-key': key } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text.length > 0 ? JSON.parse(text) : null;
    } catch {
      // not JSON: keep the text
    }
    if (validator) {
      const problems = validator.problems(
        method,
        new URL(pathname, service.url).pathname,
        response.status,
        response.headers.get('content-type'),
        parsed,
        response.headers.get('x-request-id'),
      );
      if (problems.length > 0) throw new UndocumentedResponseError(problems, parsed);
    }
    return { status: response.status, body: parsed as any, headers: response.headers };
  };
  return {
    url: service.url,
    dataDir,
    service,
    clock,
    call: (method, pathname, body, headers) => request(CLIENT_KEY, method, pathname, body, headers),
    admin: (method, pathname, body) => request(SECRET_KEY, method, pathname, body),
    stop: () => service.stop(),
  };
}
