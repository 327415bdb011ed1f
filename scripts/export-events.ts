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
 * such as `head` closes the pipe early), 1 failure, 2 usage error, 66 no database in DATA_DIR,
 * 78 bad configuration.
 * Uses the service's configuration (DATA_DIR, or EVENTSTORE_URL + MONGODB_URL).
 *
 * To stdout, run it with `npm run -s export-events` (or `npx tsx scripts/export-events.ts`):
 * without `-s`, npm prints its own banner on stdout before the export.
 */
import { once } from 'node:events';
import fs from 'node:fs';
import type { Writable } from 'node:stream';
import { type ExportOptions, ExportUsageError, parseExportOptions, preamble } from '../src/application/export/event-export-format.js';
import { exportEvents, OutputClosedError } from '../src/application/export/export-events.js';
import { defineCommand, EXIT, runScript, UsageError } from './cli/command-line.js';
import { createProgress } from './cli/progress.js';
import { openScriptContext } from './script-context.js';

const command = defineCommand({
  name: 'export-events',
  summary:
    'Streams the event log, in commit order, to stdout or a file: NDJSON (one event per line) or CSV (RFC 4180 with a header; ' +
    'data and metadata as JSON text). Each event has the fields of GET /admin/events. Progress goes to stderr; the last line ' +
    "names the last position read, to continue later with --after. Reads the service's store (DATA_DIR, or EVENTSTORE_URL + MONGODB_URL).",
  options: {
    after: { type: 'string', value: 'POS', description: 'Only events after this log position (exclusive)' },
    'stream-prefix': { type: 'string', value: 'PREFIX', description: 'Only streams starting with PREFIX (e.g. user-)' },
    type: { type: 'string', value: 'TYPE[,TYPE…]', description: 'Only these event types' },
    since: { type: 'string', value: 'DATE', description: 'Only events recorded at or after DATE (ISO 8601 date or date-time; UTC unless it has an offset)' },
    format: { type: 'string', value: 'ndjson|csv', description: 'Output format (default: csv for an --out ending in .csv, else ndjson)' },
    out: { type: 'string', value: 'FILE', description: 'Write to FILE instead of stdout' },
  },
  notes: [
    'To stdout, run it with `npm run -s` (without -s, npm prints its banner on stdout before the export).',
    'Exit codes: 0 done (also when a reader such as head closes the pipe early); 1 failed; 2 usage error; 66 no database in DATA_DIR; 78 bad configuration.',
  ],
  examples: [
    'npm run export-events -- --format ndjson --out events.ndjson',
    'npm run -s export-events -- --type RewardGranted | jq .data.reward_key',
    'npm run export-events -- --stream-prefix user- --type CodeClaimed --since 2026-01-01 --out claims.csv',
    'npm run export-events -- --after 120000 --out more.ndjson',
    'node dist/scripts/export-events.js --out /app/data/events.ndjson     # in the container image',
  ],
});

/** The command line as export options; a bad value is a usage error (exit 2). */
function exportOptions(argv: string[]): ExportOptions {
  const { positionals: _positionals, ...values } = command.parse(argv);
  const flags = new Map<string, string>(Object.entries(values).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
  try {
    return parseExportOptions(flags);
  } catch (error) {
    if (error instanceof ExportUsageError) throw new UsageError(error.message);
    throw error;
  }
}

/** The export holds the users' personal data in the clear: readable by the service's user alone, whatever the umask. */
const PRIVATE_FILE = 0o600;

function partialFile(out: string): string {
  return `${out}.partial-${process.pid}`;
}

/** Makes the written file durable, then gives it its name in one step. */
function syncAndRename(partial: string, out: string): void {
  const fd = fs.openSync(partial, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(partial, out);
}

function writeWhole(out: string, write: (file: string) => void): void {
  const partial = partialFile(out);
  write(partial);
  syncAndRename(partial, out);
}

async function main(): Promise<number> {
  const options = exportOptions(process.argv.slice(2));
  const context = await openScriptContext({ readsExistingStore: command.name });
  const head = await context.backend.eventStore.headPosition();
  if (options.after !== null && (head === null || options.after >= head)) {
    await context.backend.close();
    const end = head === null ? 'the log is empty' : `the last position is ${head}`;
    const what = head !== null && options.after === head ? 'is the end of the log' : 'is past the end of the log';
    process.stderr.write(`Nothing to export: --after ${options.after} ${what} (${end}).\n`);
    if (options.out !== null) writeWhole(options.out, (file) => fs.writeFileSync(file, preamble(options.format), { mode: PRIVATE_FILE }));
    return EXIT.OK;
  }
  // A file is written beside its name and renamed once whole: a killed or failed export leaves no
  // partial file under the name (nor empties an earlier export there).
  const partial = options.out === null ? null : partialFile(options.out);
  // Opened here, not when the stream gets to it, so a failure from the first read on finds the file to remove.
  const output: Writable = partial === null ? process.stdout : fs.createWriteStream('', { fd: fs.openSync(partial, 'w', PRIVATE_FILE) });
  const start = options.after ?? 0n;
  const span = head !== null && head > start ? Number(head - start) : 0;
  const progress = createProgress({
    label: 'export-events',
    total: span,
    format: 'export |{bar}| {percentage}% | {written} events written | {rate} events/s | position {position} | ETA {eta_formatted}',
    line: ({ written, rate, position }) => `${written} events written | ${rate} events/s | position ${position}`,
  });
  const started = performance.now();
  const rate = (written: number) => {
    const seconds = (performance.now() - started) / 1000;
    return seconds > 0 ? Math.round(written / seconds) : 0;
  };
  try {
    const result = await exportEvents(context.backend.eventStore, options, output, ({ written, position }) => {
      const done = position === null ? 0 : Math.min(span, Number(position - start));
      progress.update(done, { written, rate: rate(written), position: position?.toString() ?? '-' });
    });
    progress.stop();
    if (options.out !== null && partial !== null) {
      output.end();
      await once(output, 'finish');
      syncAndRename(partial, options.out);
    }
    const seconds = (performance.now() - started) / 1000;
    const last = result.position === null ? 'nothing read' : `last position read ${result.position} (continue later with --after ${result.position})`;
    process.stderr.write(
      `Exported ${result.written} events as ${options.format} to ${options.out ?? 'stdout'} in ${seconds.toFixed(3)} s ` +
        `(${rate(result.written)} events/s); ${last}.\n`,
    );
    return EXIT.OK;
  } catch (error) {
    progress.stop();
    if (partial !== null) {
      output.destroy();
      fs.rmSync(partial, { force: true });
    }
    if (error instanceof OutputClosedError) {
      // A reader that stops early (`| head`) is not a failure of the export.
      if ((error.cause as NodeJS.ErrnoException).code === 'EPIPE') return EXIT.OK;
      process.stderr.write(`export-events: ${error.message}\n`);
      return EXIT.FAILURE;
    }
    throw error;
  } finally {
    await context.backend.close();
  }
}

runScript(command, main);
