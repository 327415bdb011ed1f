/**
 * npm run export-events -- [--after POS] [--stream-prefix P] [--type T[,T…]] [--since DATE]
 *                          [--format ndjson|csv] [--out FILE]
 *
 * Streams the event log, in commit order, to stdout or FILE: NDJSON (one event per line) or
 * CSV (RFC 4180, a header, data and metadata as JSON text). Each event has the fields of
 * `GET /admin/events`: position (a string), stream, revision, id, type, data, metadata,
 * recorded_at. The log is read page by page and each page is written before the next one is
 * read, waiting whenever the output asks to (backpressure), so memory stays flat however
 * long the log is. Progress (events written, events/s) goes to stderr; the last line says
 * the last position read, to continue later with `--after`.
 *
 * `--stream-prefix` and `--type` (one type or a comma-separated list) are filtered by the
 * event store; `--since` (recorded_at at or after DATE; a date, or a date-time, UTC unless it
 * has an offset) while reading, since commit order is not guaranteed to be time order.
 * `--format` defaults to csv for an `--out` ending in .csv. Exit codes: 0 (also when a reader
 * such as `head` closes the pipe early), 64 bad flags, 78 bad configuration, 1 failure.
 * Uses the service's configuration (DATA_DIR, or EVENTSTORE_URL + MONGODB_URL).
 *
 * To stdout, run it with `npm run -s export-events` (or `npx tsx scripts/export-events.ts`):
 * without `-s`, npm prints its own banner on stdout before the export.
 */
import { once } from 'node:events';
import fs from 'node:fs';
import type { Writable } from 'node:stream';
import cliProgress from 'cli-progress';
import { EXPORT_USAGE, type ExportOptions, ExportUsageError, parseExportOptions } from '../src/application/export/event-export-format.js';
import { exportEvents, OutputClosedError } from '../src/application/export/export-events.js';
import { openScriptContext, parseArgs } from './script-context.js';

async function main(): Promise<number> {
  let options: ExportOptions;
  try {
    options = parseExportOptions(parseArgs(process.argv.slice(2)));
  } catch (error) {
    if (!(error instanceof ExportUsageError)) throw error;
    process.stderr.write(`${error.message}\n${EXPORT_USAGE}\n`);
    return 64;
  }
  const context = await openScriptContext();
  const output: Writable = options.out === null ? process.stdout : fs.createWriteStream(options.out);
  const head = await context.backend.eventStore.headPosition();
  const start = options.after ?? 0n;
  const span = head !== null && head > start ? Number(head - start) : 0;
  const bar = new cliProgress.SingleBar(
    {
      format: 'export |{bar}| {percentage}% | {written} events written | {rate} events/s | position {position} | ETA {eta_formatted}',
      etaBuffer: 50,
      noTTYOutput: true,
      notTTYSchedule: 5_000,
    },
    cliProgress.Presets.shades_classic,
  );
  const started = Date.now();
  const rate = (written: number) => {
    const seconds = (Date.now() - started) / 1000;
    return seconds > 0 ? Math.round(written / seconds) : 0;
  };
  bar.start(Math.max(span, 1), 0, { written: 0, rate: 0, position: options.after?.toString() ?? '-' });
  try {
    const result = await exportEvents(context.backend.eventStore, options, output, ({ written, position }) => {
      const done = position === null ? 0 : Math.min(span, Number(position - start));
      bar.update(done, { written, rate: rate(written), position: position?.toString() ?? '-' });
    });
    bar.update(Math.max(span, 1), { written: result.written, rate: rate(result.written), position: result.position?.toString() ?? '-' });
    bar.stop();
    if (options.out !== null) {
      output.end();
      await once(output, 'finish');
    }
    const seconds = (Date.now() - started) / 1000;
    const last = result.position === null ? 'nothing read' : `last position read ${result.position} (continue later with --after ${result.position})`;
    process.stderr.write(
      `Exported ${result.written} events as ${options.format} to ${options.out ?? 'stdout'} in ${seconds.toFixed(1)} s ` +
        `(${rate(result.written)} events/s); ${last}.\n`,
    );
    return 0;
  } catch (error) {
    bar.stop();
    if (error instanceof OutputClosedError) {
      // A reader that stops early (`| head`) is not a failure of the export.
      if ((error.cause as NodeJS.ErrnoException).code === 'EPIPE') return 0;
      process.stderr.write(`export-events: ${error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    await context.backend.close();
  }
}

main().then(
  (code) => {
    // Let stdout flush before leaving (it may be a pipe the reader drains slowly).
    if (process.stdout.writableLength > 0 && !process.stdout.destroyed) process.stdout.once('drain', () => process.exit(code));
    else process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(`export-events failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
