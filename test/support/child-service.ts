import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLIENT_KEY, SECRET_KEY } from './test-service.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface ChildService {
  url: string;
  process: ChildProcess;
  /** What it logged on stdout so far (pino's JSON lines). */
  logs(): string;
  /** SIGKILL: no shutdown, no flush — what a crash looks like. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
}

/** Runs the real service (`src/main.ts`) in a child process on a free port. */
export async function startChildService(dataDir: string, env: Record<string, string> = {}): Promise<ChildService> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/main.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'test',
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      CLIENT_API_KEYS: CLIENT_KEY,
      SECRET_API_KEYS: SECRET_KEY,
      LOG_LEVEL: 'info',
      // Suites fire many requests from one key and IP; rate limits are tested on purpose elsewhere.
      RATE_LIMITS: 'off',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let stdout = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', () => {
      const match = /"url":"(http:\/\/[^"]+)"/.exec(stdout);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`service exited with ${code}: ${stderr}`)));
  });
  return {
    url,
    process: child,
    logs: () => stdout,
    async kill() {
      child.kill('SIGKILL');
      await exited(child);
    },
    async stop() {
      child.kill('SIGTERM');
      await exited(child);
    },
  };
}

async function send(method: 'POST' | 'PUT', url: string, pathname: string, body: unknown, key: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${url}${pathname}`, {
    method,
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json().catch(() => null) };
}

export const post = (url: string, pathname: string, body: unknown, key = CLIENT_KEY) => send('POST', url, pathname, body, key);

/** A PUT with the secret key (the admin API's definitions: an endpoint, a rule). */
export const put = (url: string, pathname: string, body: unknown, key = SECRET_KEY) => send('PUT', url, pathname, body, key);

export async function get(url: string, pathname: string, key = CLIENT_KEY): Promise<{ status: number; body: any }> {
  const response = await fetch(`${url}${pathname}`, { headers: { 'x-api-key': key } });
  return { status: response.status, body: await response.json().catch(() => null) };
}

export { SECRET_KEY };
