import { setImmediate } from 'node:timers/promises';
import { inject, injectable } from 'tsyringe';
import { CREDIT_LEDGER } from '../../../projections/credit-ledger.js';
import type { EventStore, RecordedEvent } from '../../ports/event-store.js';
import type { ReadStore } from '../../ports/read-store.js';
import { TOKENS } from '../../ports/tokens.js';
import { exportedEvent } from '../export/event-export-format.js';
import { ExpirySweep } from '../maintenance/expiry-sweep.js';

export interface EventPageQuery {
  /** Exclusive cursor: events after it in the page's order (older ones when `newestFirst`). */
  after: bigint | null;
  limit: number;
  stream: string | null;
  /** One stream's events newest first (only with `stream`). */
  newestFirst: boolean;
  streamPrefix: string | null;
  /** Any of these types (null: every type). */
  types: string[] | null;
}

/** Events of one stream read at a time when a page is filtered by type (streamPage). */
const FILTERED_CHUNK = 1_000;

/** Rows of the credit ledger read at a time when every row is asked for (creditLedgerPages). */
export const LEDGER_PAGE = 500;

/** The raw log for analysts and auditors, and the credit ledger read model. */
@injectable()
export class EventQueries {
  constructor(
    @inject(TOKENS.EventStore) private readonly store: EventStore,
    @inject(TOKENS.ReadStore) private readonly readStore: ReadStore,
    @inject(ExpirySweep) private readonly expiries: ExpirySweep,
  ) {}

  /** One page of the log in commit order, or of one stream newest first; `next_after` continues it (or polls for more). */
  async page(query: EventPageQuery) {
    const events =
      query.stream !== null
        ? await this.streamPage(query.stream, query)
        : await this.store.readAll({
            after: query.after,
            limit: query.limit,
            filter: {
              ...(query.streamPrefix !== null ? { streamPrefixes: [query.streamPrefix] } : {}),
              ...(query.types !== null ? { types: query.types } : {}),
            },
          });
    const last = events[events.length - 1];
    return { events: events.map(exportedEvent), next_after: last ? last.position.toString() : (query.after?.toString() ?? null) };
  }

  /**
   * One stream's page, read a page at a time from `after` (never the whole stream: a console
   * paging through a user of 100,000 events reads each event once), until `limit` events of the
   * asked types are found or the stream ends. A type the stream holds rarely means reading on
   * through much of it (121,000 events for a referrer of 60,000 claims: about 0.6 s): between
   * reads the event loop takes its turn, so every other request is served meanwhile, as during an
   * export, instead of waiting for the whole scan.
   */
  private async streamPage(stream: string, query: EventPageQuery): Promise<RecordedEvent[]> {
    const found: RecordedEvent[] = [];
    const direction = query.newestFirst ? 'backwards' : 'forwards';
    const cursor = query.after === null ? {} : query.newestFirst ? { beforePosition: query.after } : { afterPosition: query.after };
    // Filtered, the reads are at least FILTERED_CHUNK long: a small page of a rare type would
    // otherwise read a long stream a few events at a time (1.4 s for `limit=1` over 100,000).
    const chunkSize = query.types === null ? query.limit : Math.max(query.limit, FILTERED_CHUNK);
    // The first read starts past the cursor's position; the next ones past the revision read last.
    let chunk = await this.store.readStream(stream, { direction, ...cursor, maxCount: chunkSize });
    for (;;) {
      found.push(...(query.types === null ? chunk : chunk.filter((event) => query.types!.includes(event.type))));
      if (chunk.length < chunkSize || found.length >= query.limit) return found.slice(0, query.limit);
      const next = chunk[chunk.length - 1]!.revision + (query.newestFirst ? -1 : 1);
      if (next < 0) return found;
      await setImmediate();
      chunk = await this.store.readStream(stream, { direction, fromRevision: next, maxCount: chunkSize });
    }
  }

  /**
   * Every credit movement of a user, oldest first. Expiries whose time has passed are recorded
   * first (in the correlation of `requestId`), so the ledger's balance is the user's entries'.
   * One page of `limit` rows after the cursor `after` (the `next_after` of the page before, null
   * on the last page): a page costs the same however long the ledger is (every row:
   * creditLedgerPages).
   */
  async creditLedger(appUserId: string, key: string | null, requestId: string, page: LedgerPage) {
    await this.expiries.recordDueOf(appUserId, requestId);
    // The cursor is the last row's `seq` (unique in a user's ledger), read again and dropped: the store's bound is inclusive.
    const rows = await this.readStore.find<Record<string, unknown>>(CREDIT_LEDGER, {
      where: { app_user_id: appUserId, ...(key !== null ? { key } : {}) },
      orderBy: { field: 'seq', direction: 'asc' },
      ...(page.after !== null ? { atLeast: { field: 'seq', value: page.after } } : {}),
      limit: page.limit + 2,
    });
    const after = page.after !== null && rows[0]?.seq === page.after ? rows.slice(1) : rows;
    if (after.length <= page.limit) return { rows: after, nextAfter: null };
    const shown = after.slice(0, page.limit);
    return { rows: shown, nextAfter: String(shown[shown.length - 1]!.seq) };
  }

  /**
   * Every row of the ledger after `after` (as `creditLedger` without a limit), read `pageSize` rows at a time:
   * the whole answer is written as it is read, never built whole, so a ledger of 60,000 rows
   * holds no other request for the time it takes (src/http/route.ts, sendJsonPieces). The first
   * page (which records the due expiries) is read before anything is written, so its failure is
   * still an error answer, not a cut one.
   */
  async creditLedgerPages(
    appUserId: string,
    key: string | null,
    requestId: string,
    after: string | null,
    pageSize = LEDGER_PAGE,
  ): Promise<AsyncIterable<Record<string, unknown>[]>> {
    const first = await this.creditLedger(appUserId, key, requestId, { after, limit: pageSize });
    const next = (cursor: string) => this.creditLedger(appUserId, key, requestId, { after: cursor, limit: pageSize });
    return (async function* () {
      let page = first;
      for (;;) {
        yield page.rows.map(ledgerEntry);
        if (page.nextAfter === null) return;
        page = await next(page.nextAfter);
      }
    })();
  }
}

/** A ledger row as the API shows it: without its order key and the fields that only index it. */
export const ledgerEntry = ({ seq: _seq, app_user_id: _user, request_id: _request, ...row }: Record<string, unknown>): Record<string, unknown> => row;

/** A page of the credit ledger: `limit` rows after the cursor `after`. */
export interface LedgerPage {
  after: string | null;
  limit: number;
}
