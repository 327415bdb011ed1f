/**
 * What one command costs the stores, counted rather than timed: the service runs in this
 * process on counting decorators of its EventStore and ReadStore, and each command is sent
 * over HTTP one at a time; the window closes when the service is idle again (projections and
 * reactions done), so projecting and reacting are part of the command's cost.
 */
import 'reflect-metadata';
import { pino } from 'pino';
import { openEmbeddedBackend } from '../../src/backends/embedded.js';
import { loadConfig } from '../../src/config.js';
import { startService } from '../../src/service.js';
import { StoreCounter, type StoreCounts } from './counting-stores.js';
import { call, CLIENT_KEY, serviceEnv, sleep } from './processes.js';

export interface CostComparison {
  what: string;
  commands: number;
  /** Per command. */
  fresh: StoreCounts;
  veteran: StoreCounts;
  /** veteran / fresh for each count. */
  ratio: StoreCounts;
}

export interface CostPlan {
  dataDir: string;
  commands: number;
  /** A user with its referral code and no claims, and one with a long history of claims. */
  claims?: { fresh: string; veteran: string };
  /** A user holding credits of `key` with no withdrawals, and one with a long history of them. */
  withdrawals?: { fresh: string; veteran: string; key: string };
}

function perCommand(counts: StoreCounts, commands: number): StoreCounts {
  const each = (value: number) => Math.round((10 * value) / commands) / 10;
  return { calls: each(counts.calls), rows_read: each(counts.rows_read), bytes_read: each(counts.bytes_read), rows_written: each(counts.rows_written), bytes_written: each(counts.bytes_written) };
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

export async function measureCommandCost(plan: CostPlan, progress: (message: string) => void): Promise<CostComparison[]> {
  const counter = new StoreCounter();
  const config = loadConfig({ ...serviceEnv(plan.dataDir), LOG_LEVEL: 'silent' });
  const service = await startService({ config, backend: counter.wrap(openEmbeddedBackend(plan.dataDir)), logger: pino({ level: 'silent' }), role: 'all' });
  const url = service.url;

  /** Idle: no store call for a while (the runners only read when the log moves). */
  async function idle(): Promise<void> {
    counter.enabled = true;
    let calls = -1;
    while (counter.counts.calls !== calls) {
      calls = counter.counts.calls;
      await sleep(750);
    }
  }

  /** Counts `run` until the service is idle and `done` (checked without counting) holds. */
  async function window(run: () => Promise<void>, done: () => Promise<boolean>): Promise<StoreCounts> {
    await idle();
    counter.start();
    await run();
    for (;;) {
      await idle();
      const counts = counter.stop();
      if (await done()) return counts;
      counter.enabled = true;
    }
  }

  const stats = async (user: string) => (await call(url, 'GET', `/users/${user}`, undefined, CLIENT_KEY)).json.data.user.stats.claims as number;
  const results: CostComparison[] = [];
  try {
    if (plan.claims) {
      const perEntity: StoreCounts[] = [];
      for (const [label, referrer] of [['fresh', plan.claims.fresh], ['veteran', plan.claims.veteran]] as const) {
        const code = (await call(url, 'GET', `/users/${referrer}`, undefined, CLIENT_KEY)).json.data.user.referral_code as string;
        const claimers = Array.from({ length: plan.commands }, (_, index) => `cost-claimer-${label}-${index}`);
        for (const claimer of claimers) await call(url, 'POST', '/users', { app_user_id: claimer }, CLIENT_KEY);
        const before = await stats(referrer);
        progress(`  counting ${plan.commands} claims on the ${label} referrer's code…`);
        perEntity.push(
          await window(
            async () => {
              for (const claimer of claimers) await call(url, 'POST', `/users/${claimer}/claim-code`, { code }, CLIENT_KEY);
            },
            async () => (await stats(referrer)) === before + plan.commands,
          ),
        );
      }
      const [fresh, veteran] = perEntity.map((counts) => perCommand(counts, plan.commands)) as [StoreCounts, StoreCounts];
      results.push({ what: 'claim on a referrer\'s code (with its reaction and projections)', commands: plan.commands, fresh, veteran, ratio: ratioOf(veteran, fresh) });
    }
    if (plan.withdrawals) {
      const { key } = plan.withdrawals;
      const perEntity: StoreCounts[] = [];
      for (const [label, user] of [['fresh', plan.withdrawals.fresh], ['veteran', plan.withdrawals.veteran]] as const) {
        progress(`  counting ${plan.commands} withdrawals of the ${label} user…`);
        perEntity.push(
          await window(
            async () => {
              for (let index = 0; index < plan.commands; index += 1) {
                await call(url, 'POST', `/users/${user}/rewards/withdraw-credits`, { key, amount: 1, operation_id: `cost-${label}-${index}` }, CLIENT_KEY);
              }
            },
            async () => true,
          ),
        );
      }
      const [fresh, veteran] = perEntity.map((counts) => perCommand(counts, plan.commands)) as [StoreCounts, StoreCounts];
      results.push({ what: 'withdrawal (with its projections)', commands: plan.commands, fresh, veteran, ratio: ratioOf(veteran, fresh) });
    }
  } finally {
    counter.enabled = false;
    await service.stop();
  }
  return results;
}
