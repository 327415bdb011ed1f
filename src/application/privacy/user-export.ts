import { inject, injectable } from 'tsyringe';
import { lastLedgerSeqAt } from '../../../projections/credit-ledger.js';
import { INBOUND } from '../../../projections/revenue-index.js';
import { TRANSACTION_LINKS } from '../../../projections/transaction-links.js';
import { streams } from '../../domain/events/index.js';
import type { RevenueProvider } from '../../domain/revenue/revenue-notification.js';
import type { Clock } from '../../ports/clock.js';
import type { EventStore } from '../../ports/event-store.js';
import type { ReadStore } from '../../ports/read-store.js';
import { TOKENS } from '../../ports/tokens.js';
import { type ExportedEvent, exportedEvent } from '../export/event-export-format.js';
import { jsonArray, type Pages } from '../json-pieces.js';
import { EventQueries, ledgerEntry } from '../queries/event-queries.js';
import { ExportErasureGate, ExportOvertakenByErasure, type ExportTicket } from './export-erasure-gate.js';
import { linkView, refusedAttemptView, type TransactionDoc } from '../queries/transaction-queries.js';
import { UserQueries } from '../queries/user-queries.js';

/** Rows or events read at a time: what one export holds in memory, whatever the user's history. */
export const EXPORT_PAGE = 500;

/**
 * Everything the service holds about one user (SPEC §13, the data subject's access request), as
 * the one JSON document `GET /admin/users/{app_user_id}/export` answers (its schema is
 * `UserDataExport` in src/http/schemas/privacy.ts): the user as `GET /users/{id}` shows it, its
 * affiliates, every credit movement, every event of its stream and every notification matched to
 * it (personal fields decrypted, erased ones `{"erased": true}`), and its store transactions and
 * refused link attempts, without the user each refused transaction stays linked to (another
 * person's id, not this user's data).
 *
 * The document is written out as it is read, `EXPORT_PAGE` rows or events at a time: a referrer
 * with 100,000 claims is exported with the memory of a new user, and between pages the service
 * answers other requests. It is a picture of one moment: the log's head when it starts bounds
 * the events, the ledger rows, the notifications and the transactions it lists.
 */
@injectable()
export class UserExport {
  constructor(
    @inject(UserQueries) private readonly users: UserQueries,
    @inject(EventQueries) private readonly events: EventQueries,
    @inject(TOKENS.EventStore) private readonly store: EventStore,
    @inject(TOKENS.ReadStore) private readonly readStore: ReadStore,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(ExportErasureGate) private readonly gate: ExportErasureGate,
  ) {}

  /** Rows or events read at a time (EXPORT_PAGE; tests page by fewer to cross page ends in every section). */
  pageSize = EXPORT_PAGE;

  /**
   * The document's JSON text, in pieces to write in turn; null when the user is unknown. An
   * erasure of the user that overtakes it before its first piece makes it start again (after
   * the erasure); one that overtakes it later cuts it short (ExportErasureGate).
   */
  async open(appUserId: string, requestId: string): Promise<AsyncIterable<string> | null> {
    for (;;) {
      const ticket = await this.gate.startExport(appUserId);
      try {
        const pieces = await this.openUnchecked(appUserId, requestId);
        if (pieces === null) {
          ticket.end();
          return null;
        }
        ticket.check();
        return checkedPieces(pieces, ticket);
      } catch (error) {
        ticket.end();
        if (!(error instanceof ExportOvertakenByErasure)) throw error;
      }
    }
  }

  private async openUnchecked(appUserId: string, requestId: string): Promise<AsyncIterable<string> | null> {
    const user = await this.users.userView(appUserId);
    if (user === null) return null;
    // The ledger's first page records the expiries that are due (EventQueries#creditLedger), so the head read next includes them.
    const ledger = await this.events.creditLedger(appUserId, null, requestId, { after: null, limit: this.pageSize });
    const head = (await this.store.headPosition()) ?? 0n;
    const affiliates = await this.users.affiliateRecordsOfUser(appUserId);
    return this.document(appUserId, head, [
      ['user', user],
      ['affiliates', affiliates],
      ['credit_ledger', this.ledger(appUserId, requestId, ledger, head)],
      ['events', this.userEvents(appUserId, head)],
      ['notifications', this.notifications(appUserId, head)],
    ]);
  }

  private async *document(appUserId: string, head: bigint, fields: [string, unknown][]): AsyncIterable<string> {
    const exportedAt = this.clock.now().toISOString();
    yield `{"data":{"export":{"app_user_id":${JSON.stringify(appUserId)},"exported_at":${JSON.stringify(exportedAt)}`;
    for (const [name, value] of fields) {
      yield `,${JSON.stringify(name)}:`;
      if (isPages(value)) yield* jsonArray(value);
      else yield JSON.stringify(value);
    }
    yield ',"transactions":{"links":';
    yield* jsonArray(this.transactions(appUserId, head, 'linked'));
    yield ',"refused_attempts":';
    yield* jsonArray(this.transactions(appUserId, head, 'refused'));
    yield '}}}}';
  }

  /** The ledger rows up to the head, oldest first, without the fields that are not the user's data. */
  private async *ledger(appUserId: string, requestId: string, first: { rows: Record<string, unknown>[]; nextAfter: string | null }, head: bigint): Pages {
    const through = lastLedgerSeqAt(head);
    let page = first;
    for (;;) {
      const rows = page.rows.filter((row) => String(row.seq) <= through);
      yield rows.map(ledgerEntry);
      if (page.nextAfter === null || rows.length < page.rows.length) return;
      page = await this.events.creditLedger(appUserId, null, requestId, { after: page.nextAfter, limit: this.pageSize });
    }
  }

  /** The user's stream up to the head, personal fields decrypted. */
  private async *userEvents(appUserId: string, head: bigint): Pages {
    for (let fromRevision = 0; ; fromRevision += this.pageSize) {
      const events = await this.store.readStream(streams.user(appUserId), { fromRevision, maxCount: this.pageSize });
      const shown = events.filter((event) => event.position <= head);
      yield shown.map(exportedEvent);
      if (events.length < this.pageSize || shown.length < events.length) return;
    }
  }

  /** The notifications matched to the user (each stream holds its one NotificationReceived), in the order received. */
  private async *notifications(appUserId: string, head: bigint): Pages {
    // Oldest first is `neg_seq` descending (projections/revenue-index.ts); each page starts at the last one's bound, read again.
    let bound = -1;
    for (;;) {
      const docs = await this.readStore.find<{ id: string | null; provider: RevenueProvider; neg_seq: number }>(INBOUND, {
        where: { app_user_id: appUserId },
        atLeast: { field: 'neg_seq', value: -Number(head) },
        atMost: { field: 'neg_seq', value: bound },
        orderBy: { field: 'neg_seq', direction: 'desc' },
        limit: this.pageSize,
      });
      const found: ExportedEvent[] = [];
      for (const doc of docs) {
        if (doc.id !== null) found.push(...(await this.store.readStream(streams.inbound(doc.provider, doc.id))).map(exportedEvent));
      }
      yield found;
      if (docs.length < this.pageSize) return;
      bound = docs[docs.length - 1]!.neg_seq - 1;
    }
  }

  /** The user's transaction documents of one status up to the head, oldest first (refused ones without the other user). */
  private async *transactions(appUserId: string, head: bigint, status: TransactionDoc['status']): Pages {
    let from = 0;
    for (;;) {
      const docs = await this.readStore.find<TransactionDoc>(TRANSACTION_LINKS, {
        where: { app_user_id: appUserId },
        atLeast: { field: 'seq', value: from },
        atMost: { field: 'seq', value: Number(head) },
        orderBy: { field: 'seq', direction: 'asc' },
        limit: this.pageSize,
      });
      const view: (doc: TransactionDoc) => object = status === 'linked' ? linkView : refusedAttemptView;
      yield docs.filter((doc) => doc.status === status).map(view);
      if (docs.length < this.pageSize) return;
      from = docs[docs.length - 1]!.seq + 1;
    }
  }
}

/** The pieces, each checked against an erasure of the user before it is written. */
async function* checkedPieces(pieces: AsyncIterable<string>, ticket: ExportTicket): AsyncIterable<string> {
  try {
    for await (const piece of pieces) {
      ticket.check();
      yield piece;
    }
  } finally {
    ticket.end();
  }
}

function isPages(value: unknown): value is Pages {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}
