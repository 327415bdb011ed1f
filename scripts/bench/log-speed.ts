/**
 * Reading the whole log: replay (`npm run replay`) and export (`npm run export-events`) of a
 * generated log, each in its own process as an operator runs them, against a raw scan of the
 * same log in the same run (`SELECT … ORDER BY position` and JSON.parse of data and metadata).
 * Each is timed by its own clock around the reading of the log, as the raw scan is: the
 * scripts say how long their work took ("replayed in 5.623 s", "Exported … in 0.481 s"), so the
 * start of a Node process (loading, compiling: about a second, and noisy) is not counted, nor
 * subtracted as an estimate. Each is the better of two runs, as the raw scan is.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { peakRss, ROOT } from './processes.js';

export interface LogSpeed {
  events: number;
  generate_events_per_s: number;
  raw_scan_events_per_s: number;
  replay_events_per_s: number;
  replay_peak_rss_mb: number | null;
  export_events_per_s: number;
  export_peak_rss_mb: number | null;
}

interface ScriptRun {
  seconds: number;
  peakRss: number | null;
  stdout: string;
  stderr: string;
}

/** The Node options `npm run NAME` gives its script (package.json), e.g. replay's heap bounds. */
function nodeOptionsOf(name: string): string[] {
  const scripts = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  return (scripts[name] ?? '').split(/\s+/).filter((word) => /^--max-[a-z-]+-size=\d+$/.test(word));
}

/**
 * Runs `scripts/NAME.ts` on a data directory with the Node options `npm run NAME` uses; wall
 * time and peak memory of its process (node itself, not an npm wrapper).
 */
function runScript(name: string, dataDir: string, args: string[] = []): Promise<ScriptRun> {
  const started = performance.now();
  const child = spawn(process.execPath, [...nodeOptionsOf(name), '--import', 'tsx', `scripts/${name}.ts`, ...args], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, NODE_ENV: 'development', LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let peak: number | null = null;
  const sample = () => {
    const rss = peakRss(child.pid!);
    if (rss !== null) peak = Math.max(peak ?? 0, rss);
  };
  const timer = setInterval(sample, 50);
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => {
      clearInterval(timer);
      const seconds = (performance.now() - started) / 1000;
      if (code !== 0) reject(new Error(`${name} exited with ${code}: ${stderr.slice(-2000)}`));
      else resolve({ seconds, peakRss: peak, stdout, stderr });
    });
  });
}

/** The seconds a script reports for its own work (`pattern` captures them). */
function reportedSeconds(name: string, text: string, pattern: RegExp): number {
  const match = pattern.exec(text);
  if (!match) throw new Error(`${name} did not report how long it took: ${text.slice(-500)}`);
  return Number(match[1]);
}

function rawScan(dataDir: string): { events: number; seconds: number } {
  const db = new Database(path.join(dataDir, 'referrals.db'), { readonly: true });
  try {
    const started = performance.now();
    let events = 0;
    const rows = db.prepare<[], { data: string; metadata: string }>(
      'SELECT position, id, stream, revision, type, data, metadata, recorded_at FROM events ORDER BY position',
    );
    for (const row of rows.iterate()) {
      JSON.parse(row.data);
      JSON.parse(row.metadata);
      events += 1;
    }
    return { events, seconds: (performance.now() - started) / 1000 };
  } finally {
    db.close();
  }
}

const mb = (bytes: number | null) => (bytes === null ? null : Math.round(bytes / 1024 / 1024));
/** One `npm run replay` of the whole log: the seconds it reports, and its peak RSS. */
async function replayOnce(dataDir: string): Promise<{ seconds: number; peakRss: number | null }> {
  const run = await runScript('replay', dataDir);
  if (run.stdout.includes('interrupted')) throw new Error(`replay did not finish: ${run.stdout.slice(-500)}`);
  return { seconds: reportedSeconds('replay', run.stdout, /replayed in ([\d.]+) s/), peakRss: run.peakRss };
}

/** One `npm run export-events` of the whole log to an NDJSON file: the seconds it reports, and its peak RSS. */
async function exportOnce(dataDir: string): Promise<{ seconds: number; peakRss: number | null }> {
  const run = await runScript('export-events', dataDir, ['--out', path.join(dataDir, 'export.ndjson')]);
  return { seconds: reportedSeconds('export-events', run.stderr, /Exported \d+ events .* in ([\d.]+) s /), peakRss: run.peakRss };
}

const rate = (events: number, seconds: number) => Math.round(events / Math.max(seconds, 0.001));

export async function measureLogSpeed(events: number, progress: (message: string) => void): Promise<LogSpeed> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'referrals-bench-log-'));
  try {
    progress(`generating ${events} events (npm run generate-events)…`);
    const generated = await runScript('generate-events', dataDir, ['--events', String(events), '--seed', '1']);
    const scan = rawScan(dataDir);
    progress(`  ${scan.events} events; raw scan ${rate(scan.events, scan.seconds)} events/s; replaying (npm run replay)…`);
    // Each is the better of two runs, as the raw scan is: a second replay rebuilds the same
    // read models again from the same log.
    const replays = [await replayOnce(dataDir), await replayOnce(dataDir)];
    progress('  exporting (npm run export-events, NDJSON)…');
    const exports = [await exportOnce(dataDir), await exportOnce(dataDir)];
    const scanAgain = rawScan(dataDir);
    const scanSeconds = Math.min(scan.seconds, scanAgain.seconds);
    const replay = replays.reduce((best, run) => (run.seconds < best.seconds ? run : best));
    const exported = exports.reduce((best, run) => (run.seconds < best.seconds ? run : best));
    return {
      events: scan.events,
      generate_events_per_s: rate(scan.events, generated.seconds),
      raw_scan_events_per_s: rate(scan.events, scanSeconds),
      replay_events_per_s: rate(scan.events, replay.seconds),
      replay_peak_rss_mb: mb(Math.max(...replays.map((run) => run.peakRss ?? 0)) || null),
      export_events_per_s: rate(scan.events, exported.seconds),
      export_peak_rss_mb: mb(Math.max(...exports.map((run) => run.peakRss ?? 0)) || null),
    };
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
