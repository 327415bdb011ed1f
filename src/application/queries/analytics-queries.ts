import { setImmediate } from 'node:timers/promises';
import type { CodeType } from '../../domain/events/code-events.js';
import { inject, injectable } from 'tsyringe';
import {
  ANALYTICS_CODE_PERIODS,
  ANALYTICS_CODES,
  ANALYTICS_DAILY,
  type AnalyticsCounters,
  type CodeDoc,
  type CodePeriodDoc,
  codePeriodId,
  type DailyDoc,
  dailyId,
  listKey,
} from '../../../projections/analytics.js';
import { AFFILIATES } from '../../../projections/catalog.js';
import type { ReadStore } from '../../ports/read-store.js';
import { TOKENS } from '../../ports/tokens.js';

type Revenue = { currency: string; gross_minor: number; refunded_minor: number }[];

export interface AnalyticsDay {
  date: string;
  claims: number;
  conversions: number;
  churns: number;
  refunds: number;
  revenue: Revenue;
}

export const TOP_CODES_ORDERS = ['claims', 'conversions', 'revenue'] as const;
export type TopCodesOrder = (typeof TOP_CODES_ORDERS)[number];

export interface TopCode {
  code: string;
  kind: CodeType;
  program_id: string | null;
  app_user_id: string | null;
  claims: number;
  conversions: number;
  revenue: Revenue;
}

/** Ids fetched per getMany call (keeps SQL statements and Mongo `$in` lists small). */
const CHUNK = 500;
const DAY_MS = 86_400_000;
/** The longest range one call covers, in days (both ends included); periodsOf's bound rests on it. */
export const MAX_RANGE_DAYS = 366;

/** How many UTC days `from` to `to` (YYYY-MM-DD) cover, both included. */
export const dayCount = (from: string, to: string): number => (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS + 1;

/** Every UTC day from `from` to `to` (YYYY-MM-DD, inclusive), oldest first. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let time = Date.parse(`${from}T00:00:00Z`); time <= Date.parse(`${to}T00:00:00Z`); time += DAY_MS) days.push(new Date(time).toISOString().slice(0, 10));
  return days;
}

/**
 * The range cut into whole calendar months (`YYYY-MM`) where it covers them and single days
 * elsewhere: at most 72 periods for MAX_RANGE_DAYS (two partial months and the full ones between).
 */
export function periodsOf(from: string, to: string): string[] {
  const periods: string[] = [];
  const end = Date.parse(`${to}T00:00:00Z`);
  let time = Date.parse(`${from}T00:00:00Z`);
  while (time <= end) {
    const date = new Date(time);
    const nextMonth = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
    if (date.getUTCDate() === 1 && nextMonth - DAY_MS <= end) {
      periods.push(date.toISOString().slice(0, 7));
      time = nextMonth;
    } else {
      periods.push(date.toISOString().slice(0, 10));
      time += DAY_MS;
    }
  }
  return periods;
}

function revenueOf(gross: Record<string, number>, refunded: Record<string, number>): Revenue {
  return [...new Set([...Object.keys(gross), ...Object.keys(refunded)])]
    .sort()
    .map((currency) => ({ currency, gross_minor: gross[currency] ?? 0, refunded_minor: refunded[currency] ?? 0 }));
}

function sum(into: AnalyticsCounters, doc: AnalyticsCounters): void {
  into.claims += doc.claims;
  into.conversions += doc.conversions;
  into.churns += doc.churns;
  into.refunds += doc.refunds;
  for (const [currency, amount] of Object.entries(doc.gross)) into.gross[currency] = (into.gross[currency] ?? 0) + amount;
  for (const [currency, amount] of Object.entries(doc.refunded)) into.refunded[currency] = (into.refunded[currency] ?? 0) + amount;
}

const zero = (): AnalyticsCounters => ({ claims: 0, conversions: 0, churns: 0, refunds: 0, gross: {}, refunded: {} });

/** The figure a ranking orders by: its field in the sorted lists, and its exact value over the range. */
const RANKINGS: Record<TopCodesOrder, { field: 'claims' | 'conversions' | 'net_best'; score: (counters: AnalyticsCounters) => number }> = {
  claims: { field: 'claims', score: (counters) => counters.claims },
  conversions: { field: 'conversions', score: (counters) => counters.conversions },
  revenue: {
    field: 'net_best',
    score: (counters) => Math.max(...revenueOf(counters.gross, counters.refunded).map((row) => row.gross_minor - row.refunded_minor), 0),
  },
};

/** Reads of the analytics read model (projections/analytics.ts; costs in docs/analytics.md). */
@injectable()
export class AnalyticsQueries {
  constructor(@inject(TOKENS.ReadStore) private readonly readStore: ReadStore) {}

  /** Other requests take their turn before each chunk: a ranking over a year can read thousands. */
  private async getMany<T extends Record<string, unknown>>(collection: string, ids: string[]): Promise<Map<string, T>> {
    const found = new Map<string, T>();
    for (let start = 0; start < ids.length; start += CHUNK) {
      await setImmediate();
      for (const [id, doc] of await this.readStore.getMany<T>(collection, ids.slice(start, start + CHUNK))) found.set(id, doc);
    }
    return found;
  }

  /** One entry per day of the range, zeros included: one document read per day. */
  async daily(range: { from: string; to: string; programId: string | null; code: string | null }): Promise<AnalyticsDay[]> {
    const days = daysBetween(range.from, range.to);
    const idOf = (day: string) => (range.code === null ? dailyId(range.programId, day) : codePeriodId(range.programId, day, range.code));
    const docs = await this.getMany<DailyDoc | CodePeriodDoc>(range.code === null ? ANALYTICS_DAILY : ANALYTICS_CODE_PERIODS, days.map(idOf));
    return days.map((date) => {
      const doc = docs.get(idOf(date));
      return {
        date,
        claims: doc?.claims ?? 0,
        conversions: doc?.conversions ?? 0,
        churns: doc?.churns ?? 0,
        refunds: doc?.refunds ?? 0,
        revenue: doc ? revenueOf(doc.gross, doc.refunded) : [],
      };
    });
  }

  /**
   * The `limit` codes with the highest figure over the range (ties: code ascending), among codes
   * whose figure is above zero. The threshold algorithm over one sorted list per period
   * (`periodsOf`): read each list's best `depth` documents; every code seen is a candidate whose
   * figures are summed exactly (from the documents read, and point reads of its other periods
   * where a list was not read to its end); stop once the limit-th candidate is beyond what an
   * unread code could still reach, otherwise read four times deeper. Costs: docs/analytics.md.
   * Other requests take their turn between reads (a year of tied codes reads for a second).
   */
  async topCodes(query: { from: string; to: string; programId: string | null; by: TopCodesOrder; limit: number }): Promise<TopCode[]> {
    const ranking = RANKINGS[query.by];
    const periods = periodsOf(query.from, query.to);
    /** Every period document known: read from a list or by id (null: it does not exist). */
    const known = new Map<string, CodePeriodDoc | null>();
    const idOf = (period: string, code: string) => codePeriodId(query.programId, period, code);
    for (let depth = query.limit; ; depth *= 4) {
      const codes = new Set<string>();
      /** Lists not read to their end, with the last document read from each. */
      const open: CodePeriodDoc[] = [];
      for (const period of periods) {
        await setImmediate();
        const docs = await this.readStore.find<CodePeriodDoc>(ANALYTICS_CODE_PERIODS, {
          where: { list: listKey(query.programId, period) },
          orderBy: { field: ranking.field, direction: 'desc' },
          limit: depth,
        });
        for (const doc of docs) {
          codes.add(doc.code);
          known.set(idOf(period, doc.code), doc);
        }
        if (docs.length === depth) open.push(docs[docs.length - 1]!);
      }
      // A code absent from a list read to its end has nothing in that period; elsewhere read it by id.
      const openPeriods = new Set(open.map((doc) => doc.period));
      const missing = [...codes].flatMap((code) => [...openPeriods].map((period) => idOf(period, code)).filter((id) => !known.has(id)));
      const fetched = await this.getMany<CodePeriodDoc>(ANALYTICS_CODE_PERIODS, missing);
      for (const id of missing) known.set(id, fetched.get(id) ?? null);

      const ranked = [...codes]
        .map((code) => {
          const counters = zero();
          for (const period of periods) {
            const doc = known.get(idOf(period, code));
            if (doc) sum(counters, doc);
          }
          return { code, counters, score: ranking.score(counters) };
        })
        .filter((row) => row.score > 0)
        .sort((a, b) => b.score - a.score || (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
      // An unread code has at most each open list's last figure there, and nothing elsewhere.
      const bound = open.reduce((total, doc) => total + Math.max(doc[ranking.field], 0), 0);
      const last = ranked[query.limit - 1];
      const decided =
        bound <= 0 ||
        (last !== undefined && last.score > bound) ||
        // One open list: it orders equal figures by code, so an unread code tying `last` comes after it.
        (last !== undefined && open.length === 1 && last.score === bound && last.code <= open[0]!.code);
      if (decided) return this.describe(ranked.slice(0, query.limit), query.programId);
    }
  }

  /** Kind, program and owner of the ranked codes (an affiliate code's owner is the affiliate's linked user). */
  private async describe(ranked: { code: string; counters: AnalyticsCounters }[], programId: string | null): Promise<TopCode[]> {
    const codes = await this.getMany<CodeDoc>(
      ANALYTICS_CODES,
      ranked.map((row) => row.code),
    );
    const affiliateIds = [...codes.values()].filter((doc) => doc.kind === 'affiliate').map((doc) => doc.owner_id);
    const affiliates = await this.getMany<{ app_user_id: string | null }>(AFFILIATES, affiliateIds);
    return ranked.map(({ code, counters }) => {
      const doc = codes.get(code)!;
      const owner = doc.kind === 'referral' ? doc.owner_id : doc.kind === 'affiliate' ? (affiliates.get(doc.owner_id)?.app_user_id ?? null) : null;
      return {
        code,
        kind: doc.kind,
        program_id: doc.program_id ?? programId,
        app_user_id: owner,
        claims: counters.claims,
        conversions: counters.conversions,
        revenue: revenueOf(counters.gross, counters.refunded),
      };
    });
  }
}
