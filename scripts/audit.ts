/**
 * npm run audit — recomputes every user's credit balances from the event log and compares
 * them with each event's recorded balance, the users read model and the credit ledger.
 * Exits 1 when anything disagrees (listing the event ids involved), 0 otherwise.
 * Uses the service's configuration (DATA_DIR, or EVENTSTORE_URL + MONGODB_URL).
 */
import { auditCredits } from '../src/application/audit/credit-audit.js';
import { openScriptContext } from './script-context.js';

const CATCH_UP_MS = 30_000;

async function readModelsReach(context: Awaited<ReturnType<typeof openScriptContext>>, head: bigint | null): Promise<boolean> {
  if (head === null) return true;
  const deadline = Date.now() + CATCH_UP_MS;
  for (;;) {
    const checkpoints = await Promise.all(['users', 'credit_ledger'].map((name) => context.backend.readStore.checkpoint(name)));
    if (checkpoints.every((checkpoint) => checkpoint.position !== null && checkpoint.position >= head)) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function main(): Promise<number> {
  const context = await openScriptContext();
  try {
    const head = await context.backend.eventStore.headPosition();
    if (!(await readModelsReach(context, head))) {
      process.stderr.write('The read models are behind the log (is the projector running?). Start the service or run a replay, then audit again.\n');
      return 2;
    }
    const report = await auditCredits(context.log, context.backend.readStore, (events) => process.stderr.write(`\rread ${events} events`));
    process.stderr.write('\n');
    const totals = new Map<string, { users: number; events: number; read_model: number; ledger: number }>();
    for (const row of report.rows) {
      const total = totals.get(row.key) ?? { users: 0, events: 0, read_model: 0, ledger: 0 };
      total.users += 1;
      total.events += row.events;
      total.read_model += row.read_model ?? 0;
      total.ledger += row.ledger_sum;
      totals.set(row.key, total);
    }
    process.stdout.write(`Audited ${report.events} user events up to position ${report.head ?? '-'}: ${report.rows.length} balances.\n`);
    console.table([...totals].map(([key, total]) => ({ key, users: total.users, 'from events': total.events, 'read model': total.read_model, ledger: total.ledger })));
    if (report.mismatches.length === 0) {
      process.stdout.write('No mismatch: every balance agrees across events, read model and ledger.\n');
      return 0;
    }
    process.stdout.write(`${report.mismatches.length} MISMATCH(ES):\n`);
    console.table(report.mismatches.map((mismatch) => ({ ...mismatch, event_ids: mismatch.event_ids.join(' ') })));
    return 1;
  } finally {
    await context.backend.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`audit failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
