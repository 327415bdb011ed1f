/**
 * npm run generate-events -- --events 1000000 [--users N] [--days D] [--seed S]   (--help)
 *
 * Appends a realistic synthetic history to the configured store (DATA_DIR, or
 * EVENTSTORE_URL + MONGODB_URL), to benchmark replay and export on a large log:
 *
 * - configuration (once per store, reused by later runs): rewards `gen-credits`,
 *   `gen-premium-week`, `gen-welcome-credits`, `gen-goodwill-credits`; program `gen-friends`
 *   (100% of users); promo codes GEN-WELCOME and GEN-LAUNCH (limit 500); three affiliates;
 * - `--users` users (default events / 9) registering over the last `--days` days (default 180)
 *   and, in simulated time order, claiming referral, promo and affiliate codes, converting,
 *   churning, updating their profile, withdrawing credits, receiving goodwill grants and having
 *   expired rewards swept — until `--events` events are written (a run ends after the action
 *   that reaches the count, so it may write a few more).
 *
 * Every event is what the service itself would have written: the same pure deciders decide
 * it, `EventLog` checks it against its schema, and each append names the stream's exact
 * expected revision. One append is one request or process step (its own correlation id and
 * actor), carrying all the events that step writes to one stream at once. The referrer's side
 * of a referral (counts and sender rewards) is written as the referral reaction writes it
 * (same deterministic ids, `cause_position` of the claimer's event), so the service's reaction
 * runner later finds nothing left to do. Times inside events (`registered_at`, `claimed_at`, …)
 * are simulated; `recorded_at` is the real time of the append.
 *
 * The store must hold no referral program other than `gen-friends` (the program covers 100% of
 * users), so use a fresh DATA_DIR, or one this script generated into before. User ids carry a
 * per-run tag (`gen-<tag>-<n>`), so later runs add users. Pooled rewards (offer codes) are not
 * generated. Read models are built by the service (or `npm run replay`) afterwards.
 */
import { randomBytes } from 'node:crypto';
import { openSqlite } from '../src/adapters/sqlite/sqlite-database.js';
import { openKeyConnection } from '../src/backends/embedded.js';
import { RandomIds } from '../src/adapters/system/random-ids.js';
import { EventLog } from '../src/application/event-log.js';
import { PersonalDataCipher } from '../src/application/privacy/personal-data-cipher.js';
import { PersonalDataEventStore } from '../src/application/privacy/personal-data-event-store.js';
import { createProgress } from './cli/progress.js';
import { defineCommand, runScript, UsageError } from './cli/command-line.js';
import { openScriptContext } from './script-context.js';
import { BulkAppender } from './generate/bulk-appender.js';
import { BulkKeyStore } from './generate/bulk-key-store.js';
import { CommitGroups, sqliteMember } from './generate/commit-groups.js';
import { UsageError as StoreUsageError } from './generate/generated-catalog.js';
import { Generator, type GeneratorOptions } from './generate/generator.js';

const command = defineCommand({
  name: 'generate-events',
  summary:
    'Appends a realistic synthetic history of about --events events to the configured store (DATA_DIR, or EVENTSTORE_URL + MONGODB_URL). ' +
    'Build the read models afterwards with npm start or npm run replay.',
  options: {
    events: { type: 'string', value: 'N', description: 'Events to write (required; the last action may add a few more)' },
    users: { type: 'string', value: 'N', description: 'Users registering over the period (default: events / 9)' },
    days: { type: 'string', value: 'D', description: 'Length of the simulated period, ending now', default: '180' },
    seed: { type: 'string', value: 'S', description: 'Seed of the simulation, to repeat a history (default: random)' },
  },
  notes: ['Exit codes: 0 done, 1 failure, 2 bad options or a store generated for another configuration, 78 bad configuration, 130 interrupted.'],
  examples: ['DATA_DIR=./data-1m npm run generate-events -- --events 1000000', 'DATA_DIR=./data npm run generate-events -- --events 50000 --days 30 --seed 7'],
});

function positiveInt(value: string | undefined, name: string, fallback: number | null): number {
  if (value === undefined) {
    if (fallback === null) throw new UsageError(`--${name} is required`);
    return fallback;
  }
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`--${name} must be a positive integer`);
  return Number(value);
}

function parseOptions(argv: string[]): GeneratorOptions {
  const values = command.parse(argv);
  const events = positiveInt(values.events, 'events', null);
  return {
    events,
    users: positiveInt(values.users, 'users', Math.max(10, Math.round(events / 9))),
    days: positiveInt(values.days, 'days', 180),
    seed: positiveInt(values.seed, 'seed', randomBytes(4).readUInt32BE(0) || 1),
  };
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const context = await openScriptContext();
  // Embedded: its own connections, the only writer while it runs: appends and new data keys
  // share commits (see CommitGroups) and go straight into the tables, the events from a thread
  // of their own (see BulkAppender); this connection only reads.
  const db = context.backend.name === 'embedded' ? openSqlite(context.config.DATA_DIR) : null;
  // Personal fields sealed under each user's data key, as the service stores them (SPEC §13): a
  // generated store is erased, exported and replayed as one the service wrote would be.
  const keyDb = db === null ? null : openKeyConnection(context.config.DATA_DIR);
  const keyStore = keyDb === null ? null : new BulkKeyStore(keyDb);
  const appender = db === null ? null : new BulkAppender(db);
  const log =
    appender === null || keyStore === null
      ? context.log
      : new EventLog(new PersonalDataEventStore(appender, new PersonalDataCipher(keyStore)), new RandomIds());
  const started = Date.now();
  // A bar on a terminal; elsewhere a plain line every few seconds once there is progress (as replay and export).
  const bar = createProgress({
    label: 'generate',
    total: options.events,
    format: 'generate |{bar}| {percentage}% | {value}/{total} events | {users} users | {rate} events/s | ETA {eta_formatted}',
    line: ({ events, users, rate }) => `${events}/${options.events} events | ${users} users | ${rate} events/s`,
  });
  const rate = (written: number) => Math.round(written / Math.max(0.001, (Date.now() - started) / 1000));
  const generator = new Generator(
    log,
    new RandomIds(),
    options,
    context.config.CLAIM_WINDOW_DAYS,
    // A commit every 5 s: on a long log each commit rewrites the index pages its appends
    // touched, so longer groups share them (commit work per event at 1M: ~12 µs at 1 s, ~5 µs at
    // 5 s). A crash loses at most the open group; the log stays consistent.
    new CommitGroups(appender === null || keyDb === null ? null : { dataKeys: sqliteMember(keyDb), events: appender }, 5_000),
    (summary) => bar.update(Math.min(summary.written, options.events), { events: summary.written, users: summary.users, rate: rate(summary.written) }),
  );
  process.once('SIGINT', () => {
    generator.stopRequested = true;
  });
  try {
    await generator.setUp();
    const summary = await generator.generate();
    bar.update(Math.min(summary.written, options.events), { events: summary.written, users: summary.users, rate: rate(summary.written) });
    bar.stop();
    const seconds = (Date.now() - started) / 1000;
    process.stdout.write(
      `Generated ${summary.written} events in ${seconds.toFixed(1)} s (${rate(summary.written)} events/s): ` +
        `${summary.users} users (gen-${summary.runTag}-*), ${summary.claims} claims, ${summary.conversions} conversions, ` +
        `${summary.withdrawals} withdrawals over ${options.days} days (seed ${options.seed})` +
        `${generator.stopRequested ? '; interrupted (Ctrl-C): what was written is kept, a second run adds to it' : summary.users < options.users ? `; the count was reached before all ${options.users} users registered` : ''}` +
        `${summary.topUps > 0 ? `; ${summary.topUps} extra profile updates at the end to reach the count` : ''}.\n` +
        'Start the service (or npm run replay) to build the read models; npm run audit-credits checks every credit balance.\n',
    );
    return generator.stopRequested ? 130 : 0;
  } catch (error) {
    bar.stop();
    if (!(error instanceof StoreUsageError)) throw error;
    process.stderr.write(`${error.message}\n`);
    return 2;
  } finally {
    await appender?.close();
    await keyStore?.close();
    db?.close();
    await context.backend.close();
  }
}

runScript(command, main);
