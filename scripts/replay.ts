/**
 * npm run replay [-- --projection NAME]
 *
 * Rebuilds one or all read models from position 0 into fresh collections, then switches
 * them in atomically; the service keeps serving the old ones meanwhile and picks up the new
 * ones by itself. Interrupted? Run it again: it resumes. Uses the service's configuration.
 */
import cliProgress from 'cli-progress';
import { allProjections } from '../projections/index.js';
import { replayProjections } from '../src/application/projections/projection-replay.js';
import { openScriptContext, parseArgs } from './script-context.js';

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const only = args.get('projection');
  const selected = typeof only === 'string' ? allProjections.filter((projection) => projection.name === only) : allProjections;
  if (selected.length === 0) {
    process.stderr.write(`Unknown projection ${String(only)}; known: ${allProjections.map((projection) => projection.name).join(', ')}\n`);
    return 2;
  }
  const context = await openScriptContext();
  const bar = new cliProgress.SingleBar(
    { format: 'replay |{bar}| {percentage}% | {events} events | {rate} events/s | ETA {eta_formatted}', etaBuffer: 50, noTTYOutput: true, notTTYSchedule: 5_000 },
    cliProgress.Presets.shades_classic,
  );
  try {
    const started = Date.now();
    let first: bigint | null = null;
    bar.start(100, 0, { events: 0, rate: 0 });
    const outcome = await replayProjections(context.log, context.backend.readStore, selected, {
      onProgress: ({ position, head, events }) => {
        first ??= position;
        const span = head !== null && first !== null && head > first ? Number(head - first) : 0;
        const done = span > 0 && position !== null && first !== null ? Math.min(100, (100 * Number(position - first)) / span) : 100;
        const seconds = (Date.now() - started) / 1000;
        bar.update(Math.round(done), { events, rate: seconds > 0 ? Math.round(events / seconds) : 0 });
      },
    });
    bar.update(100);
    bar.stop();
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    for (const projection of selected) process.stdout.write(`${projection.name}: ${outcome === 'switched' ? 'rebuilt and switched in' : 'interrupted'}\n`);
    process.stdout.write(`replayed in ${seconds} s\n`);
    return 0;
  } finally {
    bar.stop();
    await context.backend.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`replay failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
