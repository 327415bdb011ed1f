import { CREDIT_LEDGER } from '../../../projections/credit-ledger.js';
import { USERS } from '../../../projections/users.js';
import { evolveUser, initialUserState, ledgerBalance, type UserState } from '../../domain/users/user-state.js';
import type { UserDocument } from '../queries/legacy-user-document.js';
import type { ReadStore } from '../../ports/read-store.js';
import type { EventLog, LoggedEvent } from '../event-log.js';

export interface AuditRow {
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

export interface Mismatch {
  app_user_id: string;
  key: string;
  check: 'read_model' | 'ledger_last' | 'ledger_sum' | 'event_balance_after';
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

/** Credits of `key` the users read model holds in entries whose expiry is not recorded yet. */
function documentBalance(doc: UserDocument, key: string): number {
  return doc.grants
    .filter((grant) => grant.reward_key === key && grant.kind === 'credit' && !grant.expired)
    .reduce((sum, grant) => sum + (grant.credits ?? 0), 0);
}

/** The balance an event says it left, for events that move credits. */
function recordedBalance(event: LoggedEvent): { key: string; balance: number } | null {
  if (event.type === 'CreditsWithdrawn') return { key: event.data.key, balance: event.data.credits_available_at_end };
  if ((event.type === 'RewardGranted' || event.type === 'RewardExpired') && event.data.kind === 'credit') {
    return { key: event.data.reward_key, balance: event.data.balance_after ?? 0 };
  }
  return null;
}

/**
 * Recomputes every user's credit balances straight from the event log and checks them
 * against what each event recorded, the users read model and the credit ledger.
 */
export async function auditCredits(log: EventLog, readStore: ReadStore, onProgress: (events: number) => void = () => {}): Promise<AuditReport> {
  const head = await log.store.headPosition();
  const states = new Map<string, UserState>();
  /** Credit keys each user ever held (its state keeps only live entries). */
  const creditKeys = new Map<string, Set<string>>();
  const lastEvent = new Map<string, string>();
  const mismatches: Mismatch[] = [];
  let after: bigint | null = null;
  let count = 0;
  while (head !== null) {
    const page = await log.readAll(after, PAGE, { streamPrefixes: ['user-'] });
    for (const event of page) {
      if (event.position > head) break;
      const appUserId = event.stream.slice('user-'.length);
      const state = evolveUser(states.get(appUserId) ?? initialUserState(), event);
      states.set(appUserId, state);
      const recorded = recordedBalance(event);
      if (recorded) {
        if (!creditKeys.has(appUserId)) creditKeys.set(appUserId, new Set());
        creditKeys.get(appUserId)!.add(recorded.key);
        lastEvent.set(`${appUserId}\u0000${recorded.key}`, event.id);
        const computed = ledgerBalance(state, recorded.key);
        if (computed !== recorded.balance) {
          mismatches.push({ app_user_id: appUserId, key: recorded.key, check: 'event_balance_after', expected: computed, actual: recorded.balance, event_ids: [event.id] });
        }
      }
      count += 1;
    }
    onProgress(count);
    if (page.length < PAGE || page[page.length - 1]!.position >= head) break;
    after = page[page.length - 1]!.position;
  }

  const rows: AuditRow[] = [];
  for (const [appUserId, state] of states) {
    const keys = [...(creditKeys.get(appUserId) ?? [])];
    if (keys.length === 0) continue;
    const doc = await readStore.get<UserDocument & Record<string, unknown>>(USERS, appUserId);
    const ledger = await readStore.find<{ key: string; delta: number; balance_after: number; event_id: string }>(CREDIT_LEDGER, {
      where: { app_user_id: appUserId },
      orderBy: { field: 'seq', direction: 'asc' },
    });
    for (const key of keys) {
      const rowsOfKey = ledger.filter((row) => row.key === key);
      const row: AuditRow = {
        app_user_id: appUserId,
        key,
        events: ledgerBalance(state, key),
        read_model: doc ? documentBalance(doc, key) : null,
        ledger_last: rowsOfKey.length > 0 ? rowsOfKey[rowsOfKey.length - 1]!.balance_after : null,
        ledger_sum: rowsOfKey.reduce((sum, entry) => sum + entry.delta, 0),
      };
      rows.push(row);
      const eventIds = [lastEvent.get(`${appUserId}\u0000${key}`) ?? ''].filter(Boolean);
      const ledgerIds = rowsOfKey.slice(-1).map((entry) => entry.event_id);
      if (row.read_model !== row.events) mismatches.push({ app_user_id: appUserId, key, check: 'read_model', expected: row.events, actual: row.read_model, event_ids: eventIds });
      if (row.ledger_last !== row.events) mismatches.push({ app_user_id: appUserId, key, check: 'ledger_last', expected: row.events, actual: row.ledger_last, event_ids: [...eventIds, ...ledgerIds] });
      if (row.ledger_sum !== row.events) mismatches.push({ app_user_id: appUserId, key, check: 'ledger_sum', expected: row.events, actual: row.ledger_sum, event_ids: [...eventIds, ...ledgerIds] });
    }
  }
  return { head: head?.toString() ?? null, events: count, rows, mismatches };
}
