/**
 * Replay and export speed against the speed of reading the log, in one run on one database
 * (issue 10: replay ≥ 0.5×, export ≥ 0.8× a raw scan).
 *
 *   npx tsx scripts/bench/log-throughput.ts DATA_DIR [--json]
 *
 * DATA_DIR holds an embedded database (e.g. from `npm run generate-events`). The raw scan is
 * `SELECT … ORDER BY position` in pages with JSON.parse of data and metadata; export writes
 * NDJSON to /dev/null through the export engine; replay rebuilds every read model (on a copy of
 * the database, so DATA_DIR is left as it was). Prints events/s and the ratios.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { allProjections } from '../../projections/index.js';
import { openSqlite } from '../../src/adapters/sqlite/sqlite-database.js';
import { SqliteEventStore } from '../../src/adapters/sqlite/sqlite-event-store.js';
import { SqliteReadStore } from '../../src/adapters/sqlite/sqlite-read-store.js';
import { RandomIds } from '../../src/adapters/system/random-ids.js';
import { EventLog } from '../../src/application/event-log.js';
import { exportEvents } from '../../src/application/export/export-events.js';
import { replayProjections } from '../../src/application/projections/projection-replay.js';

export interface LogThroughput {
  events: number;
  raw_scan_events_per_s: number;
  export_events_per_s: number;
  replay_events_per_s: number;
  export_ratio: number;
  replay_ratio: number;
  replay_peak_rss_mb: number;
  /** The same ratios in CPU time of this process (less disturbed by other load on the machine). */
  export_ratio_cpu: number;
  replay_ratio_cpu: number;
}

function rawScan(file: string): number {
  const db = new Database(file, { readonly: true });
  const page = db.prepare<[number, number], { position: number; data: string; metadata: string }>(
    'SELECT position, id, stream, revision, type, data, metadata, recorded_at FROM events WHERE position > ? ORDER BY position LIMIT ?',
  );
  let after = 0;
  let count = 0;
  for (;;) {
    const rows = page.all(after, 1000);
    if (rows.length === 0) break;
    for (const row of rows) {
      JSON.parse(row.data);
      JSON.parse(row.metadata);
      count += 1;
    }
    after = rows[rows.length - 1]!.position;
  }
  db.close();
  return count;
}

/** CPU seconds (user + system) of this process: steadier than wall time on a shared machine. */
function cpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

const cpu: Record<string, number> = {};

function timed<T>(name: string, work: () => T): [T, number] {
  const [started, startedCpu] = [performance.now(), cpuSeconds()];
  const result = work();
  cpu[name] = cpuSeconds() - startedCpu;
  return [result, (performance.now() - started) / 1000];
}

async function timedAsync<T>(name: string, work: () => Promise<T>): Promise<[T, number]> {
  const [started, startedCpu] = [performance.now(), cpuSeconds()];
  const result = await work();
  cpu[name] = cpuSeconds() - startedCpu;
  return [result, (performance.now() - started) / 1000];
}

export async function measureLogThroughput(dataDir: string, rounds = 3): Promise<LogThroughput> {
  const file = path.join(dataDir, 'referrals.db');
  rawScan(file); // warm the page cache, so every reader finds the log in memory
  // Raw scan and export alternate, best of `rounds` each: a shared machine's noise hits both alike.
  let events = 0;
  let rawSeconds = Infinity;
  let exportSeconds = Infinity;
  const rawCpu: number[] = [];
  const exportCpu: number[] = [];
  const source = openSqlite(dataDir);
  for (let round = 0; round < rounds; round += 1) {
    const [count, raw] = timed('raw', () => rawScan(file));
    events = count;
    rawSeconds = Math.min(rawSeconds, raw);
    rawCpu.push(cpu.raw!);
    const sink = fs.createWriteStream('/dev/null');
    const [, exported] = await timedAsync('export', () =>
      exportEvents(new SqliteEventStore(source), { after: null, streamPrefix: null, types: [], since: null, format: 'ndjson', out: null }, sink),
    );
    sink.end();
    exportSeconds = Math.min(exportSeconds, exported);
    exportCpu.push(cpu.export!);
  }
  source.close();
  cpu.raw = Math.min(...rawCpu);
  cpu.export = Math.min(...exportCpu);

  const copyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'replay-bench-'));
  const db = new Database(file, { readonly: true });
  await db.backup(path.join(copyDir, 'referrals.db'));
  db.close();
  const copy = openSqlite(copyDir);
  let peak = process.memoryUsage().rss;
  const store = new SqliteEventStore(copy);
  const [, replaySeconds] = await timedAsync('replay', () =>
    replayProjections(new EventLog(store, new RandomIds()), new SqliteReadStore(copy), allProjections, {
      onProgress: () => {
        peak = Math.max(peak, process.memoryUsage().rss);
      },
    }),
  );
  copy.close();
  fs.rmSync(copyDir, { recursive: true, force: true });

  const rate = (seconds: number) => Math.round(events / seconds);
  return {
    events,
    raw_scan_events_per_s: rate(rawSeconds),
    export_events_per_s: rate(exportSeconds),
    replay_events_per_s: rate(replaySeconds),
    export_ratio: Number((rawSeconds / exportSeconds).toFixed(2)),
    replay_ratio: Number((rawSeconds / replaySeconds).toFixed(2)),
    replay_peak_rss_mb: Math.round(peak / 1_048_576),
    export_ratio_cpu: Number((cpu.raw! / cpu.export!).toFixed(2)),
    replay_ratio_cpu: Number((cpu.raw! / cpu.replay!).toFixed(2)),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [dataDir, flag] = process.argv.slice(2);
  if (!dataDir) {
    process.stderr.write('Usage: npx tsx scripts/bench/log-throughput.ts DATA_DIR [--json]\n');
    process.exit(64);
  }
  const result = await measureLogThroughput(dataDir);
  if (flag === '--json') process.stdout.write(`${JSON.stringify(result)}\n`);
  else console.table([result]);
}
