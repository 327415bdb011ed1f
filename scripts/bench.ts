/**
 * npm run bench [-- --duration 5 --connections 32 --history 100000 --rate-limits off|on]
 *
 * Builds and starts the real service (embedded SQLite, fresh data dir) and a bare express
 * route in child processes, loads them with autocannon from this process, and prints
 * requests/s and p50/p99 latency per operation. Only 127.0.0.1; stops by itself.
 */
import { type ChildProcess, execSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { RandomIds } from '../src/adapters/system/random-ids.js';
import { EventLog } from '../src/application/event-log.js';
import { openEmbeddedBackend } from '../src/backends/embedded.js';
import { seedReferralHistory } from './bench/seed-history.js';
import { parseArgs } from './script-context.js';

const args = parseArgs(process.argv.slice(2));
const DURATION = Number(args.get('duration') ?? 5);
const CONNECTIONS = Number(args.get('connections') ?? 32);
const HISTORY = Number(args.get('history') ?? 100_000);
/**
 * `--rate-limits on` counts every request in the rate-limit store with budgets too large to
 * reject anything (the limiter's cost, measured); the default `off` measures the service alone
 * (one client key from one address would otherwise hit the production budgets at once).
 */
const RATE_LIMITS = args.get('rate-limits') === 'on' ? 'on' : 'off';
const RATE_LIMIT_ENV: Record<string, string> =
  RATE_LIMITS === 'on'
    ? { RATE_LIMITS: 'on', RATE_LIMIT_READS: '100000000/3600s', RATE_LIMIT_COMMANDS: '100000000/3600s', RATE_LIMIT_CLAIMS: '100000000/3600s' }
    : { RATE_LIMITS: 'off' };
const CLIENT = 'bench-client';
const SECRET = 'bench-secret';
const ROOT = path.resolve(import.meta.dirname, '..');

interface Row {
  operation: string;
  'req/s': number;
  'p50 ms': number;
  'p99 ms': number;
  requests: number;
  'non-2xx': number;
}
const rows: Row[] = [];

function startChild(command: string[], env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, command, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const match = /"url":"(http:\/\/[^"]+)"/.exec(buffer);
      if (match) resolve({ url: match[1]!, child });
    });
    child.once('exit', (code) => reject(new Error(`${command.join(' ')} exited with ${code}`)));
  });
}

async function call(url: string, method: string, pathname: string, body?: unknown, key = SECRET) {
  const response = await fetch(`${url}${pathname}`, {
    method,
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${pathname}: ${response.status} ${text}`);
  return { text, json: JSON.parse(text) as any };
}

type Request = NonNullable<autocannon.Options['requests']>[number];

async function load(operation: string, url: string, options: { request: () => Request; amount?: number }) {
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    ...(options.amount !== undefined ? { amount: options.amount } : { duration: DURATION }),
    headers: { 'x-api-key': CLIENT, 'content-type': 'application/json' },
    requests: [{ setupRequest: (request) => ({ ...request, ...options.request() }) }],
  });
  rows.push({
    operation,
    'req/s': Math.round(result.requests.average),
    'p50 ms': result.latency.p50,
    'p99 ms': result.latency.p99,
    requests: result.requests.total,
    'non-2xx': result.non2xx,
  });
  process.stderr.write(`  ${operation}: ${Math.round(result.requests.average)} req/s\n`);
}

async function waitReady(url: string) {
  for (;;) {
    const response = await fetch(`${url}/readyz`);
    const body = (await response.json()) as { data?: { projections: { lag: number | string }[] } };
    if (response.status === 200 && body.data?.projections.every((projection) => projection.lag === 0)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function main() {
  process.stderr.write('building…\n');
  execSync('npm run build --silent', { cwd: ROOT, stdio: 'inherit' });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'referrals-bench-'));
  const serviceEnv = { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', CLIENT_API_KEYS: CLIENT, SECRET_API_KEYS: SECRET, LOG_LEVEL: 'warn', NODE_ENV: 'production', ...RATE_LIMIT_ENV };
  let service = await startChild(['dist/src/main.js'], { ...serviceEnv, LOG_LEVEL: 'info' });
  const children: ChildProcess[] = [service.child];
  try {
    await call(service.url, 'PUT', '/admin/rewards/welcome', { kind: 'basic', name: 'Welcome' });
    await call(service.url, 'PUT', '/admin/rewards/bank', { kind: 'credit', name: 'Bank', credits: 1_000_000 });
    await call(service.url, 'PUT', '/admin/programs/bench', {
      name: 'Bench',
      distribution_percentage: 100,
      limit: 0,
      rewards: { sender: [], receiver: [{ reward_key: 'welcome', activation: { variant: 'claim' }, deactivation: { variant: 'never' } }] },
    });

    process.stderr.write(`POST /users (${DURATION}s, ${CONNECTIONS} connections)…\n`);
    let created = 0;
    await load('POST /users (new user each request)', service.url, {
      request: () => ({ method: 'POST', path: '/users', body: JSON.stringify({ app_user_id: `user-${created++}`, is_trial: false, metadata: { source: 'bench' } }) }),
    });
    const userCount = created;
    const sample = await call(service.url, 'GET', '/users/user-1', undefined, CLIENT);
    const size = Buffer.byteLength(sample.text);

    const bare = await startChild(['--import', 'tsx', 'scripts/bench/bare-server.ts', String(size)], {});
    children.push(bare.child);
    let reads = 0;
    await load(`GET /users/{id} (${size} B body)`, service.url, { request: () => ({ method: 'GET', path: `/users/user-${reads++ % userCount}` }) });
    await load(`bare express route (${size} B body)`, bare.url, { request: () => ({ method: 'GET', path: '/bare' }) });
    let updates = 0;
    await load('POST /users (update existing)', service.url, {
      request: () => ({ method: 'POST', path: '/users', body: JSON.stringify({ app_user_id: `user-${updates++ % userCount}`, is_premium: updates % 2 === 0 }) }),
    });

    const referrer = (await call(service.url, 'POST', '/users', { app_user_id: 'referrer-fresh' }, CLIENT)).json.data.user;
    const half = Math.floor(userCount / 2);
    let claims = 0;
    await load('POST /claim-code (fresh claimer, new referrer)', service.url, {
      amount: Math.min(half, 20_000),
      request: () => ({ method: 'POST', path: `/users/user-${claims++}/claim-code`, body: JSON.stringify({ code: referrer.referral_code }) }),
    });

    process.stderr.write(`seeding a referrer with ${HISTORY} past claims…\n`);
    const veteran = (await call(service.url, 'POST', '/users', { app_user_id: 'referrer-veteran' }, CLIENT)).json.data.user;
    service.child.kill('SIGTERM');
    await new Promise((resolve) => service.child.once('exit', resolve));
    const backend = openEmbeddedBackend(dataDir);
    await seedReferralHistory(new EventLog(backend.eventStore, new RandomIds()), 'referrer-veteran', veteran.referral_code, HISTORY);
    await backend.close();
    service = await startChild(['dist/src/main.js'], { ...serviceEnv, LOG_LEVEL: 'info' });
    children.push(service.child);
    await waitReady(service.url);
    let veteranClaims = half;
    await load(`POST /claim-code (referrer with ${HISTORY} claims)`, service.url, {
      amount: Math.min(userCount - half, 20_000),
      request: () => ({ method: 'POST', path: `/users/user-${veteranClaims++}/claim-code`, body: JSON.stringify({ code: veteran.referral_code }) }),
    });

    await call(service.url, 'POST', '/users', { app_user_id: 'spender' }, CLIENT);
    await call(service.url, 'POST', '/users/spender/rewards/grant', { key: 'bank' });
    let operations = 0;
    await load('POST /withdraw-credits (distinct operation ids)', service.url, {
      request: () => ({
        method: 'POST',
        path: '/users/spender/rewards/withdraw-credits',
        body: JSON.stringify({ key: 'bank', amount: 1, operation_id: `op-${operations++}` }),
      }),
    });
    await load('POST /withdraw-credits (repeated operation id)', service.url, {
      request: () => ({ method: 'POST', path: '/users/spender/rewards/withdraw-credits', body: JSON.stringify({ key: 'bank', amount: 1, operation_id: 'op-0' }) }),
    });
  } finally {
    for (const child of children) child.kill('SIGTERM');
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  console.table(rows);
  const get = rows.find((row) => row.operation.startsWith('GET /users'));
  const bareRow = rows.find((row) => row.operation.startsWith('bare'));
  if (get && bareRow) process.stdout.write(`GET /users/{id} runs at ${Math.round((100 * get['req/s']) / bareRow['req/s'])}% of the bare route.\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
