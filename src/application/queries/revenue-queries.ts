import { inject, injectable } from 'tsyringe';
import { ATTRIBUTION, ATTRIBUTION_TOTALS, type AttributionCounts, type AttributionGroup } from '../../../projections/attribution.js';
import { INBOUND } from '../../../projections/revenue-index.js';
import type { ReadStore, Scalar } from '../../ports/read-store.js';
import { TOKENS } from '../../ports/tokens.js';

export interface InboundPage {
  notifications: {
    id: string | null;
    provider: string;
    received_at: string;
    status: string;
    reason: string | null;
    app_user_id: string | null;
    event_ids: string[];
  }[];
  next_after: string | null;
}

export interface AttributionRow {
  group: string;
  claims: number;
  conversions: number;
  refunds: number;
  revenue: { currency: string; gross_minor: number; refunded_minor: number }[];
}

/** Reads of the revenue read models: the inbox of notifications and attribution (SPEC §11). */
@injectable()
export class RevenueQueries {
  constructor(@inject(TOKENS.ReadStore) private readonly readStore: ReadStore) {}

  /** Oldest first, after a log position (documents carry minus their position: see projections/revenue-index.ts). */
  async inbound(filter: { provider: string | null; status: string | null; after: bigint | null; limit: number }): Promise<InboundPage> {
    const where: Record<string, Scalar> = {};
    if (filter.provider) where.provider = filter.provider;
    if (filter.status) where.status = filter.status;
    const docs = await this.readStore.find<Record<string, unknown>>(INBOUND, {
      where,
      atMost: filter.after === null ? undefined : { field: 'neg_seq', value: -Number(filter.after) - 1 },
      orderBy: { field: 'neg_seq', direction: 'desc' },
      // One more than the page, to know whether another follows.
      limit: filter.limit + 1,
    });
    const shown = docs.slice(0, filter.limit);
    const notifications = shown.map((doc) => ({
      id: (doc.id as string | null) ?? null,
      provider: doc.provider as string,
      received_at: doc.received_at as string,
      status: doc.status === 'received' ? 'unmatched' : (doc.status as string),
      reason: (doc.reason as string | null) ?? null,
      app_user_id: (doc.app_user_id as string | null) ?? null,
      event_ids: (doc.event_ids as string[]) ?? [],
    }));
    const last = shown[shown.length - 1];
    return { notifications, next_after: docs.length > filter.limit && last ? String(last.seq) : null };
  }

  /**
   * Per group over [from, to] (UTC days, inclusive): claims, conversions, refunds, revenue per
   * currency. All time reads one total per group; a range reads the days in it only (the
   * [dimension, day] index). Neither grows with the days outside what is asked.
   */
  async attribution(groupBy: AttributionGroup, from: string | null, to: string | null): Promise<AttributionRow[]> {
    const days =
      from === null && to === null
        ? await this.readStore.find<AttributionCounts>(ATTRIBUTION_TOTALS, { where: { dimension: groupBy } })
        : await this.readStore.find<AttributionCounts>(ATTRIBUTION, {
            where: { dimension: groupBy },
            ...(to ? { atMost: { field: 'day', value: to.slice(0, 10) } } : {}),
            ...(from ? { atLeast: { field: 'day', value: from.slice(0, 10) } } : {}),
          });
    const rows = new Map<string, AttributionRow & { money: Map<string, { gross: number; refunded: number }> }>();
    for (const day of days) {
      const row = rows.get(day.group) ?? { group: day.group, claims: 0, conversions: 0, refunds: 0, revenue: [], money: new Map() };
      row.claims += day.claims;
      row.conversions += day.conversions;
      row.refunds += day.refunds;
      for (const [currency, amount] of Object.entries(day.gross)) {
        const money = row.money.get(currency) ?? { gross: 0, refunded: 0 };
        money.gross += amount;
        row.money.set(currency, money);
      }
      for (const [currency, amount] of Object.entries(day.refunded)) {
        const money = row.money.get(currency) ?? { gross: 0, refunded: 0 };
        money.refunded += amount;
        row.money.set(currency, money);
      }
      rows.set(day.group, row);
    }
    return [...rows.values()]
      .sort((a, b) => (a.group < b.group ? -1 : 1))
      .map(({ money, ...row }) => ({
        ...row,
        revenue: [...money].sort(([a], [b]) => (a < b ? -1 : 1)).map(([currency, m]) => ({ currency, gross_minor: m.gross, refunded_minor: m.refunded })),
      }));
  }
}
