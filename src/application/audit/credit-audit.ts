import { CREDIT_LEDGER } from '../../../projections/credit-ledger.js';
import { type RewardEntryDoc, USER_REWARDS } from '../../../projections/users.js';
import type { ReadStore } from '../../ports/read-store.js';
import type { EventLog, LoggedEvent } from '../event-log.js';
import { appUserIdOf, streams } from '../../domain/events/index.js';

interface AuditRow {
  app_user_id: string;
  key: string;
  /** Balance recomputed by folding the user's events. */
  events: number;
  /** Balance in the users read model. */
  read_model: number | null;
  /** balance_after of the last ledger row, and the sum of the ledger's deltas. */
  ledger_last: number | null;
  ledger_sum: number;
}

interface Mismatch {
  app_user_id: string;
  key: string;
  /**
   * `ledger_running`: a ledger row whose balance_after is not the sum of the deltas up to it (the row's event is named).
   * `event_amounts`: an event whose own figures disagree (eventAmounts), the event named.
   */
  check: 'read_model' | 'ledger_last' | 'ledger_sum' | 'ledger_running' | 'event_balance_after' | 'event_amounts';
  expected: number;
  actual: number | null;
  event_ids: string[];
}

export interface AuditReport {
  head: string | null;
  events: number;
  rows: AuditRow[];
  mismatches: Mismatch[];
}

const PAGE = 1_000;

/**
 * One user's credits, recomputed from its events alone (independently of the projections):
 * the credit entries whose expiry is not recorded, and every credit key it ever received.
 */
class CreditBook {
  readonly keys = new Set<string>();
  private readonly entries = new Map<string, { key: string; credits: number }>();

  apply(event: LoggedEvent): void {
    switch (event.type) {
      case 'RewardGranted': {
        if (event.data.kind !== 'credit') return;
        this.keys.add(event.data.reward_key);
        // A grant opens an entry, or adds its credits to the entry it names (SPEC §5.3).
        const entry = this.entries.get(event.data.entry_id);
        if (entry && event.data.entry_id !== event.data.grant_id) entry.credits += event.data.credits ?? 0;
        else this.entries.set(event.data.entry_id, { key: event.data.reward_key, credits: event.data.credits ?? 0 });
        return;
      }
      case 'CreditsWithdrawn':
      // A clawback (SPEC §11) debits what was unspent; its shortfall moves no credits.
      case 'RewardRevoked':
        for (const debit of event.data.debits) {
          const entry = this.entries.get(debit.grant_id);
          if (entry) entry.credits -= debit.credits;
        }
        return;
      case 'RewardExpired':
        this.entries.delete(event.data.grant_id);
        return;
      default:
        return;
    }
  }

  /** Credits left in one entry (0 when it is unknown or its expiry is recorded). */
  entryCredits(entryId: string): number {
    return this.entries.get(entryId)?.credits ?? 0;
  }

  /** Credits of `key` in entries whose expiry is not recorded: the ledger's running balance. */
  balance(key: string): number {
    let sum = 0;
    for (const entry of this.entries.values()) if (entry.key === key) sum += entry.credits;
    return sum;
  }
}

/** The balance of `key` the users read model shows, counting entries whose expiry is not recorded. */
async function readModelBalances(readStore: ReadStore, appUserId: string): Promise<Map<string, number>> {
  const rows = await readStore.find<RewardEntryDoc>(USER_REWARDS, { where: { app_user_id: appUserId, expired: false } });
  const balances = new Map<string, number>();
  for (const row of rows) if (row.kind === 'credit') balances.set(row.reward_key, (balances.get(row.reward_key) ?? 0) + (row.credits ?? 0));
  return balances;
}

/** The balance an event says it left, for events that move credits. */
function recordedBalance(event: LoggedEvent): { key: string; balance: number } | null {
  if (event.type === 'CreditsWithdrawn') return { key: event.data.key, balance: event.data.credits_available_at_end };
  if ((event.type === 'RewardGranted' || event.type === 'RewardExpired' || event.type === 'RewardRevoked') && event.data.kind === 'credit') {
    return { key: event.data.reward_key, balance: event.data.balance_after ?? 0 };
  }
  return null;
}

const sumOf = (debits: { credits: number }[]) => debits.reduce((sum, debit) => sum + debit.credits, 0);

/**
 * An event whose own figures disagree, with what the rest of it and the events before it
 * (`book`, before this event) say the figure should be: a withdrawal's `credits_withdrawn` is the
 * sum of its debits and its `credits_available_at_start` the balance before it; a clawback's
 * debits and shortfall add up to the credits granted; an expiry forfeits what its entry held.
 * The API's answer, the webhook and the ledger show these figures, the balances only the debits.
 */
function eventAmounts(event: LoggedEvent, book: CreditBook): { expected: number; actual: number | null } | null {
  switch (event.type) {
    case 'CreditsWithdrawn': {
      const { data } = event;
      if (data.credits_withdrawn !== sumOf(data.debits)) return { expected: sumOf(data.debits), actual: data.credits_withdrawn };
      const before = book.balance(data.key);
      return data.credits_available_at_start === before ? null : { expected: before, actual: data.credits_available_at_start };
    }
    case 'RewardRevoked': {
      const { data } = event;
      if (data.kind !== 'credit') return null;
      const accounted = sumOf(data.debits) + (data.shortfall ?? 0);
      return data.credits_granted === accounted ? null : { expected: accounted, actual: data.credits_granted };
    }
    case 'RewardExpired': {
      const { data } = event;
      if (data.kind !== 'credit') return null;
      const held = book.entryCredits(data.grant_id);
      return (data.credits_forfeited ?? 0) === held ? null : { expected: held, actual: data.credits_forfeited };
    }
    default:
      return null;
  }
}

/** The read models the audit compares with: a user's entries and its ledger are read from these. */
const AUDITED_READ_MODELS = ['users', 'credit_ledger'];

/** How often a user whose balances disagree is compared again, at a moment its stream stood still. */
const RECHECKS = 5;

/** Where the audited read models stand: the lowest and the highest of their checkpoints (null: one has none yet). */
async function checkpoints(readStore: ReadStore): Promise<{ low: bigint; high: bigint } | null> {
  const positions = (await Promise.all(AUDITED_READ_MODELS.map((name) => readStore.checkpoint(name)))).map((checkpoint) => checkpoint.position);
  if (positions.some((position) => position === null)) return null;
  const known = positions as bigint[];
  return { low: known.reduce((a, b) => (b < a ? b : a)), high: known.reduce((a, b) => (b > a ? b : a)) };
}

interface StoredCredits {
  /** Balance per key in the users read model (entries whose expiry is not recorded). */
  readModel: Map<string, number>;
  ledger: { key: string; delta: number; balance_after: number; event_id: string }[];
}

/** What the read models hold of one user's credits. */
async function storedCredits(readStore: ReadStore, appUserId: string): Promise<StoredCredits> {
  const [readModel, ledger] = await Promise.all([
    readModelBalances(readStore, appUserId),
    readStore.find<StoredCredits['ledger'][number]>(CREDIT_LEDGER, { where: { app_user_id: appUserId }, orderBy: { field: 'seq', direction: 'asc' } }),
  ]);
  return { readModel, ledger };
}

/** One user's balances from its events (`book`) against what the read models hold of them. */
function compareUser(
  appUserId: string,
  book: CreditBook,
  lastEvent: ReadonlyMap<string, string>,
  stored: StoredCredits,
): { rows: AuditRow[]; mismatches: Mismatch[] } {
  const rows: AuditRow[] = [];
  const mismatches: Mismatch[] = [];
  for (const key of book.keys) {
    const rowsOfKey = stored.ledger.filter((row) => row.key === key);
    const row: AuditRow = {
      app_user_id: appUserId,
      key,
      events: book.balance(key),
      read_model: stored.readModel.get(key) ?? 0,
      ledger_last: rowsOfKey.length > 0 ? rowsOfKey[rowsOfKey.length - 1]!.balance_after : null,
      ledger_sum: rowsOfKey.reduce((sum, entry) => sum + entry.delta, 0),
    };
    rows.push(row);
    const eventIds = [lastEvent.get(`${appUserId}\u0000${key}`) ?? ''].filter(Boolean);
    const ledgerIds = rowsOfKey.slice(-1).map((entry) => entry.event_id);
    if (row.read_model !== row.events)
      mismatches.push({ app_user_id: appUserId, key, check: 'read_model', expected: row.events, actual: row.read_model, event_ids: eventIds });
    if (row.ledger_last !== row.events)
      mismatches.push({
        app_user_id: appUserId,
        key,
        check: 'ledger_last',
        expected: row.events,
        actual: row.ledger_last,
        event_ids: [...eventIds, ...ledgerIds],
      });
    if (row.ledger_sum !== row.events)
      mismatches.push({
        app_user_id: appUserId,
        key,
        check: 'ledger_sum',
        expected: row.events,
        actual: row.ledger_sum,
        event_ids: [...eventIds, ...ledgerIds],
      });
    const broken = firstBrokenRow(rowsOfKey);
    if (broken)
      mismatches.push({
        app_user_id: appUserId,
        key,
        check: 'ledger_running',
        expected: broken.expected,
        actual: broken.row.balance_after,
        event_ids: [broken.row.event_id],
      });
  }
  return { rows, mismatches };
}

/**
 * The first ledger row (of one key, in order) whose balance_after is not the running sum of the
 * deltas up to it: a row changed or missing shows there, and the auditor is led to that row.
 */
function firstBrokenRow(rows: StoredCredits['ledger']): { row: StoredCredits['ledger'][number]; expected: number } | null {
  let running = 0;
  for (const row of rows) {
    running += row.delta;
    if (row.balance_after !== running) return { row, expected: running };
  }
  return null;
}

/**
 * A user whose balances disagreed, compared again at one moment: its rows are read between two
 * looks at the read models' checkpoints, and when none of its events falls between the lowest
 * of the first look and the highest of the second, the rows of both read models show exactly its
 * events up to that lowest, which are folded again from its stream. The service writing during
 * the audit (the user's newer events already in the read models but past the head the scan
 * stopped at) then shows no difference; a real one shows again. Only read models that have
 * passed the scan's `head` are compared so: one held behind it keeps its mismatch (a re-check
 * would compare its old state with the old events and hide it). null when no re-check could be
 * made (read models behind the head, or the user's stream moving during every attempt).
 */
async function recheckUser(log: EventLog, readStore: ReadStore, appUserId: string, head: bigint): Promise<{ rows: AuditRow[]; mismatches: Mismatch[] } | null> {
  for (let attempt = 0; attempt < RECHECKS; attempt += 1) {
    const before = await checkpoints(readStore);
    if (before === null || before.low < head) return null;
    const stored = await storedCredits(readStore, appUserId);
    const after = await checkpoints(readStore);
    // Read after the rows: the stream holds every event they can show.
    const events = await log.readStream(streams.user(appUserId));
    if (after === null || events.some((event) => event.position > before.low && event.position <= after.high)) continue;
    const book = new CreditBook();
    const lastEvent = new Map<string, string>();
    for (const event of events) {
      if (event.position > before.low) break;
      book.apply(event);
      const recorded = recordedBalance(event);
      if (recorded) lastEvent.set(`${appUserId}\u0000${recorded.key}`, event.id);
    }
    return compareUser(appUserId, book, lastEvent, stored);
  }
  return null;
}

/**
 * Recomputes every user's credit balances straight from the event log and checks them
 * against what each event recorded, the users read model and the credit ledger.
 */
export async function auditCredits(log: EventLog, readStore: ReadStore, onProgress: (events: number) => void = () => {}): Promise<AuditReport> {
  const head = await log.store.headPosition();
  const books = new Map<string, CreditBook>();
  const lastEvent = new Map<string, string>();
  const mismatches: Mismatch[] = [];
  let after: bigint | null = null;
  let count = 0;
  while (head !== null) {
    const page = await log.readAll(after, PAGE, { streamPrefixes: [streams.prefix('user')] });
    for (const event of page) {
      if (event.position > head) break;
      const appUserId = appUserIdOf(event.stream)!;
      let book = books.get(appUserId);
      if (!book) {
        book = new CreditBook();
        books.set(appUserId, book);
      }
      const amounts = eventAmounts(event, book);
      book.apply(event);
      const recorded = recordedBalance(event);
      if (amounts) {
        mismatches.push({ app_user_id: appUserId, key: recorded?.key ?? '', check: 'event_amounts', ...amounts, event_ids: [event.id] });
      }
      if (recorded) {
        lastEvent.set(`${appUserId}\u0000${recorded.key}`, event.id);
        const computed = book.balance(recorded.key);
        if (computed !== recorded.balance) {
          mismatches.push({
            app_user_id: appUserId,
            key: recorded.key,
            check: 'event_balance_after',
            expected: computed,
            actual: recorded.balance,
            event_ids: [event.id],
          });
        }
      }
      count += 1;
    }
    onProgress(count);
    if (page.length < PAGE || page[page.length - 1]!.position >= head) break;
    after = page[page.length - 1]!.position;
  }

  const rows: AuditRow[] = [];
  for (const [appUserId, book] of books) {
    if (book.keys.size === 0) continue;
    let compared = compareUser(appUserId, book, lastEvent, await storedCredits(readStore, appUserId));
    // Disagreeing may only mean the service wrote for this user after the scan's head.
    if (compared.mismatches.length > 0 && head !== null) compared = (await recheckUser(log, readStore, appUserId, head)) ?? compared;
    rows.push(...compared.rows);
    mismatches.push(...compared.mismatches);
  }
  return { head: head?.toString() ?? null, events: count, rows, mismatches };
}
