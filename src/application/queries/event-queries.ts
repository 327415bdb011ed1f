import { inject, injectable } from 'tsyringe';
import { CREDIT_LEDGER } from '../../../projections/credit-ledger.js';
import type { EventStore } from '../../ports/event-store.js';
import type { ReadStore } from '../../ports/read-store.js';
import { TOKENS } from '../../ports/tokens.js';
import { exportedEvent } from '../export/event-export-format.js';

export interface EventPageQuery {
  after: bigint | null;
  limit: number;
  stream: string | null;
  streamPrefix: string | null;
  /** Any of these types (null: every type). */
  types: string[] | null;
}

/** The raw log for analysts and auditors, and the credit ledger read model. */
@injectable()
export class EventQueries {
  constructor(
    @inject(TOKENS.EventStore) private readonly store: EventStore,
    @inject(TOKENS.ReadStore) private readonly readStore: ReadStore,
  ) {}

  /** One page of the log in commit order; `next_after` continues it (or polls for more). */
  async page(query: EventPageQuery) {
    const events =
      query.stream !== null
        ? (await this.store.readStream(query.stream))
            .filter((event) => (query.after === null || event.position > query.after) && (query.types === null || query.types.includes(event.type)))
            .slice(0, query.limit)
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

  /** Every credit movement of a user, oldest first. */
  async creditLedger(appUserId: string, key: string | null) {
    return this.readStore.find<Record<string, unknown>>(CREDIT_LEDGER, {
      where: { app_user_id: appUserId, ...(key !== null ? { key } : {}) },
      orderBy: { field: 'seq', direction: 'asc' },
    });
  }
}
