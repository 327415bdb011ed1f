/**
 * npm run demo — loads a demo configuration and a little traffic into the configured store
 * (DATA_DIR, or EVENTSTORE_URL + MONGODB_URL), so a newcomer sees a working referral at once:
 *
 * - the README walkthrough's rewards (`referral-credits`, `premium-week`) and program
 *   (`friends`) with the walkthrough's exact bodies, so its PUTs are plain updates and the
 *   whole walkthrough (alice and bob) still works afterwards;
 * - a promo code (WELCOME10), an affiliate with a code (acme-studio, ACME) and a store offer
 *   code in the catalog (demo-premium-3m);
 * - four demo users: demo-ben claims demo-ana's referral code (ana earns 50 credits and
 *   spends 20 of them), demo-cleo claims the promo code, demo-dan the affiliate code.
 *
 * It starts the service in-process (HTTP on 127.0.0.1, a free port, one-off keys) and does
 * everything through the public and admin API, as a client would, then stops it. Running it
 * again appends no event: ids are fixed, a definition that exists is kept as it is (not PUT
 * again), POST /users with unchanged fields changes nothing, a repeated claim answers
 * CLAIM.ALREADY_CLAIMED and the withdrawal repeats its operation_id. A store whose other
 * programs already cover users (PROGRAM.DISTRIBUTION_EXCEEDED) is refused.
 */
import '../src/supported-node.js';
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { openBackend } from '../src/backends/open-backend.js';
import { ConfigError, loadConfig, type Config } from '../src/config.js';
import { createLogger } from '../src/observability/logger.js';
import { startService } from '../src/service.js';
import { defineCommand, EXIT, runScript } from './cli/command-line.js';

const command = defineCommand({
  name: 'demo',
  summary:
    "Loads demo data into the configured store (DATA_DIR, or EVENTSTORE_URL + MONGODB_URL) through the API: the README walkthrough's " +
    'rewards and program, a promo code (WELCOME10), an affiliate (ACME), a store offer code (demo-premium-3m) and four users, ' +
    "one of whom claimed another's referral code. Idempotent: a second run appends no event. Creates the store when it does not exist.",
  options: {},
  notes: [
    'It starts the service in-process on a free local port with one-off keys, so it works whatever keys your service uses; the commands ' +
      'it prints afterwards use your PORT and CLIENT_API_KEYS.',
    'Exit codes: 0 loaded (or already there); 1 failed; 2 usage error; 78 bad configuration.',
  ],
  examples: ['npm run demo', 'DATA_DIR=/tmp/demo-data PORT=3000 npm run demo'],
});

type Json = Record<string, unknown>;

/** The README walkthrough's bodies, verbatim. */
const WALKTHROUGH_REWARDS: Record<string, Json> = {
  'referral-credits': { kind: 'credit', name: '50 credits', credits: 50 },
  'premium-week': { kind: 'basic', name: 'Premium week' },
};

const WALKTHROUGH_PROGRAM = {
  id: 'friends',
  body: {
    name: 'Invite friends',
    distribution_percentage: 100,
    limit: 0,
    rewards: {
      sender: [{ reward_key: 'referral-credits', activation: { variant: 'claim', amount: 1, limit: 0 }, deactivation: { variant: 'never' } }],
      receiver: [{ reward_key: 'premium-week', activation: { variant: 'claim' }, deactivation: { variant: 'interval', duration: 7, period: 'days' } }],
    },
  },
};

const DEMO_PROMO_CODE = 'WELCOME10';
const DEMO_AFFILIATE = { id: 'acme-studio', code: 'ACME' };
const DEMO_OFFER_CODE_ID = 'demo-premium-3m';
const DEMO_USERS = { referrer: 'demo-ana', referred: 'demo-ben', promo: 'demo-cleo', affiliate: 'demo-dan' } as const;
const WITHDRAWAL = { key: 'referral-credits', amount: 20, operation_id: 'demo-order-1' };

const EXTRA_REWARDS: Record<string, Json> = {
  'welcome-credits': { kind: 'credit', name: '10 welcome credits', description: 'Given by the WELCOME10 promo code', credits: 10 },
};

const PROMO_BODY: Json = {
  description: 'Welcome offer: 10 credits',
  is_active: true,
  limit: 0,
  rewards: [{ reward_key: 'welcome-credits', activation: { variant: 'claim' }, deactivation: { variant: 'never' } }],
};

const AFFILIATE_BODY: Json = {
  status: 'approved',
  name: 'Acme Studio',
  logo_url: null,
  platforms: [{ type: 'youtube', handle: '@acmestudio', verified: true }],
  app_user_id: null,
  codes: [DEMO_AFFILIATE.code],
  rewards: [{ reward_key: 'premium-week', activation: { variant: 'claim' }, deactivation: { variant: 'interval', duration: 14, period: 'days' } }],
};

const OFFER_CODE_BODY: Json = {
  offer_code: {
    name: 'Premium: three months at half price',
    customer_eligibilities: ['NEW', 'EXPIRED'],
    offer_eligibility: 'STACK_WITH_INTRO_OFFERS',
    duration: 'THREE_MONTHS',
    offer_mode: 'PAY_AS_YOU_GO',
    number_of_periods: 3,
    prices: [
      { territory: 'USA', price: '4.99', currency: 'USD' },
      { territory: 'DEU', price: '4.99', currency: 'EUR' },
    ],
  },
  subscription: {
    id: 'demo-premium-monthly',
    product_id: 'com.example.premium.monthly',
    name: 'Premium monthly',
    subscription_period: 'ONE_MONTH',
    prices: [
      { territory: 'USA', price: '9.99', currency: 'USD' },
      { territory: 'DEU', price: '9.99', currency: 'EUR' },
    ],
  },
};

class DemoStepError extends Error {
  override name = 'DemoStepError';
}

/** A reply's JSON, read field by field as the API documents it (the API tests check the shapes). */
// biome-ignore lint/suspicious/noExplicitAny: the demo is a client of the documented JSON, not a second schema of it
type ApiJson = any;

interface Reply {
  status: number;
  body: ApiJson;
}

function client(url: string, clientKey: string, secretKey: string) {
  const call = async (key: string, method: string, path: string, body?: unknown): Promise<Reply> => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text.length > 0 ? JSON.parse(text) : null;
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, body: parsed };
  };
  return {
    app: (method: string, path: string, body?: unknown) => call(clientKey, method, path, body),
    admin: (method: string, path: string, body?: unknown) => call(secretKey, method, path, body),
  };
}

function expectStatus(reply: Reply, allowed: number[], what: string): ApiJson {
  if (!allowed.includes(reply.status)) throw new DemoStepError(`${what}: HTTP ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body;
}

function errorCode(reply: Reply): string | null {
  return (reply.body as { errors?: { code?: string }[] } | null)?.errors?.[0]?.code ?? null;
}

type Api = ReturnType<typeof client>;

/**
 * PUTs `body` at `path` unless something is already there: an existing definition is kept as
 * it is (it may be the demo's from an earlier run, or yours), so a second run appends nothing.
 */
async function ensure(api: Api, path: string, body: Json, what: string): Promise<'created' | 'already there'> {
  const current = await api.admin('GET', path);
  if (current.status === 200) return 'already there';
  expectStatus(current, [404], `GET ${path}`);
  const reply = await api.admin('PUT', path, body);
  if (reply.status === 422 && errorCode(reply) === 'PROGRAM.DISTRIBUTION_EXCEEDED') {
    throw new DemoStepError(
      'This store already has programs covering users, so the demo program "friends" (100% of users, as in the README) cannot be added. ' +
        'Run the demo on a fresh DATA_DIR (or database).',
    );
  }
  expectStatus(reply, [200, 201], what);
  return 'created';
}

async function upsertUser(api: Api, appUserId: string, fields: Json = {}): Promise<{ user: ApiJson; created: boolean }> {
  const reply = await api.app('POST', '/users', { app_user_id: appUserId, ...fields });
  const body = expectStatus(reply, [200, 201], `POST /users ${appUserId}`);
  return { user: body.data.user, created: reply.status === 201 };
}

/** Claims `code` for the user; a repeat (CLAIM.ALREADY_CLAIMED of this same code) counts as done. */
async function claim(api: Api, appUserId: string, code: string): Promise<'claimed' | 'already claimed'> {
  const reply = await api.app('POST', `/users/${encodeURIComponent(appUserId)}/claim-code`, { code });
  if (reply.status === 200) return 'claimed';
  if (reply.status === 422 && errorCode(reply) === 'CLAIM.ALREADY_CLAIMED') {
    const current = expectStatus(await api.app('GET', `/users/${encodeURIComponent(appUserId)}`), [200], `GET /users/${appUserId}`);
    const claimed = current.data.user.referred_by?.code as string | undefined;
    if (claimed?.toUpperCase() !== code.toUpperCase()) {
      throw new DemoStepError(`${appUserId} has already claimed another code (${String(claimed)}), not ${code}`);
    }
    return 'already claimed';
  }
  return expectStatus(reply, [200], `${appUserId} claims ${code}`);
}

/** Sender rewards are granted by a reaction, a moment after the claim: wait for it (bounded). */
async function waitForClaims(api: Api, appUserId: string, claims: number, timeoutMs = 15_000): Promise<ApiJson> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const body = expectStatus(await api.app('GET', `/users/${encodeURIComponent(appUserId)}`), [200], `GET /users/${appUserId}`);
    if (body.data.user.stats.claims >= claims) return body.data.user;
    if (Date.now() > deadline) throw new DemoStepError(`${appUserId}'s referral was not counted within ${timeoutMs} ms (is the projector stuck? see /readyz)`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function credits(user: ApiJson, key: string): number {
  return ((user.rewards?.active?.credit ?? []) as { reward: { key: string }; credits: number }[])
    .filter((entry) => entry.reward.key === key)
    .reduce((sum, entry) => sum + entry.credits, 0);
}

async function loadDemo(api: Api, print: (line: string) => void): Promise<void> {
  for (const [key, body] of Object.entries({ ...WALKTHROUGH_REWARDS, ...EXTRA_REWARDS })) {
    print(`  reward ${key}: ${await ensure(api, `/admin/rewards/${key}`, body, `PUT /admin/rewards/${key}`)}`);
  }
  const programPath = `/admin/programs/${WALKTHROUGH_PROGRAM.id}`;
  print(`  program ${WALKTHROUGH_PROGRAM.id}: ${await ensure(api, programPath, WALKTHROUGH_PROGRAM.body, `PUT ${programPath}`)}`);
  print(`  promo code ${DEMO_PROMO_CODE}: ${await ensure(api, `/admin/promo-codes/${DEMO_PROMO_CODE}`, PROMO_BODY, 'PUT promo code')}`);
  print(`  affiliate ${DEMO_AFFILIATE.id}: ${await ensure(api, `/admin/affiliates/${DEMO_AFFILIATE.id}`, AFFILIATE_BODY, 'PUT affiliate')}`);
  print(
    `  store offer code ${DEMO_OFFER_CODE_ID}: ${await ensure(api, `/admin/store/offer-codes/${DEMO_OFFER_CODE_ID}`, OFFER_CODE_BODY, 'PUT store offer code')}`,
  );

  const ana = await upsertUser(api, DEMO_USERS.referrer, { is_premium: true, metadata: { name: 'Ana', plan: 'yearly' } });
  const referralCode = ana.user.referral_code as string | null;
  if (!referralCode) throw new DemoStepError(`${DEMO_USERS.referrer} got no referral code (is the friends program covering 100% of users?)`);
  const others = [
    { id: DEMO_USERS.referred, name: 'Ben', code: referralCode },
    { id: DEMO_USERS.promo, name: 'Cleo', code: DEMO_PROMO_CODE },
    { id: DEMO_USERS.affiliate, name: 'Dan', code: DEMO_AFFILIATE.code },
  ];
  print(`  user ${DEMO_USERS.referrer}: ${ana.created ? 'created' : 'already there'}, referral code ${referralCode}`);
  for (const other of others) {
    const { created } = await upsertUser(api, other.id, { metadata: { name: other.name } });
    const outcome = await claim(api, other.id, other.code);
    print(`  user ${other.id}: ${created ? 'created' : 'already there'}, ${outcome} ${other.code}`);
  }
  await waitForClaims(api, DEMO_USERS.referrer, 1);
  const withdrawal = expectStatus(await api.app('POST', `/users/${DEMO_USERS.referrer}/rewards/withdraw-credits`, WITHDRAWAL), [200], 'withdraw credits');
  const result = withdrawal.data.withdraw_result;
  print(
    `  ${DEMO_USERS.referrer} withdrew ${result.credits_withdrawn} of ${result.credits_available_at_start} ${WITHDRAWAL.key} ` +
      `(operation_id ${WITHDRAWAL.operation_id}; a repeat withdraws nothing more)`,
  );
}

async function summary(api: Api): Promise<string[]> {
  const user = async (id: string) => expectStatus(await api.app('GET', `/users/${id}`), [200], `GET /users/${id}`).data.user;
  const lines: string[] = [];
  const ana = await user(DEMO_USERS.referrer);
  lines.push(
    `  ${DEMO_USERS.referrer.padEnd(10)} referral code ${ana.referral_code}; ${ana.stats.claims} claim(s); ` +
      `${credits(ana, 'referral-credits')} referral-credits left`,
  );
  for (const id of [DEMO_USERS.referred, DEMO_USERS.promo, DEMO_USERS.affiliate]) {
    const current = await user(id);
    const active = Object.values(current.rewards.active as Record<string, { reward: { name: string } }[]>).flat();
    const names = active.map((entry) => entry.reward.name).join(', ');
    lines.push(`  ${id.padEnd(10)} claimed ${current.referred_by?.code ?? '-'}; active rewards: ${names || 'none'}`);
  }
  return lines;
}

/** The configuration as the service would read it (its PORT is the one the printed commands use). */
function serviceConfig(env: NodeJS.ProcessEnv): Config {
  return loadConfig({ LOG_LEVEL: 'warn', ...env });
}

function demoConfig(config: Config): Config {
  // A free local port and one-off keys for this run only: the demo works whatever keys (if any)
  // the service uses.
  return {
    ...config,
    PORT: 0,
    HOST: '127.0.0.1',
    CLIENT_API_KEYS: [`ck_demo_${randomBytes(12).toString('hex')}`],
    SECRET_API_KEYS: [`sk_demo_${randomBytes(12).toString('hex')}`],
  };
}

/** The store, port, link and key settings this run was given in its environment (the README's link base when none), for the start command it prints. */
function startSettings(): string[] {
  // The keys too: given on the demo's command line (not exported), a start without them would make new ones.
  // Without a link base the demo users' codes have no link: the README's, as its Demo data start does.
  const readme: Record<string, string> = { REFERRAL_LINK_BASE: 'https://example.com/r' };
  return ['DATA_DIR', 'EVENTSTORE_URL', 'MONGODB_URL', 'PORT', 'REFERRAL_LINK_BASE', 'CLIENT_API_KEYS', 'SECRET_API_KEYS'].flatMap((name) => {
    const value = process.env[name] || readme[name];
    if (!value) return [];
    return [`${name}=${/^[\w./:@-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`}`];
  });
}

function tryIt(config: Config): string[] {
  const store = config.EVENTSTORE_URL !== null ? 'EventStoreDB + MongoDB' : `DATA_DIR=${config.DATA_DIR}`;
  const configured = config.CLIENT_API_KEYS[0];
  const key = configured ?? 'ck_demo';
  const base = `http://localhost:${config.PORT}`;
  return [
    '',
    `Try it: unless a service already serves this store, start one on it (${store})${configured ? '' : ", e.g. with the README's keys:"}`,
    `  ${[...startSettings(), ...(configured ? [] : ['CLIENT_API_KEYS=ck_demo', 'SECRET_API_KEYS=sk_demo']), 'npm start'].join(' ')}`,
    'then (each command prints one JSON document; add | jq . to pretty-print):',
    `  curl -s -w '\\n' ${base}/users/${DEMO_USERS.referrer} -H 'x-api-key: ${key}'`,
    `  curl -s -w '\\n' ${base}/codes/${DEMO_PROMO_CODE} -H 'x-api-key: ${key}'`,
    `  curl -s -w '\\n' ${base}/codes/${DEMO_AFFILIATE.code} -H 'x-api-key: ${key}'`,
    `  curl -s -w '\\n' ${base}/store/offer-codes/${DEMO_OFFER_CODE_ID} -H 'x-api-key: ${key}'`,
    `  curl -s -w '\\n' -X POST ${base}/users -H 'x-api-key: ${key}' -H 'content-type: application/json' -d '{"app_user_id":"you"}'`,
    `  curl -s -w '\\n' -X POST ${base}/users/you/claim-code -H 'x-api-key: ${key}' -H 'content-type: application/json' -d '{"code":"${DEMO_PROMO_CODE}"}'`,
    'The README walkthrough (alice and bob) works on top of this data as written.',
  ];
}

async function main(): Promise<number> {
  command.parse(process.argv.slice(2));
  let settings: Config;
  try {
    settings = serviceConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      return EXIT.CONFIG;
    }
    throw error;
  }
  const config = demoConfig(settings);
  const backend = await openBackend(config);
  const service = await startService({ config, backend, logger: createLogger(config.LOG_LEVEL), role: 'all' });
  const print = (line: string) => process.stdout.write(`${line}\n`);
  try {
    const api = client(service.url, config.CLIENT_API_KEYS[0]!, config.SECRET_API_KEYS[0]!);
    print(`Loading the demo into ${config.EVENTSTORE_URL !== null ? 'EventStoreDB + MongoDB' : config.DATA_DIR}:`);
    await loadDemo(api, print);
    print('');
    print('Demo users:');
    for (const line of await summary(api)) print(line);
    for (const line of tryIt(settings)) print(line);
    return EXIT.OK;
  } catch (error) {
    if (!(error instanceof DemoStepError)) throw error;
    process.stderr.write(`demo failed: ${error.message}\n`);
    return EXIT.FAILURE;
  } finally {
    await service.stop();
  }
}

runScript(command, main);
