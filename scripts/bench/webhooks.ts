/**
 * npm run bench:webhooks -- [--events 10000] [--endpoints 3] [--duration 5] [--connections 16] [--split]
 *
 * Webhook fan-out benchmark. Writes `--events` catalogue events (user.created + reward.granted
 * on 100 users) and `--endpoints` endpoints straight into a fresh embedded log, starts the real
 * service (child process, 127.0.0.1), and measures:
 *   - deliveries/s: every message received by the local receivers (their own process; signatures
 *     checked on a sample), first to last, and from the end of the API load to the last;
 *   - the API while it delivers: GET /users/{id} req/s and p99 with autocannon, against the same
 *     service once the outbox is empty (the baseline). Deliveries yield to requests (up to
 *     WEBHOOK_YIELD_MAX_S per message, 30 s by default), so few are sent during the load; run
 *     with WEBHOOK_YIELD_MAX_S=0 in the environment to measure them competing instead.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { RandomIds } from '../../src/adapters/system/random-ids.js';
import { EventLog } from '../../src/application/event-log.js';
import { WEBHOOK_FEED } from '../../src/application/webhooks/webhook-feeder.js';
import { generateWebhookSecret } from '../../src/application/webhooks/webhook-signing.js';
import { openEmbeddedBackend } from '../../src/backends/embedded.js';
import type { NewDomainEvent } from '../../src/domain/decider.js';
import { streams } from '../../src/domain/events/index.js';
import { defineCommand, EXIT, runScript } from '../cli/command-line.js';

const command = defineCommand({
  name: 'bench-webhooks',
  invocation: 'npx tsx scripts/bench/webhooks.ts',
  summary:
    'Webhook fan-out benchmark: seeds catalogue events and endpoints into a fresh embedded log, starts the service with local receivers, ' +
    'and measures deliveries/s and the API (GET /users/{id}) while it delivers, against the same API once the outbox is empty.',
  options: {
    events: { type: 'string', value: 'N', default: '10000', description: 'Catalogue events to seed (user.created + reward.granted on 100 users)' },
    endpoints: { type: 'string', value: 'N', default: '3', description: 'Endpoints, each receiving every event' },
    duration: { type: 'string', value: 'SECONDS', default: '5', description: 'Length of each API load run' },
    connections: { type: 'string', value: 'N', default: '16', description: 'Connections of the API load' },
    split: { type: 'boolean', description: 'Run the API (RUN_PROJECTOR=false) and the projector, which delivers, as two processes' },
  },
  notes: ['Set WEBHOOK_YIELD_MAX_S=0 in the environment to measure deliveries competing with the API instead of yielding to it.'],
  examples: ['npx tsx scripts/bench/webhooks.ts', 'npx tsx scripts/bench/webhooks.ts --events 50000 --endpoints 5 --split'],
});
const args = command.parse(process.argv.slice(2));
/** A whole number of at least 1 from an option, or a usage error. */
function count(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) command.fail(`--${name} must be a whole number of at least 1, not ${text}`);
  return value;
}
const EVENTS = count('events', args.events);
const ENDPOINTS = count('endpoints', args.endpoints);
const DURATION = count('duration', args.duration);
const CONNECTIONS = count('connections', args.connections);
/** --split: the API (RUN_PROJECTOR=false) and the projector, which delivers, as two processes. */
const SPLIT = args.split === true;
const USERS = 100;
const CLIENT = 'bench-client';
const SECRET = 'bench-secret';
const ROOT = path.resolve(import.meta.dirname, '../..');

interface Counts {
  received: number;
  verified: number;
  firstAt: number;
  lastAt: number;
}

/** The receivers run in their own process, so they do not take the load generator's CPU. */
async function startReceivers(secrets: string[]) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/bench/webhook-receivers.ts', ...secrets], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const urls = await new Promise<string[]>((resolve, reject) => {
    child.once('message', (message) => resolve((message as { urls: string[] }).urls));
    child.once('exit', (code) => reject(new Error(`receivers exited with ${code}`)));
  });
  const counts = () =>
    new Promise<Counts[]>((resolve) => {
      child.once('message', (message) => resolve((message as { counts: Counts[] }).counts));
      child.send('counts');
    });
  return { urls, counts, stop: () => child.kill() };
}

/** The log the service will start on: endpoints first, then the events to fan out. */
async function seed(dataDir: string, urls: string[], secrets: string[]): Promise<void> {
  const backend = openEmbeddedBackend(dataDir);
  const log = new EventLog(backend.eventStore, new RandomIds());
  const context = { correlation_id: 'bench-seed', causation_id: 'bench-seed', actor: 'process:bench-seed' };
  const now = new Date().toISOString();
  for (const [index, url] of urls.entries()) {
    const webhook = { id: `bench-${index}`, url, events: null, description: null, enabled: true, created_at: now, updated_at: null };
    await log.append(streams.webhook(webhook.id), [{ type: 'WebhookEndpointCreated', data: { webhook, secret: secrets[index]! } }], 'no_stream', context);
  }
  // Deliveries start from here (a first start would otherwise begin at the head of the log).
  const endpointsAt = (await backend.eventStore.headPosition())!;
  await backend.webhookOutbox.feed(WEBHOOK_FEED, [], null, endpointsAt);
  const perUser = Math.ceil(EVENTS / USERS);
  let written = 0;
  for (let user = 0; user < USERS && written < EVENTS; user += 1) {
    const appUserId = `bench-user-${user}`;
    const events: NewDomainEvent[] = [
      {
        type: 'UserRegistered',
        data: { app_user_id: appUserId, registered_at: now, is_trial: null, is_premium: null, first_seen_at: null, metadata: null, payment_customer_id: null },
      },
    ];
    for (let grant = 1; grant < perUser && written + events.length < EVENTS; grant += 1) {
      const grantId = `${appUserId}-g${grant}`;
      events.push({
        type: 'RewardGranted',
        data: {
          grant_id: grantId,
          entry_id: grantId,
          reward_key: 'bench-gift',
          kind: 'basic',
          credits: null,
          granted_at: now,
          expires_at: null,
          cause: { type: 'manual', operation_id: null },
          balance_after: null,
          clawback: 'none',
        },
      });
    }
    await log.append(streams.user(appUserId), events, 'no_stream', context);
    written += events.length;
  }
  await backend.close();
}

function startService(dataDir: string, role: 'all' | 'api' | 'projector' = 'all'): Promise<{ url: string; child: ChildProcess }> {
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    CLIENT_API_KEYS: CLIENT,
    SECRET_API_KEYS: SECRET,
    LOG_LEVEL: 'info',
    NODE_ENV: 'production',
    WEBHOOKS_ALLOW_HTTP: 'true',
    WEBHOOKS_ALLOW_PRIVATE: 'true',
    RUN_PROJECTOR: role === 'api' ? 'false' : 'true',
    // One client key from one address would hit the production budgets at once: the API load
    // would measure 429 answers (as `npm run bench` does, see scripts/bench/processes.ts).
    RATE_LIMITS: 'off',
  };
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', role], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      if (buffer.length < 100_000) buffer += chunk.toString();
      const match = /"url":"(http:\/\/[^"]+)"/.exec(buffer);
      if (match) resolve({ url: match[1]!, child });
    });
    child.once('exit', (code) => reject(new Error(`service exited with ${code}`)));
  });
}

async function apiLoad(url: string, duration = DURATION) {
  let reads = 0;
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration,
    headers: { 'x-api-key': CLIENT },
    requests: [{ setupRequest: (request) => ({ ...request, method: 'GET', path: `/users/bench-user-${reads++ % USERS}` }) }],
  });
  return { 'req/s': Math.round(result.requests.average), 'p50 ms': result.latency.p50, 'p99 ms': result.latency.p99, 'non-2xx': result.non2xx };
}

async function main(): Promise<number> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'referrals-bench-webhooks-'));
  const secrets = Array.from({ length: ENDPOINTS }, () => generateWebhookSecret());
  const receivers = await startReceivers(secrets);
  process.stderr.write(`seeding ${EVENTS} events and ${ENDPOINTS} endpoints…\n`);
  await seed(dataDir, receivers.urls, secrets);
  const expected = EVENTS * ENDPOINTS;
  const started = performance.now();
  const projector = SPLIT ? await startService(dataDir, 'projector') : null;
  const service = await startService(dataDir, SPLIT ? 'api' : 'all');
  try {
    // The read models catch up with the seeded log first (deliveries start meanwhile).
    for (;;) {
      const ready = await fetch(`${service.url}/readyz`);
      const body = (await ready.json()) as { data?: { projections: { lag: number | string }[] } };
      if (ready.status === 200 && body.data?.projections.every((projection) => projection.lag === 0)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const received = async () => (await receivers.counts()).reduce((sum, target) => sum + target.received, 0);
    process.stderr.write(`delivering ${expected} messages; loading GET /users/{id} meanwhile (${DURATION} s, ${CONNECTIONS} connections)…\n`);
    // Everything fed into the outbox first (queue depth + received = all messages): the load
    // then meets the deliveries alone, not the feeder following the log.
    for (;;) {
      const metrics = await (await fetch(`${service.url}/metrics`, { headers: { 'x-api-key': SECRET } })).text();
      const depth = [...metrics.matchAll(/^webhook_queue_depth\{[^}]*\} (\d+)/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
      if (depth + (await received()) >= expected) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // A fresh process answers its first requests slower (JIT, caches): warm it up first, so the
    // two measured runs differ only by the deliveries.
    await apiLoad(service.url, 2);
    const atStart = await received();
    const during = await apiLoad(service.url);
    const loadEndedAt = Date.now();
    const midway = (await received()) - atStart;
    while ((await received()) < expected) {
      if (performance.now() - started > 600_000) throw new Error('deliveries did not finish within 10 minutes');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const final = await receivers.counts();
    const first = Math.min(...final.map((target) => target.firstAt));
    const last = Math.max(...final.map((target) => target.lastAt));
    const seconds = (last - first) / 1000;
    process.stderr.write('outbox empty; measuring the same API without deliveries…\n');
    const idle = await apiLoad(service.url);
    const summary = {
      topology: SPLIT ? 'api + projector processes' : 'one all process',
      events: EVENTS,
      endpoints: ENDPOINTS,
      messages: expected,
      'delivery seconds (first to last)': Number(seconds.toFixed(2)),
      'deliveries/s': Math.round(expected / seconds),
      'deliveries/s once the API load ended': Math.round((expected - atStart - midway) / ((last - loadEndedAt) / 1000)),
      'delivered while the API was loaded': midway,
      'still undelivered when the API load ended': expected - atStart - midway,
      'signatures verified (sample)': final.reduce((sum, target) => sum + target.verified, 0),
    };
    console.log(JSON.stringify(summary, null, 2));
    console.table([
      { phase: 'API while delivering', ...during },
      { phase: 'API with an empty outbox', ...idle },
    ]);
    const drop = 1 - during['req/s'] / idle['req/s'];
    console.log(
      `API throughput while delivering: ${(drop * 100).toFixed(1)}% ${drop >= 0 ? 'lower' : 'higher'}; p99 ${during['p99 ms']} ms vs ${idle['p99 ms']} ms`,
    );
  } finally {
    for (const running of [service, projector]) {
      if (!running) continue;
      running.child.kill('SIGTERM');
      await new Promise((resolve) => running.child.once('exit', resolve));
    }
    receivers.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return EXIT.OK;
}

runScript(command, main);
