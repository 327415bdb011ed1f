/**
 * What one command costs the stores, counted rather than timed: the service runs in this
 * process on counting decorators of its EventStore and ReadStore, and each command is sent
 * over HTTP one at a time; the window closes when the service is idle again (projections and
 * reactions done), so projecting and reacting are part of the command's cost. One uncounted
 * command per entity comes first, so its snapshot exists (seeded histories have none), as it
 * does for any entity the service has served before.
 */
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { pino } from 'pino';
import { openEmbeddedBackend } from '../../src/backends/embedded.js';
import { loadConfig } from '../../src/config.js';
import { startService } from '../../src/service.js';
import { type CountsByStore, StoreCounter, type StoreCounts, type StoreName } from './counting-stores.js';
import { call, CatchUpTimeout, CLIENT_KEY, ROOT, serviceEnv, sleep, waitCaughtUp } from './processes.js';

export interface CostComparison {
  what: string;
  /** Commands counted on each entity (fewer than asked when they took longer than the time allowed). */
  commands: { fresh: number; veteran: number };
  /** Per command. */
  fresh: StoreCounts;
  veteran: StoreCounts;
  /** veteran / fresh for each count. */
  ratio: StoreCounts;
  /** The same per store: is it the log (deciding) or the read models (projecting) that grows? */
  by_store: Record<StoreName, { fresh: StoreCounts; veteran: StoreCounts; ratio: StoreCounts }>;
}

export interface CostPlan {
  dataDir: string;
  /** Commands per entity, one at a time… */
  commands: number;
  /** …or as many as fit in this many seconds, whichever comes first. */
  seconds: number;
  /** Time allowed for the service to project the seeded history when it starts (CatchUpTimeout). */
  catchUpSeconds: number;
  /** A user with its referral code and no claims, and one with a long history of claims. */
  claims?: { fresh: string; veteran: string };
  /** A user holding credits of `key` with no withdrawals, and one with a long history of them. */
  withdrawals?: { fresh: string; veteran: string; key: string };
}

function perCommand(counts: StoreCounts, commands: number): StoreCounts {
  const each = (value: number) => Math.round((10 * value) / commands) / 10;
  return {
    calls: each(counts.calls),
    rows_read: each(counts.rows_read),
    bytes_read: each(counts.bytes_read),
    rows_written: each(counts.rows_written),
    bytes_written: each(counts.bytes_written),
  };
}

function ratioOf(veteran: StoreCounts, fresh: StoreCounts): StoreCounts {
  const ratio = (a: number, b: number) => (b === 0 ? (a === 0 ? 1 : Infinity) : Math.round((100 * a) / b) / 100);
  return {
    calls: ratio(veteran.calls, fresh.calls),
    rows_read: ratio(veteran.rows_read, fresh.rows_read),
    bytes_read: ratio(veteran.bytes_read, fresh.bytes_read),
    rows_written: ratio(veteran.rows_written, fresh.rows_written),
    bytes_written: ratio(veteran.bytes_written, fresh.bytes_written),
  };
}

function compare(what: string, [fresh, veteran]: { counts: CountsByStore; commands: number }[]): CostComparison {
  const side = (part: keyof CountsByStore) => {
    const freshEach = perCommand(fresh!.counts[part], fresh!.commands);
    const veteranEach = perCommand(veteran!.counts[part], veteran!.commands);
    return { fresh: freshEach, veteran: veteranEach, ratio: ratioOf(veteranEach, freshEach) };
  };
  return {
    what,
    commands: { fresh: fresh!.commands, veteran: veteran!.commands },
    ...side('total'),
    by_store: { event_store: side('event_store'), read_store: side('read_store') },
  };
}

export interface CommandCost {
  /** Seconds the started service took to project the seeded history. */
  catch_up_s: number;
  comparisons: CostComparison[];
}

/**
 * Runs measureCommandCost in a child process, killed (CatchUpTimeout) when the service has not
 * projected the seeded history within `plan.catchUpSeconds` of its start, or the whole
 * measurement takes longer than that plus the counting windows allow.
 */
export function runCommandCost(plan: CostPlan, progress: (message: string) => void): Promise<CommandCost> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/bench/command-cost-process.ts', JSON.stringify(plan)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let caughtUpBy: number | null = null;
  const started = performance.now();
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    if (text.includes('counting')) caughtUpBy ??= performance.now();
    progress(text.trimEnd());
  });
  const check = setInterval(() => {
    const seconds = (performance.now() - started) / 1000;
    const windows = 4 * (plan.seconds + 30);
    if ((caughtUpBy === null && seconds > plan.catchUpSeconds + 15) || seconds > plan.catchUpSeconds + 15 + windows) child.kill('SIGKILL');
  }, 500);
  return new Promise((resolve, reject) => {
    child.once('exit', (code, signal) => {
      clearInterval(check);
      if (code === 0) return resolve(JSON.parse(stdout.trim().split('\n').pop()!) as CommandCost);
      if (signal === 'SIGKILL') return reject(new CatchUpTimeout(plan.catchUpSeconds, 'the service was still projecting the seeded history'));
      reject(new Error(`command cost measurement exited with ${code}`));
    });
  });
}

export async function measureCommandCost(plan: CostPlan, progress: (message: string) => void): Promise<CommandCost> {
  const counter = new StoreCounter();
  // From before the start: a service projecting in one go may not even finish starting first.
  const started = performance.now();
  const config = loadConfig({ ...serviceEnv(plan.dataDir), LOG_LEVEL: 'silent' });
  const service = await startService({ config, backend: counter.wrap(openEmbeddedBackend(plan.dataDir)), logger: pino({ level: 'silent' }), role: 'all' });
  const url = service.url;

  /** Idle: no store call that found or wrote anything for a while (the runners only poll). */
  async function idle(): Promise<void> {
    let activity = -1;
    while (counter.activity !== activity) {
      activity = counter.activity;
      await sleep(750);
    }
  }

  /**
   * Counts `command` run one at a time (up to `plan.commands` times, or for `plan.seconds`),
   * until the service is idle again and `done(commands)` (checked without counting) holds.
   */
  async function window(
    command: (index: number) => Promise<void>,
    done: (commands: number) => Promise<boolean>,
  ): Promise<{ counts: CountsByStore; commands: number }> {
    await idle();
    const deadline = performance.now() + plan.seconds * 1000;
    counter.start();
    let commands = 0;
    while (commands < plan.commands && (commands === 0 || performance.now() < deadline)) await command(commands++);
    for (;;) {
      await idle();
      const counts = counter.stop();
      if (await done(commands)) return { counts, commands };
      counter.enabled = true;
    }
  }

  const stats = async (user: string) => (await call(url, 'GET', `/users/${user}`, undefined, CLIENT_KEY)).json.data.user.stats.claims as number;
  const results: CostComparison[] = [];
  let caughtUp: number;
  try {
    progress('  starting the service on it; projecting the seeded history…');
    await waitCaughtUp(url, plan.catchUpSeconds);
    caughtUp = (performance.now() - started) / 1000;
    if (plan.claims) {
      const perEntity: { counts: CountsByStore; commands: number }[] = [];
      for (const [label, referrer] of [
        ['fresh', plan.claims.fresh],
        ['veteran', plan.claims.veteran],
      ] as const) {
        const code = (await call(url, 'GET', `/users/${referrer}`, undefined, CLIENT_KEY)).json.data.user.referral_code as string;
        const [warmUp, ...claimers] = Array.from({ length: plan.commands + 1 }, (_, index) => `cost-claimer-${label}-${index}`);
        for (const claimer of [warmUp!, ...claimers]) await call(url, 'POST', '/users', { app_user_id: claimer }, CLIENT_KEY);
        // One command first, uncounted: a long-lived entity has a snapshot, and seeding writes none.
        await call(url, 'POST', `/users/${warmUp}/claim-code`, { code }, CLIENT_KEY);
        await idle();
        const before = await stats(referrer);
        progress(`  counting ${plan.commands} claims on the ${label} referrer's code…`);
        perEntity.push(
          await window(
            async (index) => void (await call(url, 'POST', `/users/${claimers[index]}/claim-code`, { code }, CLIENT_KEY)),
            async (commands) => (await stats(referrer)) === before + commands,
          ),
        );
      }
      results.push(compare("claim on a referrer's code (with its reaction and projections)", perEntity));
    }
    if (plan.withdrawals) {
      const { key } = plan.withdrawals;
      const perEntity: { counts: CountsByStore; commands: number }[] = [];
      for (const [label, user] of [
        ['fresh', plan.withdrawals.fresh],
        ['veteran', plan.withdrawals.veteran],
      ] as const) {
        progress(`  counting ${plan.commands} withdrawals of the ${label} user…`);
        await call(url, 'POST', `/users/${user}/rewards/withdraw-credits`, { key, amount: 1, operation_id: `cost-${label}-warm-up` }, CLIENT_KEY);
        perEntity.push(
          await window(
            async (index) =>
              void (await call(url, 'POST', `/users/${user}/rewards/withdraw-credits`, { key, amount: 1, operation_id: `cost-${label}-${index}` }, CLIENT_KEY)),
            async () => true,
          ),
        );
      }
      results.push(compare('withdrawal (with its projections)', perEntity));
    }
  } finally {
    counter.enabled = false;
    await service.stop();
  }
  return { catch_up_s: Math.round(caughtUp * 10) / 10, comparisons: results };
}
