/**
 * npm run replay [-- --projection NAME[,NAME…]]
 *
 * Rebuilds one or all read models from position 0 into fresh collections, then switches
 * them in atomically; the service keeps serving the old ones meanwhile and picks up the new
 * ones by itself. Interrupted? Run it again: it resumes. Uses the service's configuration.
 */
import { allProjections } from '../projections/index.js';
import { DEFAULT_ACCOUNT_TOKEN_NAMESPACE } from '../src/config.js';
import { replayProjections } from '../src/application/projections/projection-replay.js';
import { defineCommand, EXIT, runScript } from './cli/command-line.js';
import { createProgress } from './cli/progress.js';
import { openScriptContext } from './script-context.js';

/** The read models' names (the same whatever the settings they are built with). */
const NAMES = allProjections({ accountTokenNamespace: DEFAULT_ACCOUNT_TOKEN_NAMESPACE }).map((projection) => projection.name);

const command = defineCommand({
  name: 'replay',
  summary:
    'Rebuilds read models from the event log: folds the log from position 0 into fresh collections while the service keeps serving ' +
    'the old ones, then switches them in atomically (the running service continues from there). Interrupted? Run it again: it resumes. ' +
    "Reads the service's store (DATA_DIR, or EVENTSTORE_URL + MONGODB_URL).",
  options: {
    projection: { type: 'string', value: 'NAME[,NAME…]', description: `Rebuild only these read models: ${NAMES.join(', ')} (default: all)` },
  },
  notes: ['Exit codes: 0 rebuilt; 1 failed; 2 usage error; 66 no database in DATA_DIR; 78 bad configuration.'],
  examples: [
    'npm run replay',
    'npm run replay -- --projection users',
    'npm run replay -- --projection users,codes',
    'node dist/scripts/replay.js --projection credit_ledger     # in the container image',
  ],
});

async function main(): Promise<number> {
  const { projection: only } = command.parse(process.argv.slice(2));
  const names = only === undefined ? NAMES : only.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !NAMES.includes(name));
  if (unknown.length > 0) command.fail(`unknown projection ${unknown.join(', ')}; known: ${NAMES.join(', ')}`);
  const context = await openScriptContext({ readsExistingStore: command.name });
  const selected = allProjections({ accountTokenNamespace: context.config.ACCOUNT_TOKEN_NAMESPACE }).filter((projection) => names.includes(projection.name));
  const progress = createProgress({
    label: 'replay',
    total: 100,
    format: 'replay |{bar}| {percentage}% | {events} events | {rate} events/s | ETA {eta_formatted}',
    line: ({ events, rate }) => `${events} events | ${rate} events/s`,
  });
  try {
    const started = performance.now();
    let first: bigint | null = null;
    const outcome = await replayProjections(context.log, context.backend.readStore, selected, {
      onSwitchFinished: (projection) => process.stdout.write(`${projection}: finished switching in the rebuild an interrupted run began\n`),
      onResume: (resumed) => {
        for (const { projection, after } of resumed) process.stdout.write(`${projection}: resuming an interrupted rebuild after position ${after}\n`);
      },
      onProgress: ({ position, head, events }) => {
        first ??= position;
        const span = head !== null && first !== null && head > first ? Number(head - first) : 0;
        const done = span > 0 && position !== null && first !== null ? Math.min(100, (100 * Number(position - first)) / span) : 100;
        const seconds = (performance.now() - started) / 1000;
        progress.update(Math.round(done), { events, rate: seconds > 0 ? Math.round(events / seconds) : 0 });
      },
    });
    progress.stop();
    const seconds = ((performance.now() - started) / 1000).toFixed(3);
    for (const projection of selected) process.stdout.write(`${projection.name}: ${outcome === 'switched' ? 'rebuilt and switched in' : 'interrupted'}\n`);
    process.stdout.write(`replayed in ${seconds} s\n`);
    return EXIT.OK;
  } finally {
    progress.stop();
    await context.backend.close();
  }
}

runScript(command, main);
