import { type BenchRun, progress } from '../bench-run.js';
import { setGuardRules } from '../fraud-rules.js';
import { alternatingRounds, GUARD_ROUNDS, type Measured, serviceCpuSeconds, guardedFigure } from '../guarded-claims.js';
import { countInstructions } from '../instruction-counter.js';
import { CLIENT_KEY, call, sleep, waitCaughtUp } from '../processes.js';

export async function benchClaims(bench: BenchRun): Promise<void> {
  progress('claims by fresh users on one referral code…');
  const referrer = await bench.newUser('referrer-fresh');
  const [sampleClaimer] = await bench.takeClaimers(1);
  const sample = await call(bench.url, 'POST', `/users/${sampleClaimer}/claim-code`, { code: referrer.referral_code }, CLIENT_KEY);
  await waitCaughtUp(bench.url);
  bench.freshClaims = await bench.claimLoad(referrer.referral_code);
  const claimBody = JSON.stringify({ code: referrer.referral_code });
  await bench.againstBare(
    {
      key: 'claims.one_code',
      what: `claims by fresh users on one referral code (${bench.options.connections} connections)`,
      load: bench.freshClaims,
      target: '≥ 0.5×, p99 ≤ 50 ms',
    },
    'POST',
    sample.text,
    claimBody,
  );
  await guardedClaims(bench);
}

/**
 * Issue #15: claims with rate limits and every fraud rule kind on (parameters no claim reaches,
 * scripts/bench/fraud-rules.ts) next to the same claims with both off, measured just before.
 * Both sides use the same kind of claimer, each with its own payment customer (so the
 * payment-customer counter is exercised), and a referrer of their own: the ratio is the cost of
 * the guards alone.
 */
async function guardedClaims(bench: BenchRun): Promise<void> {
  progress(`the same claims without, then with rate limits and fraud rules (${GUARD_ROUNDS} rounds, alternating)…`);
  // Each run starts on a freshly started service, so neither side has the other's warm JIT or caches.
  const rounds = await alternatingRounds(
    async (round) => {
      await bench.restart(bench.options.rateLimits);
      return claimsWithPaymentCustomers(bench, `referrer-unguarded-${round}`);
    },
    async (round) => {
      await bench.restart(true);
      await setGuardRules(bench.url, true);
      const measured = await claimsWithPaymentCustomers(bench, `referrer-guarded-${round}`);
      await setGuardRules(bench.url, false);
      return measured;
    },
  );
  await bench.restart(bench.options.rateLimits);
  bench.add(guardedFigure(rounds, bench.options.rateLimits));
}

/** Claims on a new referrer's code by new users who each have a payment customer. */
async function claimsWithPaymentCustomers(bench: BenchRun, referrerId: string): Promise<Measured> {
  const referrer = await bench.newUser(referrerId);
  const first = bench.createdUsers;
  let next = first;
  await bench.run(
    () => ({ method: 'POST', path: '/users', body: JSON.stringify({ app_user_id: `user-${next}`, payment_customer_id: `cus_bench_${next++}` }) }),
    { duration: 600, maxRequests: bench.claimPool(bench.options.duration + 1) },
  );
  bench.createdUsers = next;
  const claimers = Array.from({ length: next - first }, (_, index) => `user-${first + index}`);
  await waitCaughtUp(bench.url);
  await sleep(1100); // older than the account-age rule's 1 s
  let index = 0;
  const claim = () => ({
    method: 'POST' as const,
    path: `/users/${claimers[index++ % claimers.length]}/claim-code`,
    body: JSON.stringify({ code: referrer.referral_code }),
  });
  await bench.run(claim, { duration: 1, maxRequests: Math.ceil(claimers.length / 6) }); // warm-up (after a restart too)
  await waitCaughtUp(bench.url);
  const instructions = await countInstructions(bench.service.child.pid);
  const cpuBefore = await serviceCpuSeconds(bench.url);
  const measured = await bench.run(claim, { maxRequests: claimers.length - index });
  // Until the read models and reactions caught up: their work on these claims counts too.
  await waitCaughtUp(bench.url);
  const cpuUs = ((await serviceCpuSeconds(bench.url)) - cpuBefore) * 1e6;
  const counted = await instructions.stop();
  const requests = Math.max(measured.requests, 1);
  return {
    ...measured,
    cpu_us_per_request: Math.round(cpuUs / requests),
    instructions_per_request: counted === null ? null : Math.round(counted / requests),
  };
}
