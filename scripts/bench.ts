/**
 * npm run bench [-- --only claims,replay --duration 5 --history 100000 --json]   (--help)
 *
 * Every performance figure (README, "Benchmarks") in one run, each next to what it is judged against, measured in
 * the same run on the same machine: a bare express route serving the same bytes (load
 * tests), a fresh entity (long histories), a raw scan of the log (replay and export).
 * The service runs built (dist/) in a child process on a temporary data directory, the bare
 * route in another; autocannon loads them from this process, only on 127.0.0.1, and every
 * load test stops by itself (--duration, --max-requests). Long histories are written straight
 * into the event log (scripts/bench/seed-history.ts), not over HTTP.
 */
import '../src/supported-node.js';
import { BenchRun } from './bench/bench-run.js';
import { benchCommand, benchOptions } from './bench/options.js';
import { formatTable, newReport } from './bench/report.js';
import { benchClaims } from './bench/sections/claims.js';
import { benchHistory } from './bench/sections/history.js';
import { benchReactions } from './bench/sections/reactions.js';
import { benchReplay } from './bench/sections/replay.js';
import { benchUsers } from './bench/sections/users.js';
import { benchWithdrawals } from './bench/sections/withdrawals.js';
import { runScript } from './cli/command-line.js';

async function main(): Promise<number> {
  const options = benchOptions(benchCommand.parse(process.argv.slice(2)));
  const report = newReport(options);
  const http = ['users', 'claims', 'withdrawals', 'reactions', 'history'].some((section) => options.only.has(section as never));
  const bench = new BenchRun(options, report);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void bench.close().finally(() => process.exit(130)));
  }
  try {
    if (http) {
      await bench.start();
      if (options.only.has('users')) await benchUsers(bench);
      if (options.only.has('claims')) await benchClaims(bench);
      if (options.only.has('withdrawals')) await benchWithdrawals(bench);
      if (options.only.has('reactions')) await benchReactions(bench);
      if (options.only.has('history')) await benchHistory(bench);
      // The log's reading is timed against a raw scan on an otherwise idle machine: the service
      // (still projecting the last section's load) and the bare route stop first.
      await bench.stopProcesses();
    }
    if (options.only.has('replay')) await benchReplay(bench);
  } finally {
    await bench.close();
  }
  report.finished_at = new Date().toISOString();
  process.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : formatTable(report));
  return 0;
}

runScript(benchCommand, main);
