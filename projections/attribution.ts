import type { CodeType } from '../src/domain/events/code-events.js';
import type { LoggedEvent } from '../src/application/event-log.js';
import { isOwnPayment } from '../src/domain/revenue/own-payment.js';
import { refundFigures } from '../src/domain/revenue/record-revenue.js';
import { type Doc, type DocumentRef, type Projection, utcDayOf } from './projection.js';

/**
 * Revenue attribution (SPEC §11): per group and UTC day, so a date range sums the days in it;
 * and per group all time, so a report without a range reads one document per group whatever
 * the number of days behind it.
 */
export const ATTRIBUTION = 'attribution';
export const ATTRIBUTION_TOTALS = 'attribution_totals';
export const ATTRIBUTION_GROUPS = ['code', 'program', 'affiliate'] as const;
export type AttributionGroup = (typeof ATTRIBUTION_GROUPS)[number];

interface Source {
  code: string;
  type: CodeType;
  owner_id: string;
  program_id: string | null;
}

export interface AttributionCounts extends Doc {
  dimension: AttributionGroup;
  group: string;
  claims: number;
  conversions: number;
  refunds: number;
  /** currency → minor units */
  gross: Record<string, number>;
  refunded: Record<string, number>;
}

export interface AttributionDay extends AttributionCounts {
  day: string;
}

/** The groups one event counts for: its code, its program (when any), its affiliate (affiliate codes). */
function groupsOf(source: Source): [AttributionGroup, string][] {
  const groups: [AttributionGroup, string][] = [['code', source.code]];
  if (source.program_id) groups.push(['program', source.program_id]);
  if (source.type === 'affiliate') groups.push(['affiliate', source.owner_id]);
  return groups;
}

function sourceAndDay(event: LoggedEvent): { source: Source; at: string } | null {
  switch (event.type) {
    case 'CodeClaimed':
      return { source: event.data, at: event.data.claimed_at };
    case 'UserConverted':
      return { source: { ...event.data.referred_by, program_id: event.data.program_id }, at: event.data.converted_at };
    case 'RefundRecorded': {
      const figures = refundFigures(event.data);
      if (figures === null || (figures.refunds === 0 && !figures.amount)) return null;
      return { source: figures.source, at: event.data.recorded_at };
    }
    case 'PurchaseRecorded':
    case 'RenewalRecorded':
      // The service's clock, as analytics counts money: a provider's back- or future-dated
      // `occurred_at` cannot move revenue into another range.
      return event.data.attribution === null || !isOwnPayment(event.data) ? null : { source: event.data.attribution, at: event.data.recorded_at };
    default:
      return null;
  }
}

const SEPARATOR = '\u001f';
const dayId = (dimension: AttributionGroup, group: string, day: string) => `${dimension}${SEPARATOR}${group}${SEPARATOR}${day}`;
/** The all-time document of one group (`ATTRIBUTION_TOTALS`). */
export const attributionTotalId = (dimension: AttributionGroup, group: string) => `${dimension}${SEPARATOR}${group}`;

export const attributionProjection: Projection = {
  name: 'attribution',
  // 2: money on its `recorded_at` day, not the provider's `occurred_at`; 3: all-time totals
  // (run `npm run replay`).
  version: 3,
  collections: [
    { name: ATTRIBUTION, indexes: [['dimension', 'day']] },
    { name: ATTRIBUTION_TOTALS, indexes: [['dimension']] },
  ],
  eventTypes: ['CodeClaimed', 'UserConverted', 'PurchaseRecorded', 'RenewalRecorded', 'RefundRecorded'],
  targets: (event) => {
    const found = sourceAndDay(event);
    if (found === null) return [];
    const day = utcDayOf(found.at);
    return groupsOf(found.source).flatMap(([dimension, group]) => [
      { collection: ATTRIBUTION, id: dayId(dimension, group, day) },
      { collection: ATTRIBUTION_TOTALS, id: attributionTotalId(dimension, group) },
    ]);
  },
  evolve: (ref: DocumentRef, doc: Doc | null, event: LoggedEvent): Doc | null => {
    const [dimension, group, day] = ref.id.split(SEPARATOR) as [AttributionGroup, string, string | undefined];
    const counts = { claims: 0, conversions: 0, refunds: 0, gross: {}, refunded: {} };
    // A day document's id ends in its day; a total's does not.
    const current = (doc as AttributionCounts | null) ?? (day === undefined ? { dimension, group, ...counts } : { dimension, group, day, ...counts });
    const add = (into: Record<string, number>, currency: string | null, amount: number | null) =>
      currency === null || amount === null ? into : { ...into, [currency]: (into[currency] ?? 0) + amount };
    switch (event.type) {
      case 'CodeClaimed':
        return { ...current, claims: current.claims + 1 };
      case 'UserConverted':
        return { ...current, conversions: current.conversions + 1 };
      case 'PurchaseRecorded':
      case 'RenewalRecorded':
        return { ...current, gross: add(current.gross, event.data.currency, event.data.price_minor) };
      case 'RefundRecorded': {
        const { refunds, amount } = refundFigures(event.data)!;
        return { ...current, refunds: current.refunds + refunds, refunded: add(current.refunded, event.data.currency, amount) };
      }
      default:
        return doc;
    }
  },
};
