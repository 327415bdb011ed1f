import type { Measurement } from './load.js';
import { SECRET_KEY } from './processes.js';
import { type Figure, ratio } from './report.js';

/** Rounds of claims.guarded: without and with the guards, each run on a freshly started service. */
export const GUARD_ROUNDS = 5;

/**
 * A load test with the service's CPU time (user + system, all its threads) and its instructions
 * (null without `perf`) per request, the catch-up of its read models included.
 */
export type Measured = Measurement & { cpu_us_per_request: number; instructions_per_request: number | null };

export interface GuardRound {
  unguarded: Measured;
  guarded: Measured;
}

/** The service process's CPU seconds so far (its `process_cpu_seconds_total`). */
export async function serviceCpuSeconds(url: string): Promise<number> {
  const metrics = await (await fetch(`${url}/metrics`, { headers: { 'x-api-key': SECRET_KEY } })).text();
  return Number(/^process_cpu_seconds_total (\S+)$/m.exec(metrics)?.[1] ?? Number.NaN);
}

/**
 * Runs GUARD_ROUNDS rounds of the two sides. Every run adds users and claims, so later runs meet
 * a larger database: the order within a round alternates (without first, then with first, …),
 * so neither side always runs on the larger one.
 */
export async function alternatingRounds(
  unguardedRun: (round: number) => Promise<Measured>,
  guardedRun: (round: number) => Promise<Measured>,
): Promise<GuardRound[]> {
  const rounds: GuardRound[] = [];
  for (let round = 0; round < GUARD_ROUNDS; round += 1) {
    if (round % 2 === 0) {
      const unguarded = await unguardedRun(round);
      rounds.push({ unguarded, guarded: await guardedRun(round) });
    } else {
      const guarded = await guardedRun(round);
      rounds.push({ guarded, unguarded: await unguardedRun(round) });
    }
  }
  return rounds;
}

/**
 * The figure: the round with the median ratio. Each round compares two runs a few seconds apart,
 * so a burst of noise on a shared machine (other tenants moved the bare route between 4,000 and
 * 6,600 req/s from run to run) tilts one round, not the figure. The note lists every round.
 */
export function guardedFigure(rounds: GuardRound[], rateLimitsOnBothSides: boolean): Figure {
  const throughput = (round: GuardRound) => round.guarded.req_per_s / round.unguarded.req_per_s;
  const median = [...rounds].sort((a, b) => throughput(a) - throughput(b))[Math.floor(rounds.length / 2)]!;
  const ratios = rounds.map((round) => ratio(round.guarded.req_per_s, round.unguarded.req_per_s));
  const cpuRatios = rounds.map((round) => ratio(round.unguarded.cpu_us_per_request, round.guarded.cpu_us_per_request));
  const instructionRatios = rounds.flatMap(({ unguarded, guarded }) => {
    const counted = unguarded.instructions_per_request !== null && guarded.instructions_per_request !== null;
    const value = counted ? ratio(unguarded.instructions_per_request!, guarded.instructions_per_request!) : null;
    return value === null ? [] : [value];
  });
  const instructions =
    instructionRatios.length === rounds.length
      ? `; instructions per claim, without over with (perf stat, steady where throughput is not), ${instructionRatios.join(', ')}, median ${medianOf(instructionRatios)} (${millions(median.guarded.instructions_per_request)} guarded, ${millions(median.unguarded.instructions_per_request)} without in the median round)`
      : '; instructions per claim not counted (no perf here)';
  return {
    key: 'claims.guarded',
    what: `claims on one referral code with rate limits and all 7 fraud rule kinds on (the median of ${rounds.length} rounds)${rounds.some((round) => round.guarded.non_2xx > 0) ? ' (some refused)' : ''}`,
    load: median.guarded,
    compared_with: { what: `the same claims with fraud rules off${rateLimitsOnBothSides ? '' : ' and rate limits off'}`, load: median.unguarded },
    ratio: ratio(median.guarded.req_per_s, median.unguarded.req_per_s),
    target: '≥ 0.9× (issue #15)',
    note: `every round's ratio ${ratios.join(', ')}; service CPU per claim, without over with, ${cpuRatios.join(', ')} (${median.guarded.cpu_us_per_request} µs guarded, ${median.unguarded.cpu_us_per_request} µs without in the median round)${instructions}`,
  };
}

function medianOf(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
}

function millions(count: number | null): string {
  return count === null ? '?' : `${(count / 1e6).toFixed(2)} M`;
}
