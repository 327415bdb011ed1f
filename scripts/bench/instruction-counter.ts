import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

/** Counts what a process executes between `start` and `stop`. */
export interface InstructionCount {
  /** The instructions counted, or null when `perf` could not count them here. */
  stop(): Promise<number | null>;
}

/**
 * The CPU instructions a running process executes, counted by Linux `perf stat` (hardware
 * counters, every thread of the process). Unlike CPU time, the count hardly moves when other
 * tenants share the machine, so a ratio of two counts stays within a few percent from run to run
 * where a throughput ratio moved from 0.66× to 1.46×. Optional: without `perf` (or without the
 * permission to count, `kernel.perf_event_paranoid` > 2), the count is null and the bench says so.
 */
export async function countInstructions(pid: number | undefined): Promise<InstructionCount> {
  if (pid === undefined) return { stop: async () => null };
  const perf = spawn('perf', ['stat', '-x', ',', '-e', 'instructions', '-p', String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let report = '';
  perf.stderr.on('data', (chunk: Buffer) => {
    report += chunk.toString();
  });
  const finished = new Promise<number | null>((resolve) => {
    perf.once('error', () => resolve(null));
    perf.once('exit', () => resolve(instructionsIn(report)));
  });
  // perf attaches to the process's threads before the measured work starts.
  await sleep(200);
  return {
    async stop() {
      if (perf.exitCode === null && perf.signalCode === null) perf.kill('SIGINT');
      return finished;
    },
  };
}

/** The count from `perf stat -x ,` output (`123456,,instructions,…`); null for `<not counted>` and errors. */
export function instructionsIn(report: string): number | null {
  const line = report.split('\n').find((row) => row.split(',')[2]?.startsWith('instructions'));
  const count = Number(line?.split(',')[0]);
  return line !== undefined && Number.isFinite(count) && count > 0 ? count : null;
}
