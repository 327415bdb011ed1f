import { type BenchRun, progress } from '../bench-run.js';
import { CLIENT_KEY, call, sleep, waitCaughtUp } from '../processes.js';

export async function benchReactions(bench: BenchRun): Promise<void> {
  progress(`referral reactions: a ${bench.options.burst} s burst of claims on one code, with sender rewards (credits and a pooled code)…`);
  // For this section the program also grants its referrers a credit and a one-time code per
  // claim (the referral reaction grants them, the pools reaction hands out the codes).
  await call(bench.url, 'PUT', '/admin/rewards/thanks', { kind: 'credit', name: 'Thanks', credits: 1 });
  await call(bench.url, 'PUT', '/admin/rewards/thanks-code', { kind: 'store_promo_code', name: 'Thanks code' });
  const codes = bench.claimPool(bench.options.burst);
  for (let added = 0; added < codes; added += 5_000) {
    const batch = Array.from({ length: Math.min(5_000, codes - added) }, (_, index) => ({
      value: `THANKS-${added + index}`,
      expires_at: '2099-01-01T00:00:00Z',
    }));
    await call(bench.url, 'POST', '/admin/rewards/thanks-code/codes', { codes: batch });
  }
  await bench.setBenchProgram([
    { reward_key: 'thanks', activation: { variant: 'claim', amount: 1, limit: 0 }, deactivation: { variant: 'never' } },
    { reward_key: 'thanks-code', activation: { variant: 'claim', amount: 1, limit: 0 }, deactivation: { variant: 'never' } },
  ]);
  const referrer = await bench.newUser('burst-referrer');
  const burst = await bench.claimLoad(referrer.referral_code, bench.options.burst);
  const ended = performance.now();
  const deadline = ended + bench.options.catchUpTimeout * 1000;
  const since = () => Math.round((performance.now() - ended) / 100) / 10;
  let counted = -1;
  let countedAfter: number | null = null;
  let rewarded = { credits: -1, codes: -1 };
  let rewardedAfter: number | null = null;
  while (performance.now() < deadline && (countedAfter === null || rewardedAfter === null)) {
    const { user } = (await call(bench.url, 'GET', '/users/burst-referrer', undefined, CLIENT_KEY)).json.data;
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
  const timedOut = `after ${bench.options.catchUpTimeout} s`;
  bench.add({
    key: 'reactions.catch_up',
    what: `referrer's stats.claims catching up after a ${bench.options.burst} s burst of ${burst.ok.toLocaleString('en-US')} claims (${burst.req_per_s} req/s)`,
    value: countedAfter,
    unit: 's',
    target: '≤ 2 s',
    ...(countedAfter === null ? { note: `${counted} of ${burst.ok} counted ${timedOut}` } : {}),
  });
  bench.add({
    key: 'reactions.sender_rewards',
    what: "the same burst: every sender reward in the referrer's rewards (a credit and a pooled code per claim)",
    value: rewardedAfter,
    unit: 's',
    target: '≤ 2 s',
    ...(rewardedAfter === null ? { note: `${rewarded.credits} credits and ${rewarded.codes} codes of ${burst.ok} ${timedOut}` } : {}),
  });
  await waitCaughtUp(bench.url);
  await bench.setBenchProgram([]);
}
