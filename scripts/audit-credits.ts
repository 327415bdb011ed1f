/**
 * npm run audit-credits — recomputes every user's credit balances from the event log and
 * compares them with each event's recorded balance, the users read model and the credit ledger.
 * Exits 1 when anything disagrees (listing the event ids involved), 0 otherwise.
 * Uses the service's configuration (DATA_DIR, or EVENTSTORE_URL + MONGODB_URL).
 */
import { creditLedgerProjection } from '../projections/credit-ledger.js';
import { REWARD_EXPIRIES, rewardExpiriesProjection } from '../projections/reward-expiries.js';
import { usersProjection } from '../projections/users.js';
import { auditCredits } from '../src/application/audit/credit-audit.js';
import { needsReplay, storedVersionOf } from '../src/application/projections/replay-gate.js';
import { diskIsFull } from '../src/private-files.js';
import { defineCommand, EXIT, runScript } from './cli/command-line.js';
import { formatTable } from './cli/table.js';
import { openScriptContext, type ScriptContext } from './script-context.js';

const command = defineCommand({
  name: 'audit-credits',
  summary:
    'Recomputes every credit balance from the event log and compares it with the balance_after of each event, ' +
    'the users read model and the credit ledger. Prints a table per reward key and every mismatch with the event ids involved. ' +
    "Reads the service's store (DATA_DIR, or EVENTSTORE_URL + MONGODB_URL); the service may keep running.",
  options: {
    'catch-up-timeout': { type: 'string', value: 'SECONDS', description: 'How long to wait for the read models to reach the end of the log', default: '30' },
  },
  notes: [
    'Exit codes: 0 every balance agrees; 1 mismatches found (or the audit failed); 2 usage error; ' +
      '66 no database in DATA_DIR; 75 the read models are behind the log, or were built by another version (start the service or run a replay, then audit again); 78 bad configuration.',
  ],
  examples: ['npm run audit-credits', 'DATA_DIR=/srv/referrals/data npm run audit-credits', 'node dist/scripts/audit-credits.js     # in the container image'],
});

/** The read models the audit compares with the log. */
const AUDITED = [usersProjection, creditLedgerProjection, rewardExpiriesProjection];

/** The audited read models built by another version of their projection (after an upgrade, before `npm run replay`). */
async function builtByAnotherVersion(context: ScriptContext): Promise<string[]> {
  const stale: string[] = [];
  for (const projection of AUDITED) {
    const checkpoint = await context.backend.readStore.checkpoint(projection.name);
    if (needsReplay({ version: projection.version, storedVersion: storedVersionOf(checkpoint, projection) })) stale.push(projection.name);
  }
  return stale;
}

async function readModelsReach(context: ScriptContext, head: bigint | null, timeoutMs: number): Promise<boolean> {
  if (head === null) return true;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const checkpoints = await Promise.all(AUDITED.map((projection) => context.backend.readStore.checkpoint(projection.name)));
    if (checkpoints.every((checkpoint) => checkpoint.position !== null && checkpoint.position >= head)) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Counts at most this many lapsed entries before saying "over". */
const LAPSED_COUNTED = 1_000;
/** Names at most this many of them, the earliest expired first. */
const LAPSED_NAMED = 20;

/**
 * Entries past their `expires_at` whose expiry no event records yet: the balances audited from
 * the log still count them, while `GET /users/{id}` already leaves them out. Said, and the first
 * of them named (user, entry, expiry), so the auditor knows why those figures differ until the
 * sweep records them.
 */
async function reportUnrecordedExpiries(context: ScriptContext): Promise<void> {
  const lapsed = await context.backend.readStore.find<{ app_user_id: string; grant_id: string; expires_at: string }>(REWARD_EXPIRIES, {
    atMost: { field: 'expires_at', value: new Date().toISOString() },
    orderBy: { field: 'expires_at', direction: 'asc' },
    limit: LAPSED_COUNTED + 1,
  });
  if (lapsed.length === 0) return;
  const over = lapsed.length > LAPSED_COUNTED ? 'over ' : '';
  const counted = Math.min(lapsed.length, LAPSED_COUNTED);
  const count = over ? `Over ${LAPSED_COUNTED}` : String(counted);
  const named = lapsed.slice(0, LAPSED_NAMED).map((entry) => `  user ${entry.app_user_id}, entry ${entry.grant_id}, expired at ${entry.expires_at}\n`);
  const more = counted > LAPSED_NAMED ? `  … and ${over}${counted - LAPSED_NAMED} more\n` : '';
  process.stdout.write(
    `${count} reward entries passed their expiry and no event records it yet: the balances above still count their credits (if they hold any), ` +
      "GET /users/{id} already does not. The service's sweep (every SWEEP_INTERVAL_S) records them, and so does a read of the user's credit ledger.\n" +
      `${named.join('')}${more}\n`,
  );
}

/** Whether the embedded store's disk has less than a megabyte left (the projector then cannot write). */
function diskFull(context: ScriptContext): boolean {
  return context.backend.name === 'embedded' && diskIsFull(context.config.DATA_DIR);
}

async function main(): Promise<number> {
  const options = command.parse(process.argv.slice(2));
  const timeout = Number(options['catch-up-timeout']);
  if (!Number.isFinite(timeout) || timeout < 0) command.fail(`--catch-up-timeout must be a number of seconds, got ${options['catch-up-timeout']}`);
  const context = await openScriptContext({ readsExistingStore: command.name });
  try {
    const stale = await builtByAnotherVersion(context);
    if (stale.length > 0) {
      process.stderr.write(`The read models ${stale.join(', ')} were built by another version of the service: run \`npm run replay\`, then audit again.\n`);
      return EXIT.TEMPORARY;
    }
    const head = await context.backend.eventStore.headPosition();
    if (!(await readModelsReach(context, head, timeout * 1000))) {
      const cause = diskFull(context)
        ? `the disk holding ${context.config.DATA_DIR} is full, so the projector cannot write: free some space`
        : 'is the projector running?';
      process.stderr.write(`The read models are behind the log (${cause}). Start the service or run a replay, then audit again.\n`);
      return EXIT.TEMPORARY;
    }
    const onTerminal = process.stderr.isTTY === true;
    const report = await auditCredits(context.log, context.backend.readStore, (events) => {
      if (onTerminal) process.stderr.write(`\rread ${events} events`);
    });
    if (onTerminal) process.stderr.write('\n');
    const totals = new Map<string, { users: number; events: number; read_model: number; ledger: number }>();
    for (const row of report.rows) {
      const total = totals.get(row.key) ?? { users: 0, events: 0, read_model: 0, ledger: 0 };
      total.users += 1;
      total.events += row.events;
      total.read_model += row.read_model ?? 0;
      total.ledger += row.ledger_sum;
      totals.set(row.key, total);
    }
    process.stdout.write(`Audited ${report.events} user events up to position ${report.head ?? '-'}: ${report.rows.length} balances.\n\n`);
    if (totals.size > 0) {
      process.stdout.write(
        formatTable(
          ['reward key', 'users', 'balance from events', 'balance in read model', 'balance in ledger'],
          [...totals].map(([key, total]) => [key, total.users, total.events, total.read_model, total.ledger]),
        ),
      );
      process.stdout.write('\n');
    }
    await reportUnrecordedExpiries(context);
    if (report.mismatches.length === 0) {
      process.stdout.write('No mismatch: every balance agrees across events, read model and ledger.\n');
      return EXIT.OK;
    }
    process.stdout.write(`${report.mismatches.length} MISMATCH(ES):\n`);
    process.stdout.write(
      formatTable(
        ['user', 'reward key', 'check', 'expected', 'actual', 'event ids'],
        report.mismatches.map((mismatch) => [
          mismatch.app_user_id,
          mismatch.key,
          mismatch.check,
          mismatch.expected,
          mismatch.actual ?? '-',
          mismatch.event_ids.join(' '),
        ]),
      ),
    );
    return EXIT.FAILURE;
  } finally {
    await context.backend.close();
  }
}

runScript(command, main);
