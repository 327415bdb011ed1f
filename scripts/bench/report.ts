import os from 'node:os';
import type { CostComparison } from './command-cost.js';
import type { StoreCounts } from './counting-stores.js';
import type { Measurement } from './load.js';
import type { LogSpeed } from './log-speed.js';
import type { BenchOptions } from './options.js';

/** One performance figure, next to what it is compared with in the same run. */
export interface Figure {
  key: string;
  what: string;
  /** A load test of the service… */
  load?: Measurement;
  /** …or a single value. */
  value?: number | null;
  unit?: string;
  /** What it is compared with: a bare route serving the same bytes, a raw scan, a fresh entity. */
  compared_with?: { what: string; load?: Measurement; value?: number; bytes?: number };
  /** This figure's rate over the compared one's (for a cost: the fresh rate over this one's). */
  ratio?: number | null;
  /** The issue's target, as text. */
  target?: string;
  note?: string;
}

export interface BenchReport {
  version: 1;
  started_at: string;
  finished_at: string;
  machine: { cpus: number; node: string; platform: string; load_average_at_start: number[] };
  options: Record<string, unknown>;
  figures: Figure[];
  /** Rows and JSON bytes the stores read and wrote per command, fresh entity vs long history. */
  cost: CostComparison[];
  log: LogSpeed | null;
}

export function newReport(options: BenchOptions): BenchReport {
  return {
    version: 1,
    started_at: new Date().toISOString(),
    finished_at: '',
    machine: {
      cpus: os.availableParallelism(),
      node: process.version,
      platform: `${os.platform()} ${os.arch()}`,
      load_average_at_start: os.loadavg().map((load) => Math.round(load * 100) / 100),
    },
    options: { ...options, only: [...options.only] },
    figures: [],
    cost: [],
    log: null,
  };
}

export const ratio = (a: number, b: number) => (b > 0 ? Math.round((100 * a) / b) / 100 : null);

const number = (value: number) => value.toLocaleString('en-US');

function measured(load: Measurement): string {
  const failed = load.non_2xx + load.errors > 0 ? `, ${number(load.non_2xx + load.errors)} failed` : '';
  return `${number(load.req_per_s)} req/s, p50 ${load.p50_ms} / p99 ${load.p99_ms} ms${failed}`;
}

/** A markdown table (pastes into a README or an issue). */
export function formatTable(report: BenchReport): string {
  const lines = ['| What | Service | Compared with | Ratio | Target |', '|---|---|---|---|---|'];
  for (const figure of report.figures) {
    const service = figure.load
      ? `${measured(figure.load)}${figure.note ? `; ${figure.note}` : ''}`
      : figure.value === null || figure.value === undefined
        ? `not reached${figure.note ? ` (${figure.note})` : ''}`
        : `${number(figure.value)} ${figure.unit ?? ''}`.trim();
    const other = figure.compared_with;
    const compared = other
      ? `${other.what}${other.bytes !== undefined ? ` (${number(other.bytes)} B)` : ''}: ${other.load ? measured(other.load) : `${number(other.value ?? 0)} ${figure.unit ?? ''}`.trim()}`
      : '';
    lines.push(
      `| ${figure.what} | ${service} | ${compared} | ${figure.ratio === undefined || figure.ratio === null ? '' : `${figure.ratio}×`} | ${figure.target ?? ''} |`,
    );
  }
  if (report.cost.length > 0) {
    lines.push('', '| Per command (counted at the store ports) | Fresh entity | Long history | Ratio |', '|---|---|---|---|');
    for (const cost of report.cost) {
      lines.push(`| ${cost.what}: commands counted | ${cost.commands.fresh} | ${cost.commands.veteran} | |`);
      for (const field of ['rows_read', 'bytes_read', 'rows_written', 'bytes_written', 'calls'] as const) {
        lines.push(`| ${cost.what}: ${field.replace('_', ' ')} | ${number(cost.fresh[field])} | ${number(cost.veteran[field])} | ${cost.ratio[field]}× |`);
      }
      for (const [store, side] of Object.entries(cost.by_store)) {
        const cell = (counts: StoreCounts) =>
          `${number(counts.rows_read)} / ${number(counts.bytes_read)} B read, ${number(counts.rows_written)} / ${number(counts.bytes_written)} B written`;
        lines.push(
          `| ${cost.what}: ${store.replace('_', ' ')} only (rows / bytes) | ${cell(side.fresh)} | ${cell(side.veteran)} | ${side.ratio.bytes_read}× / ${side.ratio.bytes_written}× bytes |`,
        );
      }
    }
  }
  const machine = report.machine;
  lines.push(
    '',
    `${machine.cpus} CPUs, Node ${machine.node}, ${machine.platform}; load average at start ${machine.load_average_at_start.join(' ')}; ${report.started_at} – ${report.finished_at}.`,
  );
  return `${lines.join('\n')}\n`;
}
