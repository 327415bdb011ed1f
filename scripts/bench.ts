/**
 * npm run bench [-- --only claims,replay --duration 5 --history 100000 --json]   (--help)
 *
 * Every figure of issue #10 in one run, each next to what it is judged against, measured in
 * the same run on the same machine: a bare express route serving the same bytes (load
 * tests), a fresh entity (long histories), a raw scan of the log (replay and export).
 * The service runs built (dist/) in a child process on a temporary data directory, the bare
 * route in another; autocannon loads them from this process, only on 127.0.0.1, and every
 * load test stops by itself (--duration, --max-requests). Long histories are written straight
 * into the event log (scripts/bench/seed-history.ts), not over HTTP.
 */
import { execSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RandomIds } from '../src/adapters/system/random-ids.js';
import { EventLog } from '../src/application/event-log.js';
import { openEmbeddedBackend } from '../src/backends/embedded.js';
import { type CommandCost, runCommandCost } from './bench/command-cost.js';
import { load, type Measurement } from './bench/load.js';
import { measureLogSpeed } from './bench/log-speed.js';
import { type BenchOptions, benchCommand, benchOptions } from './bench/options.js';
import { runScript } from './cli/command-line.js';
import { CatchUpTimeout, type Child, CLIENT_KEY, call, ROOT, rateLimitEnv, sleep, startBare, startService, waitCaughtUp } from './bench/processes.js';
import { type BenchReport, type Figure, formatTable, newReport, ratio } from './bench/report.js';
import { setGuardRules } from './bench/fraud-rules.js';
import { alternatingRounds, GUARD_ROUNDS, type Measured, serviceCpuSeconds, guardedFigure } from './bench/guarded-claims.js';
import { countInstructions } from './bench/instruction-counter.js';
import { seedReferrerClaims, seedWithdrawals } from './bench/seed-history.js';

const progress = (message: string) => process.stderr.write(`${message}\n`);
const BANK_CREDITS = 1_000_000;

class Bench {
  private service!: Child;
  private bare!: Child;
  private readonly dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'referrals-bench-'));
  private readonly bareRuns = new Map<string, Measurement>();
  /** Registered users nobody has claimed for yet. */
  private readonly claimers: string[] = [];
  private createdUsers = 0;
  /** Fresh-entity rates, for the long-history comparisons. */
  private freshClaims: Measurement | null = null;
  private oneUserWithdrawals: Measurement | null = null;
  private fastestClaims: number | null = null;
  private userCreation: number | null = null;

  constructor(
    private readonly options: BenchOptions,
    private readonly report: BenchReport,
  ) {}

  private get url() {
    return this.service.url;
  }

  private add(figure: Figure): void {
    this.report.figures.push(figure);
    const shown = figure.load
      ? `${figure.load.req_per_s} req/s, p99 ${figure.load.p99_ms} ms`
      : figure.value === null || figure.value === undefined
        ? `not reached (${figure.note ?? ''})`
        : `${figure.value} ${figure.unit ?? ''}`;
    progress(`  ${figure.what}: ${shown}${figure.ratio != null ? ` (${figure.ratio}× ${figure.compared_with?.what})` : ''}`);
  }

  private run(request: () => { method: 'GET' | 'POST'; path: string; body?: string }, options: { duration?: number; maxRequests?: number; url?: string } = {}) {
    return load({
      url: options.url ?? this.url,
      connections: this.options.connections,
      duration: options.duration ?? this.options.duration,
      maxRequests: options.maxRequests ?? this.options.maxRequests,
      request,
    });
  }

  /** The bare route answering exactly `reference`'s bytes, loaded like the service was (measured once per body). */
  private async bareRoute(method: 'GET' | 'POST', reference: string, body?: string): Promise<{ load: Measurement; bytes: number }> {
    const bytes = Buffer.byteLength(reference);
    const name = `${method.toLowerCase()}-${bytes}`;
    let measurement = this.bareRuns.get(name);
    if (!measurement) {
      await fetch(`${this.bare.url}/reference/${name}`, { method: 'PUT', body: reference });
      measurement = await this.run(() => ({ method, path: `/bare/${name}`, ...(body !== undefined ? { body } : {}) }), { url: this.bare.url });
      this.bareRuns.set(name, measurement);
    }
    return { load: measurement, bytes };
  }

  private async againstBare(figure: Omit<Figure, 'compared_with' | 'ratio'> & { load: Measurement }, method: 'GET' | 'POST', reference: string, body?: string) {
    const bare = await this.bareRoute(method, reference, body);
    this.add({
      ...figure,
      compared_with: { what: `bare express ${method}`, load: bare.load, bytes: bare.bytes },
      ratio: ratio(figure.load.req_per_s, bare.load.req_per_s),
    });
  }

  /** `count` registered users nobody has claimed for (created over HTTP when short, not measured). */
  private async takeClaimers(count: number): Promise<string[]> {
    if (this.claimers.length < count) {
      const missing = count - this.claimers.length;
      progress(`  registering ${missing} claimers…`);
      const first = this.createdUsers;
      let next = first;
      const created = await this.run(() => ({ method: 'POST', path: '/users', body: JSON.stringify({ app_user_id: `user-${next++}` }) }), {
        duration: 600,
        maxRequests: missing,
      });
      for (let index = first; index < next; index += 1) this.claimers.push(`user-${index}`);
      this.createdUsers = next;
      if (created.non_2xx + created.errors > 0) progress(`  (${created.non_2xx + created.errors} registrations failed: some claims will fail)`);
      await waitCaughtUp(this.url);
    }
    return this.claimers.splice(0, count);
  }

  /**
   * Fresh claimers for a claim run of `seconds`: three times what the fastest claim run so far (or
   * else POST /users) would use, since registering them is the slow part of the whole bench.
   * A run that uses them all up ends early; its rate stays right.
   */
  private claimPool(seconds: number) {
    const rate = this.fastestClaims ?? this.userCreation ?? 1_000;
    return Math.min(this.options.maxRequests, Math.ceil(3 * rate * seconds) + this.options.connections);
  }

  /** Claims by fresh users on `code`, one claimer per request. */
  private async claimLoad(code: string, seconds = this.options.duration): Promise<Measurement> {
    const claimers = await this.takeClaimers(this.claimPool(seconds));
    let index = 0;
    const measurement = await this.run(
      () => ({ method: 'POST', path: `/users/${claimers[index++ % claimers.length]}/claim-code`, body: JSON.stringify({ code }) }),
      { duration: seconds, maxRequests: claimers.length },
    );
    this.fastestClaims = Math.max(this.fastestClaims ?? 0, measurement.req_per_s);
    return measurement;
  }

  private async newUser(appUserId: string, credits = 0): Promise<{ referral_code: string }> {
    const user = (await call(this.url, 'POST', '/users', { app_user_id: appUserId }, CLIENT_KEY)).json.data.user;
    for (let granted = 0; granted < credits; granted += BANK_CREDITS) await call(this.url, 'POST', `/users/${appUserId}/rewards/grant`, { key: 'bank' });
    return user;
  }

  async start(): Promise<void> {
    progress('building (npm run build)…');
    execSync('npm run build --silent', { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    [this.service, this.bare] = await Promise.all([startService(this.dataDir, rateLimitEnv(this.options.rateLimits)), startBare()]);
    await call(this.url, 'PUT', '/admin/rewards/welcome', { kind: 'basic', name: 'Welcome' });
    await call(this.url, 'PUT', '/admin/rewards/bank', { kind: 'credit', name: 'Bank', credits: BANK_CREDITS });
    await this.setBenchProgram([]);
  }

  /** The program every user gets: a welcome reward for the claimer, and these sender rewards. */
  private async setBenchProgram(sender: unknown[]): Promise<void> {
    await call(this.url, 'PUT', '/admin/programs/bench', {
      name: 'Bench',
      distribution_percentage: 100,
      limit: 0,
      rewards: { sender, receiver: [{ reward_key: 'welcome', activation: { variant: 'claim' }, deactivation: { variant: 'never' } }] },
    });
  }

  async users(): Promise<void> {
    progress('POST /users and GET /users/{id}…');
    const body = (index: number) => JSON.stringify({ app_user_id: `user-${index}`, is_trial: false, metadata: { source: 'bench' } });
    const sample = await call(this.url, 'POST', '/users', { app_user_id: 'sample-user', is_trial: false, metadata: { source: 'bench' } }, CLIENT_KEY);
    const first = this.createdUsers;
    let next = first;
    const created = await this.run(() => ({ method: 'POST', path: '/users', body: body(next++) }));
    this.userCreation = created.req_per_s;
    for (let index = first; index < next; index += 1) this.claimers.push(`user-${index}`);
    this.createdUsers = next;
    await this.againstBare(
      { key: 'users.create', what: 'POST /users (a new user each request)', load: created, target: '≥ 0.4×' },
      'POST',
      sample.text,
      body(0),
    );

    await waitCaughtUp(this.url);
    const read = await call(this.url, 'GET', '/users/sample-user', undefined, CLIENT_KEY);
    const readable = Math.max(1, next - first);
    let reads = 0;
    const got = await this.run(() => ({ method: 'GET', path: `/users/user-${first + (reads++ % readable)}` }));
    await this.againstBare({ key: 'users.get', what: 'GET /users/{id}', load: got, target: '≥ 0.6×' }, 'GET', read.text);
  }

  async claims(): Promise<void> {
    progress('claims by fresh users on one referral code…');
    const referrer = await this.newUser('referrer-fresh');
    const [sampleClaimer] = await this.takeClaimers(1);
    const sample = await call(this.url, 'POST', `/users/${sampleClaimer}/claim-code`, { code: referrer.referral_code }, CLIENT_KEY);
    await waitCaughtUp(this.url);
    this.freshClaims = await this.claimLoad(referrer.referral_code);
    const claimBody = JSON.stringify({ code: referrer.referral_code });
    await this.againstBare(
      {
        key: 'claims.one_code',
        what: `claims by fresh users on one referral code (${this.options.connections} connections)`,
        load: this.freshClaims,
        target: '≥ 0.5×, p99 ≤ 50 ms',
      },
      'POST',
      sample.text,
      claimBody,
    );
    await this.guardedClaims();
  }

  /** Restarts the service with or without rate limits (same data directory). */
  private async restart(rateLimits: boolean): Promise<void> {
    await this.service.stop();
    this.service = await startService(this.dataDir, rateLimitEnv(rateLimits));
    await waitCaughtUp(this.url);
  }

  /**
   * Issue #15: claims with rate limits and every fraud rule kind on (parameters no claim reaches,
   * scripts/bench/fraud-rules.ts) next to the same claims with both off, measured just before.
   * Both sides use the same kind of claimer, each with its own payment customer (so the
   * payment-customer counter is exercised), and a referrer of their own: the ratio is the cost of
   * the guards alone.
   */
  private async guardedClaims(): Promise<void> {
    progress(`the same claims without, then with rate limits and fraud rules (${GUARD_ROUNDS} rounds, alternating)…`);
    // Each run starts on a freshly started service, so neither side has the other's warm JIT or caches.
    const rounds = await alternatingRounds(
      async (round) => {
        await this.restart(this.options.rateLimits);
        return this.claimsWithPaymentCustomers(`referrer-unguarded-${round}`);
      },
      async (round) => {
        await this.restart(true);
        await setGuardRules(this.url, true);
        const measured = await this.claimsWithPaymentCustomers(`referrer-guarded-${round}`);
        await setGuardRules(this.url, false);
        return measured;
      },
    );
    await this.restart(this.options.rateLimits);
    this.add(guardedFigure(rounds, this.options.rateLimits));
  }

  /** Claims on a new referrer's code by new users who each have a payment customer. */
  private async claimsWithPaymentCustomers(referrerId: string): Promise<Measured> {
    const referrer = await this.newUser(referrerId);
    const first = this.createdUsers;
    let next = first;
    await this.run(
      () => ({ method: 'POST', path: '/users', body: JSON.stringify({ app_user_id: `user-${next}`, payment_customer_id: `cus_bench_${next++}` }) }),
      { duration: 600, maxRequests: this.claimPool(this.options.duration + 1) },
    );
    this.createdUsers = next;
    const claimers = Array.from({ length: next - first }, (_, index) => `user-${first + index}`);
    await waitCaughtUp(this.url);
    await sleep(1100); // older than the account-age rule's 1 s
    let index = 0;
    const claim = () => ({
      method: 'POST' as const,
      path: `/users/${claimers[index++ % claimers.length]}/claim-code`,
      body: JSON.stringify({ code: referrer.referral_code }),
    });
    await this.run(claim, { duration: 1, maxRequests: Math.ceil(claimers.length / 6) }); // warm-up (after a restart too)
    await waitCaughtUp(this.url);
    const instructions = await countInstructions(this.service.child.pid);
    const cpuBefore = await serviceCpuSeconds(this.url);
    const measured = await this.run(claim, { maxRequests: claimers.length - index });
    // Until the read models and reactions caught up: their work on these claims counts too.
    await waitCaughtUp(this.url);
    const cpuUs = ((await serviceCpuSeconds(this.url)) - cpuBefore) * 1e6;
    const counted = await instructions.stop();
    const requests = Math.max(measured.requests, 1);
    return {
      ...measured,
      cpu_us_per_request: Math.round(cpuUs / requests),
      instructions_per_request: counted === null ? null : Math.round(counted / requests),
    };
  }

  async withdrawals(): Promise<void> {
    progress('withdrawals: 400 users, then one user…');
    const spread = Array.from({ length: 400 }, (_, index) => `spender-${index}`);
    for (let start = 0; start < spread.length; start += 32) await Promise.all(spread.slice(start, start + 32).map((user) => this.newUser(user, 1)));
    await this.newUser('hot-spender', BANK_CREDITS);
    const withdraw = (operationId: string) => JSON.stringify({ key: 'bank', amount: 1, operation_id: operationId });
    const sample = await call(this.url, 'POST', '/users/hot-spender/rewards/withdraw-credits', JSON.parse(withdraw('sample')), CLIENT_KEY);
    await waitCaughtUp(this.url);
    let operations = 0;
    const spreadLoad = await this.run(() => {
      operations += 1;
      return { method: 'POST', path: `/users/${spread[operations % spread.length]}/rewards/withdraw-credits`, body: withdraw(`spread-${operations}`) };
    });
    await this.againstBare(
      { key: 'withdrawals.spread', what: 'withdrawals spread over 400 users', load: spreadLoad, target: '≥ 0.6×, p99 ≤ 50 ms' },
      'POST',
      sample.text,
      withdraw('bare'),
    );
    await waitCaughtUp(this.url);
    this.oneUserWithdrawals = await this.run(() => ({
      method: 'POST',
      path: '/users/hot-spender/rewards/withdraw-credits',
      body: withdraw(`hot-${operations++}`),
    }));
    await this.againstBare(
      { key: 'withdrawals.one_user', what: 'withdrawals on one user', load: this.oneUserWithdrawals, target: '≥ 0.3×, p99 ≤ 50 ms' },
      'POST',
      sample.text,
      withdraw('bare'),
    );
  }

  async reactions(): Promise<void> {
    progress(`referral reactions: a ${this.options.burst} s burst of claims on one code, with sender rewards (credits and a pooled code)…`);
    // For this section the program also grants its referrers a credit and a one-time code per
    // claim (the referral reaction grants them, the pools reaction hands out the codes).
    await call(this.url, 'PUT', '/admin/rewards/thanks', { kind: 'credit', name: 'Thanks', credits: 1 });
    await call(this.url, 'PUT', '/admin/rewards/thanks-code', { kind: 'store_promo_code', name: 'Thanks code' });
    const codes = this.claimPool(this.options.burst);
    for (let added = 0; added < codes; added += 5_000) {
      const batch = Array.from({ length: Math.min(5_000, codes - added) }, (_, index) => ({
        value: `THANKS-${added + index}`,
        expires_at: '2099-01-01T00:00:00Z',
      }));
      await call(this.url, 'POST', '/admin/rewards/thanks-code/codes', { codes: batch });
    }
    await this.setBenchProgram([
      { reward_key: 'thanks', activation: { variant: 'claim', amount: 1, limit: 0 }, deactivation: { variant: 'never' } },
      { reward_key: 'thanks-code', activation: { variant: 'claim', amount: 1, limit: 0 }, deactivation: { variant: 'never' } },
    ]);
    const referrer = await this.newUser('burst-referrer');
    const burst = await this.claimLoad(referrer.referral_code, this.options.burst);
    const ended = performance.now();
    const deadline = ended + this.options.catchUpTimeout * 1000;
    const since = () => Math.round((performance.now() - ended) / 100) / 10;
    let counted = -1;
    let countedAfter: number | null = null;
    let rewarded = { credits: -1, codes: -1 };
    let rewardedAfter: number | null = null;
    while (performance.now() < deadline && (countedAfter === null || rewardedAfter === null)) {
      const { user } = (await call(this.url, 'GET', '/users/burst-referrer', undefined, CLIENT_KEY)).json.data;
      counted = user.stats.claims as number;
      if (countedAfter === null && counted >= burst.ok) countedAfter = since();
      const active = user.rewards.active as { credit: { credits: number }[]; store_promo_code: { value: unknown }[] };
      rewarded = {
        credits: active.credit.reduce((sum, entry) => sum + entry.credits, 0),
        codes: active.store_promo_code.filter((entry) => entry.value !== null).length,
      };
      if (rewardedAfter === null && rewarded.credits >= burst.ok && rewarded.codes >= burst.ok) rewardedAfter = since();
      // The referrer's document grows with its codes: ask less often than for the count.
      await sleep(countedAfter === null ? 50 : 200);
    }
    const timedOut = `after ${this.options.catchUpTimeout} s`;
    this.add({
      key: 'reactions.catch_up',
      what: `referrer's stats.claims catching up after a ${this.options.burst} s burst of ${burst.ok.toLocaleString('en-US')} claims (${burst.req_per_s} req/s)`,
      value: countedAfter,
      unit: 's',
      target: '≤ 2 s',
      ...(countedAfter === null ? { note: `${counted} of ${burst.ok} counted ${timedOut}` } : {}),
    });
    this.add({
      key: 'reactions.sender_rewards',
      what: "the same burst: every sender reward in the referrer's rewards (a credit and a pooled code per claim)",
      value: rewardedAfter,
      unit: 's',
      target: '≤ 2 s',
      ...(rewardedAfter === null ? { note: `${rewarded.credits} credits and ${rewarded.codes} codes of ${burst.ok} ${timedOut}` } : {}),
    });
    await waitCaughtUp(this.url);
    await this.setBenchProgram([]);
  }

  async history(): Promise<void> {
    const history = this.options.history;
    progress(`long histories: a referrer with ${history} past claims, a user with ${history} past withdrawals…`);
    await this.newUser('veteran-referrer');
    await this.newUser('veteran-spender', history + BANK_CREDITS);
    await this.newUser('cost-fresh-referrer');
    await this.newUser('cost-fresh-spender', BANK_CREDITS);
    await waitCaughtUp(this.url);
    await this.service.stop();
    const backend = openEmbeddedBackend(this.dataDir);
    const started = performance.now();
    try {
      const ids = new RandomIds();
      const log = new EventLog(backend.eventStore, ids);
      await seedReferrerClaims(log, 'veteran-referrer', history);
      await seedWithdrawals(log, ids, 'veteran-spender', 'bank', history);
    } finally {
      await backend.close();
    }
    progress(`  seeded ${2 * history} claims and withdrawals in ${((performance.now() - started) / 1000).toFixed(1)} s; counting rows and bytes per command…`);
    const seeded = `${(2 * history).toLocaleString('en-US')} seeded claims and withdrawals`;
    let cost: CommandCost;
    try {
      cost = await runCommandCost(
        {
          dataDir: this.dataDir,
          commands: this.options.costCommands,
          seconds: 20,
          catchUpSeconds: this.options.catchUpTimeout,
          claims: { fresh: 'cost-fresh-referrer', veteran: 'veteran-referrer' },
          withdrawals: { fresh: 'cost-fresh-spender', veteran: 'veteran-spender', key: 'bank' },
        },
        progress,
      );
    } catch (error) {
      if (!(error instanceof CatchUpTimeout)) throw error;
      this.add({
        key: 'history.catch_up',
        what: `service start: projections catch up with ${seeded}`,
        value: null,
        unit: 's',
        note: `not within ${error.seconds} s; the long-history figures are left out`,
      });
      return;
    }
    this.add({ key: 'history.catch_up', what: `service start: projections catch up with ${seeded}`, value: cost.catch_up_s, unit: 's' });
    this.report.cost = cost.comparisons;
    this.service = await startService(this.dataDir, rateLimitEnv(this.options.rateLimits));
    await waitCaughtUp(this.url, this.options.catchUpTimeout);

    const veteranCode = (await call(this.url, 'GET', '/users/veteran-referrer', undefined, CLIENT_KEY)).json.data.user.referral_code as string;
    const claims = await this.claimLoad(veteranCode);
    this.add({
      key: 'history.claims',
      what: `claims on the code of a referrer with ${history.toLocaleString('en-US')} past claims`,
      load: claims,
      ...(this.freshClaims
        ? { compared_with: { what: 'fresh referrer', load: this.freshClaims }, ratio: ratio(this.freshClaims.req_per_s, claims.req_per_s) }
        : {}),
      target: 'cost ≤ 1.3× a fresh entity',
      note: 'ratio: time per command over a fresh entity’s (fresh req/s over this req/s)',
    });
    await waitCaughtUp(this.url);
    let operations = 0;
    const withdrawals = await this.run(() => {
      operations += 1;
      return {
        method: 'POST',
        path: '/users/veteran-spender/rewards/withdraw-credits',
        body: JSON.stringify({ key: 'bank', amount: 1, operation_id: `veteran-${operations}` }),
      };
    });
    this.add({
      key: 'history.withdrawals',
      what: `withdrawals on a user with ${history.toLocaleString('en-US')} past withdrawals`,
      load: withdrawals,
      ...(this.oneUserWithdrawals
        ? { compared_with: { what: 'fresh user', load: this.oneUserWithdrawals }, ratio: ratio(this.oneUserWithdrawals.req_per_s, withdrawals.req_per_s) }
        : {}),
      target: 'cost ≤ 1.3× a fresh entity',
      note: 'ratio: time per command over a fresh entity’s (fresh req/s over this req/s)',
    });
  }

  async replay(): Promise<void> {
    const speed = await measureLogSpeed(this.options.events, progress);
    this.report.log = speed;
    const scan = { what: 'raw scan (SELECT … ORDER BY position + JSON.parse)', value: speed.raw_scan_events_per_s };
    this.add({
      key: 'log.replay',
      what: `replay of ${speed.events.toLocaleString('en-US')} events (npm run replay)`,
      value: speed.replay_events_per_s,
      unit: 'events/s',
      compared_with: scan,
      ratio: ratio(speed.replay_events_per_s, speed.raw_scan_events_per_s),
      target: '≥ 0.5×',
    });
    this.add({
      key: 'log.replay_rss',
      what: `replay peak RSS (${speed.events.toLocaleString('en-US')} events)`,
      value: speed.replay_peak_rss_mb,
      unit: 'MB',
      target: '< 300 MB at 1M events',
    });
    this.add({
      key: 'log.export',
      what: `export of the same log (npm run export-events, NDJSON)`,
      value: speed.export_events_per_s,
      unit: 'events/s',
      compared_with: scan,
      ratio: ratio(speed.export_events_per_s, speed.raw_scan_events_per_s),
      target: '≥ 0.8×',
    });
    this.add({
      key: 'log.generate',
      what: 'npm run generate-events',
      value: speed.generate_events_per_s,
      unit: 'events/s',
      target: '1M events in < 60 s (≥ 16,667 events/s)',
    });
  }

  async close(): Promise<void> {
    await Promise.all([this.service?.stop(), this.bare?.stop()]);
    fs.rmSync(this.dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<number> {
  const options = benchOptions(benchCommand.parse(process.argv.slice(2)));
  const report = newReport(options);
  const http = ['users', 'claims', 'withdrawals', 'reactions', 'history'].some((section) => options.only.has(section as never));
  const bench = new Bench(options, report);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void bench.close().finally(() => process.exit(130)));
  }
  try {
    if (http) {
      await bench.start();
      if (options.only.has('users')) await bench.users();
      if (options.only.has('claims')) await bench.claims();
      if (options.only.has('withdrawals')) await bench.withdrawals();
      if (options.only.has('reactions')) await bench.reactions();
      if (options.only.has('history')) await bench.history();
    }
    if (options.only.has('replay')) await bench.replay();
  } finally {
    await bench.close();
  }
  report.finished_at = new Date().toISOString();
  process.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : formatTable(report));
  return 0;
}

runScript(benchCommand, main);
