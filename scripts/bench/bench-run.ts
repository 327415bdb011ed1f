import { execSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { load, type Measurement } from './load.js';
import type { BenchOptions } from './options.js';
import { type Child, CLIENT_KEY, call, ROOT, rateLimitEnv, startBare, startService, waitCaughtUp } from './processes.js';
import { type BenchReport, type Figure, ratio } from './report.js';

export const progress = (message: string) => process.stderr.write(`${message}\n`);
export const BANK_CREDITS = 1_000_000;

/** One run of `npm run bench`: the service and the bare route, and what the sections share (scripts/bench/sections/). */
export class BenchRun {
  service!: Child;
  private bare!: Child;
  readonly dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'referrals-bench-'));
  private readonly bareRuns = new Map<string, Measurement>();
  /** Registered users nobody has claimed for yet. */
  readonly claimers: string[] = [];
  createdUsers = 0;
  /** Fresh-entity rates, for the long-history comparisons. */
  freshClaims: Measurement | null = null;
  oneUserWithdrawals: Measurement | null = null;
  private fastestClaims: number | null = null;
  userCreation: number | null = null;

  constructor(
    readonly options: BenchOptions,
    readonly report: BenchReport,
  ) {}

  get url() {
    return this.service.url;
  }

  add(figure: Figure): void {
    this.report.figures.push(figure);
    const shown = figure.load
      ? `${figure.load.req_per_s} req/s, p99 ${figure.load.p99_ms} ms`
      : figure.value === null || figure.value === undefined
        ? `not reached (${figure.note ?? ''})`
        : `${figure.value} ${figure.unit ?? ''}`;
    progress(`  ${figure.what}: ${shown}${figure.ratio != null ? ` (${figure.ratio}× ${figure.compared_with?.what})` : ''}`);
  }

  run(request: () => { method: 'GET' | 'POST'; path: string; body?: string }, options: { duration?: number; maxRequests?: number; url?: string } = {}) {
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

  async againstBare(figure: Omit<Figure, 'compared_with' | 'ratio'> & { load: Measurement }, method: 'GET' | 'POST', reference: string, body?: string) {
    const bare = await this.bareRoute(method, reference, body);
    this.add({
      ...figure,
      compared_with: { what: `bare express ${method}`, load: bare.load, bytes: bare.bytes },
      ratio: ratio(figure.load.req_per_s, bare.load.req_per_s),
    });
  }

  /** `count` registered users nobody has claimed for (created over HTTP when short, not measured). */
  async takeClaimers(count: number): Promise<string[]> {
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
  claimPool(seconds: number) {
    const rate = this.fastestClaims ?? this.userCreation ?? 1_000;
    return Math.min(this.options.maxRequests, Math.ceil(3 * rate * seconds) + this.options.connections);
  }

  /** Claims by fresh users on `code`, one claimer per request. */
  async claimLoad(code: string, seconds = this.options.duration): Promise<Measurement> {
    const claimers = await this.takeClaimers(this.claimPool(seconds));
    let index = 0;
    const measurement = await this.run(
      () => ({ method: 'POST', path: `/users/${claimers[index++ % claimers.length]}/claim-code`, body: JSON.stringify({ code }) }),
      { duration: seconds, maxRequests: claimers.length },
    );
    this.fastestClaims = Math.max(this.fastestClaims ?? 0, measurement.req_per_s);
    return measurement;
  }

  async newUser(appUserId: string, credits = 0): Promise<{ referral_code: string }> {
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
  async setBenchProgram(sender: unknown[]): Promise<void> {
    await call(this.url, 'PUT', '/admin/programs/bench', {
      name: 'Bench',
      distribution_percentage: 100,
      limit: 0,
      rewards: { sender, receiver: [{ reward_key: 'welcome', activation: { variant: 'claim' }, deactivation: { variant: 'never' } }] },
    });
  }

  /** Restarts the service with or without rate limits (same data directory). */
  async restart(rateLimits: boolean): Promise<void> {
    await this.service.stop();
    this.service = await startService(this.dataDir, rateLimitEnv(rateLimits));
    await waitCaughtUp(this.url);
  }

  /** Stops the service and the bare route (a stopped child's stop does nothing). */
  async stopProcesses(): Promise<void> {
    await Promise.all([this.service?.stop(), this.bare?.stop()]);
  }

  async close(): Promise<void> {
    await this.stopProcesses();
    fs.rmSync(this.dataDir, { recursive: true, force: true });
  }
}
