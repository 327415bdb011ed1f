import type { CodeType } from '../src/domain/events/code-events.js';
import type { LoggedEvent } from '../src/application/event-log.js';
import { isOwnPayment } from '../src/domain/revenue/own-payment.js';
import { refundFigures } from '../src/domain/revenue/record-revenue.js';
import { type Doc, type DocumentRef, type Projection, utcDayOf } from './projection.js';

/**
 * The analytics read model (SPEC §14): claims, conversions, churns, refunds and revenue per UTC
 * day, as series and as per-code figures for rankings. Every event counts on the UTC day the
 * service recorded it (`utcDay` below). Only activity attributed to a code counts (claims, the conversions and
 * churns of claimers, revenue of users who claimed a code). Each event touches at most seven
 * small documents, whatever the history (see docs/analytics.md):
 *
 * - `analytics_daily`: one document per day for everything (`all`) and per day per program;
 * - `analytics_code_periods`: one document per code per day and per calendar month, once for
 *   every program together and once within the code's program: the sorted lists the top-codes
 *   query ranks from (`list` names the scope and period, `code` the code);
 * - `analytics_codes`: one document per code: kind, owner, program and all-time totals.
 */
export const ANALYTICS_DAILY = 'analytics_daily';
export const ANALYTICS_CODE_PERIODS = 'analytics_code_periods';
export const ANALYTICS_CODES = 'analytics_codes';

/** What every analytics document counts; money per currency in integer minor units. */
export interface AnalyticsCounters {
  claims: number;
  conversions: number;
  churns: number;
  refunds: number;
  gross: Record<string, number>;
  refunded: Record<string, number>;
}

export interface DailyDoc extends Doc, AnalyticsCounters {
  scope: string;
  day: string;
}

export interface CodePeriodDoc extends Doc, AnalyticsCounters {
  /** `scopeKey(program)` + the period: the sorted list this document ranks in. */
  list: string;
  code: string;
  period: string;
  /** The largest gross − refunded of any currency (0 when no money): the revenue ranking key. */
  net_best: number;
}

export interface CodeDoc extends Doc, AnalyticsCounters {
  code: string;
  kind: CodeType;
  /** Referrer's app_user_id, promo code, or affiliate id (as in the claim). */
  owner_id: string;
  program_id: string | null;
  first_day: string;
  last_day: string;
}

const SEPARATOR = '\u001f';

/** Series scope: everything, or one program. */
const scopeKey = (programId: string | null): string => (programId === null ? 'all' : `program${SEPARATOR}${programId}`);
export const dailyId = (programId: string | null, day: string): string => `${scopeKey(programId)}${SEPARATOR}${day}`;
/** A sorted list: one period (`YYYY-MM-DD` or `YYYY-MM`) of every program (null) or one. */
export const listKey = (programId: string | null, period: string): string => `${scopeKey(programId)}${SEPARATOR}${period}`;
export const codePeriodId = (programId: string | null, period: string, code: string): string => `${listKey(programId, period)}${SEPARATOR}${code}`;

interface Fact {
  code: string;
  kind: CodeType;
  owner_id: string;
  program_id: string | null;
  /** `refund_amount`: money refunded beyond a refund already counted (a repeat of it). */
  figure: 'claim' | 'conversion' | 'churn' | 'revenue' | 'refund' | 'refund_amount';
  currency: string | null;
  amount: number | null;
  /** The UTC day it counts on (YYYY-MM-DD). */
  day: string;
}

/** What an event counts for which code, and on which day; null when it is not about an attributed code. */
function factOf(event: LoggedEvent): Fact | null {
  switch (event.type) {
    case 'CodeClaimed': {
      const { code, type, owner_id, program_id, claimed_at } = event.data;
      return { code, kind: type, owner_id, program_id, figure: 'claim', currency: null, amount: null, day: utcDayOf(claimed_at) };
    }
    case 'UserConverted':
    case 'UserChurned': {
      const { code, type, owner_id } = event.data.referred_by;
      const [figure, at] = event.type === 'UserConverted' ? (['conversion', event.data.converted_at] as const) : (['churn', event.data.churned_at] as const);
      return { code, kind: type, owner_id, program_id: event.data.program_id, figure, currency: null, amount: null, day: utcDayOf(at) };
    }
    case 'PurchaseRecorded':
    case 'RenewalRecorded': {
      const source = event.data.attribution;
      if (source === null || !isOwnPayment(event.data)) return null;
      return {
        ...source,
        kind: source.type,
        figure: 'revenue',
        currency: event.data.currency,
        amount: event.data.price_minor,
        day: utcDayOf(event.data.recorded_at),
      };
    }
    case 'RefundRecorded': {
      const figures = refundFigures(event.data);
      if (figures === null || (figures.refunds === 0 && !figures.amount)) return null;
      const { source, refunds, amount } = figures;
      const figure = refunds === 0 ? 'refund_amount' : 'refund';
      return { ...source, kind: source.type, figure, currency: event.data.currency, amount, day: utcDayOf(event.data.recorded_at) };
    }
    default:
      return null;
  }
}

const zero = (): AnalyticsCounters => ({ claims: 0, conversions: 0, churns: 0, refunds: 0, gross: {}, refunded: {} });

function add(into: Record<string, number>, currency: string | null, amount: number | null): Record<string, number> {
  return currency === null || amount === null ? into : { ...into, [currency]: (into[currency] ?? 0) + amount };
}

/** The counters after one fact. */
function count(counters: AnalyticsCounters, fact: Fact): AnalyticsCounters {
  const { claims, conversions, churns, refunds, gross, refunded } = counters;
  switch (fact.figure) {
    case 'claim':
      return { claims: claims + 1, conversions, churns, refunds, gross, refunded };
    case 'conversion':
      return { claims, conversions: conversions + 1, churns, refunds, gross, refunded };
    case 'churn':
      return { claims, conversions, churns: churns + 1, refunds, gross, refunded };
    case 'revenue':
      return { claims, conversions, churns, refunds, gross: add(gross, fact.currency, fact.amount), refunded };
    case 'refund':
      return { claims, conversions, churns, refunds: refunds + 1, gross, refunded: add(refunded, fact.currency, fact.amount) };
    case 'refund_amount':
      return { claims, conversions, churns, refunds, gross, refunded: add(refunded, fact.currency, fact.amount) };
  }
}

function countersOf(doc: Doc | null): AnalyticsCounters {
  if (doc === null) return zero();
  const { claims, conversions, churns, refunds, gross, refunded } = doc as unknown as AnalyticsCounters;
  return { claims, conversions, churns, refunds, gross, refunded };
}

/** The largest gross − refunded of any currency; 0 when no money moved. */
export function netBest(counters: Pick<AnalyticsCounters, 'gross' | 'refunded'>): number {
  const currencies = new Set([...Object.keys(counters.gross), ...Object.keys(counters.refunded)]);
  let best: number | null = null;
  for (const currency of currencies) {
    const net = (counters.gross[currency] ?? 0) - (counters.refunded[currency] ?? 0);
    if (best === null || net > best) best = net;
  }
  return best ?? 0;
}

export const analyticsProjection: Projection = {
  name: 'analytics',
  version: 1,
  collections: [
    { name: ANALYTICS_DAILY, indexes: [] },
    // The three rankings: by claims, by conversions, by revenue, each within one list.
    {
      name: ANALYTICS_CODE_PERIODS,
      indexes: [
        ['list', 'claims'],
        ['list', 'conversions'],
        ['list', 'net_best'],
      ],
    },
    { name: ANALYTICS_CODES, indexes: [] },
  ],
  eventTypes: ['CodeClaimed', 'UserConverted', 'UserChurned', 'PurchaseRecorded', 'RenewalRecorded', 'RefundRecorded'],
  targets: (event) => {
    const fact = factOf(event);
    if (fact === null) return [];
    const { day } = fact;
    const month = day.slice(0, 7);
    const programs = fact.program_id === null ? [null] : [null, fact.program_id];
    return [
      ...programs.map((program) => ({ collection: ANALYTICS_DAILY, id: dailyId(program, day) })),
      ...programs.flatMap((program) => [day, month].map((period) => ({ collection: ANALYTICS_CODE_PERIODS, id: codePeriodId(program, period, fact.code) }))),
      { collection: ANALYTICS_CODES, id: fact.code },
    ];
  },
  evolve: (ref: DocumentRef, doc: Doc | null, event: LoggedEvent): Doc | null => {
    const fact = factOf(event);
    if (fact === null) return doc;
    const counters = count(countersOf(doc), fact);
    const { day } = fact;
    switch (ref.collection) {
      case ANALYTICS_DAILY: {
        const scope = ref.id.slice(0, ref.id.length - day.length - 1);
        return { scope, day, ...counters } satisfies DailyDoc;
      }
      case ANALYTICS_CODE_PERIODS: {
        const list = ref.id.slice(0, ref.id.length - fact.code.length - 1);
        const period = list.slice(list.lastIndexOf(SEPARATOR) + 1);
        return { list, code: fact.code, period, ...counters, net_best: netBest(counters) } satisfies CodePeriodDoc;
      }
      case ANALYTICS_CODES: {
        const first = (doc as CodeDoc | null)?.first_day ?? day;
        return {
          code: fact.code,
          kind: fact.kind,
          owner_id: fact.owner_id,
          // The latest program a fact named (a code's program does not change in practice).
          program_id: fact.program_id ?? (doc as CodeDoc | null)?.program_id ?? null,
          first_day: first < day ? first : day,
          last_day: day,
          ...counters,
        } satisfies CodeDoc;
      }
      default:
        return doc;
    }
  },
};
