import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const CLIENT_KEY = 'bench-client';
export const SECRET_KEY = 'bench-secret';

export interface Child {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `node …command` and resolves once it prints {"url": "http://…"} on stdout. */
function startChild(command: string[], env: Record<string, string>): Promise<Child> {
  const child = spawn(process.execPath, command, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString();
      const match = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(buffer);
      if (!match) return;
      child.stdout!.off('data', onData);
      child.stdout!.resume();
      child.off('exit', onExit);
      resolve({
        url: match[1]!,
        child,
        async stop() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          await exited;
        },
      });
    };
    const onExit = (code: number | null) => reject(new Error(`${command.join(' ')} exited with ${code} before listening`));
    child.stdout!.on('data', onData);
    child.once('exit', onExit);
  });
}

/** The built service (dist/) on a data directory, as `npm start` runs it. */
export function startService(dataDir: string, extraEnv: Record<string, string> = {}): Promise<Child> {
  return startChild(['dist/src/main.js'], { ...serviceEnv(dataDir), ...extraEnv });
}

export function serviceEnv(dataDir: string): Record<string, string> {
  return {
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    CLIENT_API_KEYS: CLIENT_KEY,
    SECRET_API_KEYS: SECRET_KEY,
    LOG_LEVEL: 'info',
    NODE_ENV: 'production',
    // No expiry sweep or claim repair in the middle of a measurement.
    SWEEP_INTERVAL_S: '3600',
    // One client key from one address would hit the production budgets at once (see rateLimitEnv).
    RATE_LIMITS: 'off',
  };
}

/** `--rate-limits on`: every request counted in the shared store, with budgets nothing reaches. */
export function rateLimitEnv(on: boolean): Record<string, string> {
  const unreachable = '100000000/3600s';
  return on ? { RATE_LIMITS: 'on', RATE_LIMIT_READS: unreachable, RATE_LIMIT_COMMANDS: unreachable, RATE_LIMIT_CLAIMS: unreachable } : {};
}

export function startBare(): Promise<Child> {
  return startChild(['--import', 'tsx', 'scripts/bench/bare-server.ts'], {});
}

export interface Answer {
  status: number;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: the bench reads a few fields of the service's answers
  json: any;
}

export async function call(url: string, method: string, pathname: string, body?: unknown, key: string | null = SECRET_KEY): Promise<Answer> {
  const response = await fetch(`${url}${pathname}`, {
    method,
    headers: { ...(key ? { 'x-api-key': key } : {}), 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${pathname}: ${response.status} ${text}`);
  return { status: response.status, text, json: text ? JSON.parse(text) : null };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class CatchUpTimeout extends Error {
  constructor(
    readonly seconds: number,
    readonly readiness: unknown,
  ) {
    super(`projections still behind after ${seconds} s: ${JSON.stringify(readiness)}`);
    this.name = 'CatchUpTimeout';
  }
}

/** Waits until every projection has caught up with the log (lag 0); the seconds it took. */
export async function waitCaughtUp(url: string, timeoutSeconds = 600): Promise<number> {
  const started = performance.now();
  for (;;) {
    const response = await fetch(`${url}/readyz`);
    const body = (await response.json()) as { data?: { projections: { lag: number | string }[] } };
    if (response.status === 200 && body.data?.projections.every((projection) => projection.lag === 0)) return (performance.now() - started) / 1000;
    if (performance.now() - started > timeoutSeconds * 1000) throw new CatchUpTimeout(timeoutSeconds, body.data);
    await sleep(200);
  }
}

/** Peak resident memory of a running process so far (Linux), in bytes; null elsewhere. */
export function peakRss(pid: number): number | null {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}
