import { BANK_CREDITS, type BenchRun, progress } from '../bench-run.js';
import { CLIENT_KEY, call, waitCaughtUp } from '../processes.js';

export async function benchWithdrawals(bench: BenchRun): Promise<void> {
  progress('withdrawals: 400 users, then one user…');
  const spread = Array.from({ length: 400 }, (_, index) => `spender-${index}`);
  for (let start = 0; start < spread.length; start += 32) await Promise.all(spread.slice(start, start + 32).map((user) => bench.newUser(user, 1)));
  await bench.newUser('hot-spender', BANK_CREDITS);
  const withdraw = (operationId: string) => JSON.stringify({ key: 'bank', amount: 1, operation_id: operationId });
  const sample = await call(bench.url, 'POST', '/users/hot-spender/rewards/withdraw-credits', JSON.parse(withdraw('sample')), CLIENT_KEY);
  await waitCaughtUp(bench.url);
  let operations = 0;
  const spreadLoad = await bench.run(() => {
    operations += 1;
    return { method: 'POST', path: `/users/${spread[operations % spread.length]}/rewards/withdraw-credits`, body: withdraw(`spread-${operations}`) };
  });
  await bench.againstBare(
    { key: 'withdrawals.spread', what: 'withdrawals spread over 400 users', load: spreadLoad, target: '≥ 0.6×, p99 ≤ 50 ms' },
    'POST',
    sample.text,
    withdraw('bare'),
  );
  await waitCaughtUp(bench.url);
  bench.oneUserWithdrawals = await bench.run(() => ({
    method: 'POST',
    path: '/users/hot-spender/rewards/withdraw-credits',
    body: withdraw(`hot-${operations++}`),
  }));
  await bench.againstBare(
    { key: 'withdrawals.one_user', what: 'withdrawals on one user', load: bench.oneUserWithdrawals, target: '≥ 0.3×, p99 ≤ 50 ms' },
    'POST',
    sample.text,
    withdraw('bare'),
  );
}
