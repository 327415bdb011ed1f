/**
 * The README walkthrough with a typed client: openapi-fetch over the types openapi-typescript
 * generates from the service's OpenAPI document (schema.d.ts, `npm run docs:generate`). Paths,
 * parameters, bodies and responses are all checked by the TypeScript compiler.
 *
 * Against a running service (keys as in the README):
 *
 *   BASE=http://localhost:8080 CLIENT_KEY=ck_demo SECRET_KEY=sk_demo npx tsx examples/typed-client/walkthrough.ts
 *
 * test/api/typed-client.test.ts runs it against a started service.
 */
import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

export interface WalkthroughOptions {
  baseUrl: string;
  clientKey: string;
  secretKey: string;
  /** How long to wait for the referrer's reward (granted just after the claim). */
  referrerRewardTimeoutMs?: number;
  log?: (line: string) => void;
}

/** A client that sends `key` on every request. */
export function typedClient(baseUrl: string, key: string) {
  return createClient<paths>({ baseUrl, headers: { 'x-api-key': key } });
}

/** The data of a response, or an Error with the documented error body. */
function ok<T>(result: { data?: T; error?: unknown; response: Response }, what: string): T {
  if (result.data === undefined) throw new Error(`${what}: ${result.response.status} ${JSON.stringify(result.error)}`);
  return result.data;
}

export type WalkthroughResult = Awaited<ReturnType<typeof walkthrough>>;

export async function walkthrough(options: WalkthroughOptions) {
  const log = options.log ?? (() => {});
  const admin = typedClient(options.baseUrl, options.secretKey);
  const app = typedClient(options.baseUrl, options.clientKey);

  // 1. Two rewards: 50 credits for the referrer, a premium week for the new user.
  ok(
    await admin.PUT('/admin/rewards/{key}', { params: { path: { key: 'referral-credits' } }, body: { kind: 'credit', name: '50 credits', credits: 50 } }),
    'reward',
  );
  ok(await admin.PUT('/admin/rewards/{key}', { params: { path: { key: 'premium-week' } }, body: { kind: 'basic', name: 'Premium week' } }), 'reward');

  // 2. A program for every user: the referrer earns credits per claim, the claimer a premium week.
  const program = ok(
    await admin.PUT('/admin/programs/{id}', {
      params: { path: { id: 'friends' } },
      body: {
        name: 'Invite friends',
        distribution_percentage: 100,
        limit: 0,
        rewards: {
          sender: [{ reward_key: 'referral-credits', activation: { variant: 'claim', amount: 1, limit: 0 }, deactivation: { variant: 'never' } }],
          receiver: [{ reward_key: 'premium-week', activation: { variant: 'claim' }, deactivation: { variant: 'interval', duration: 7, period: 'days' } }],
        },
      },
    }),
    'program',
  );
  log(`program ${program.data.program.id}: ${program.data.program.distribution_percentage}% of users`);

  // 3. Two users; alice gets a referral code.
  const created = ok(await app.POST('/users', { body: { app_user_id: 'alice', is_premium: true } }), 'alice');
  ok(await app.POST('/users', { body: { app_user_id: 'bob' } }), 'bob');
  const code = created.data.user.referral_code;
  if (code === null) throw new Error('alice has no referral code (no program covers her)');
  log(`alice's referral code: ${code}`);

  // 4. Bob claims alice's code (any letter case works).
  const claim = ok(
    await app.POST('/users/{app_user_id}/claim-code', { params: { path: { app_user_id: 'bob' } }, body: { code: code.toLowerCase() } }),
    'claim',
  );
  log(`bob was granted: ${claim.data.rewards_granted.basic.map((entry) => entry.reward.name).join(', ')}`);

  // 5. Both sides: bob has a premium week; alice gets 50 credits just after the claim.
  const getUser = async (id: string) => ok(await app.GET('/users/{app_user_id}', { params: { path: { app_user_id: id } } }), id).data.user;
  const deadline = Date.now() + (options.referrerRewardTimeoutMs ?? 5_000);
  let alice = await getUser('alice');
  while (alice.rewards.active.credit.length === 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    alice = await getUser('alice');
  }
  log(`alice: ${alice.stats.claims} claim(s), ${alice.rewards.active.credit.reduce((sum, entry) => sum + (entry.credits ?? 0), 0)} credits`);

  // 6. Alice spends 20 credits; repeating the same operation_id spends nothing more.
  const withdraw = () =>
    app.POST('/users/{app_user_id}/rewards/withdraw-credits', {
      params: { path: { app_user_id: 'alice' } },
      body: { key: 'referral-credits', amount: 20, operation_id: 'order-1001' },
    });
  const first = ok(await withdraw(), 'withdrawal').data;
  const repeated = ok(await withdraw(), 'repeated withdrawal').data;
  log(`withdrawn ${first.withdraw_result.credits_withdrawn}; the repeat returns the same result, ${repeated.user.rewards.active.credit[0]?.credits} left`);

  // A documented error, typed too: an unknown user.
  const missing = await app.GET('/users/{app_user_id}', { params: { path: { app_user_id: 'nobody' } } });
  log(`unknown user: ${missing.response.status} ${missing.error?.errors[0]?.code}`);

  // 7. What the auditors see: every credit movement.
  const ledger = ok(await admin.GET('/admin/users/{app_user_id}/credit-ledger', { params: { path: { app_user_id: 'alice' } } }), 'ledger');

  return {
    alice: repeated.user,
    bob: await getUser('bob'),
    withdrawn: first.withdraw_result.credits_withdrawn,
    repeatedWithdrawn: repeated.withdraw_result.credits_withdrawn,
    ledgerRows: ledger.data.entries.length,
  };
}

if (process.argv[1]?.endsWith('walkthrough.ts')) {
  const result = await walkthrough({
    baseUrl: process.env.BASE ?? 'http://localhost:8080',
    clientKey: process.env.CLIENT_KEY ?? 'ck_demo',
    secretKey: process.env.SECRET_KEY ?? 'sk_demo',
    log: (line) => console.log(line),
  });
  console.log(JSON.stringify({ withdrawn: result.withdrawn, ledger_rows: result.ledgerRows }, null, 2));
}
