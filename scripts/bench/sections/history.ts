import { RandomIds } from '../../../src/adapters/system/random-ids.js';
import { EventLog } from '../../../src/application/event-log.js';
import { openEmbeddedBackend } from '../../../src/backends/embedded.js';
import { BANK_CREDITS, type BenchRun, progress } from '../bench-run.js';
import { type CommandCost, runCommandCost } from '../command-cost.js';
import { CatchUpTimeout, CLIENT_KEY, call, rateLimitEnv, startService, waitCaughtUp } from '../processes.js';
import { ratio } from '../report.js';
import { seedReferrerClaims, seedWithdrawals } from '../seed-history.js';

export async function benchHistory(bench: BenchRun): Promise<void> {
  const history = bench.options.history;
  progress(`long histories: a referrer with ${history} past claims, a user with ${history} past withdrawals…`);
  await bench.newUser('veteran-referrer');
  await bench.newUser('veteran-spender', history + BANK_CREDITS);
  await bench.newUser('cost-fresh-referrer');
  await bench.newUser('cost-fresh-spender', BANK_CREDITS);
  await waitCaughtUp(bench.url);
  await bench.service.stop();
  const backend = openEmbeddedBackend(bench.dataDir);
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
        dataDir: bench.dataDir,
        commands: bench.options.costCommands,
        seconds: 20,
        catchUpSeconds: bench.options.catchUpTimeout,
        claims: { fresh: 'cost-fresh-referrer', veteran: 'veteran-referrer' },
        withdrawals: { fresh: 'cost-fresh-spender', veteran: 'veteran-spender', key: 'bank' },
      },
      progress,
    );
  } catch (error) {
    if (!(error instanceof CatchUpTimeout)) throw error;
    bench.add({
      key: 'history.catch_up',
      what: `service start: projections catch up with ${seeded}`,
      value: null,
      unit: 's',
      note: `not within ${error.seconds} s; the long-history figures are left out`,
    });
    return;
  }
  bench.add({ key: 'history.catch_up', what: `service start: projections catch up with ${seeded}`, value: cost.catch_up_s, unit: 's' });
  bench.report.cost = cost.comparisons;
  bench.service = await startService(bench.dataDir, rateLimitEnv(bench.options.rateLimits));
  await waitCaughtUp(bench.url, bench.options.catchUpTimeout);

  const veteranCode = (await call(bench.url, 'GET', '/users/veteran-referrer', undefined, CLIENT_KEY)).json.data.user.referral_code as string;
  const claims = await bench.claimLoad(veteranCode);
  bench.add({
    key: 'history.claims',
    what: `claims on the code of a referrer with ${history.toLocaleString('en-US')} past claims`,
    load: claims,
    ...(bench.freshClaims
      ? { compared_with: { what: 'fresh referrer', load: bench.freshClaims }, ratio: ratio(bench.freshClaims.req_per_s, claims.req_per_s) }
      : {}),
    target: 'cost ≤ 1.3× a fresh entity',
    note: 'ratio: time per command over a fresh entity’s (fresh req/s over this req/s)',
  });
  await waitCaughtUp(bench.url);
  let operations = 0;
  const withdrawals = await bench.run(() => {
    operations += 1;
    return {
      method: 'POST',
      path: '/users/veteran-spender/rewards/withdraw-credits',
      body: JSON.stringify({ key: 'bank', amount: 1, operation_id: `veteran-${operations}` }),
    };
  });
  bench.add({
    key: 'history.withdrawals',
    what: `withdrawals on a user with ${history.toLocaleString('en-US')} past withdrawals`,
    load: withdrawals,
    ...(bench.oneUserWithdrawals
      ? { compared_with: { what: 'fresh user', load: bench.oneUserWithdrawals }, ratio: ratio(bench.oneUserWithdrawals.req_per_s, withdrawals.req_per_s) }
      : {}),
    target: 'cost ≤ 1.3× a fresh entity',
    note: 'ratio: time per command over a fresh entity’s (fresh req/s over this req/s)',
  });
}
