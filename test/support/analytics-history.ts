import type { DomainEvent } from '../../src/domain/events/index.js';

/**
 * Analytics test histories and the figures counted straight from events (`{type, data}` as the
 * log and `GET /admin/events` hold them), to compare the analytics read model against.
 */
export type CodeSource = { code: string; type: 'referral' | 'promo' | 'affiliate'; owner_id: string; program_id: string | null };

const referredBy = (source: CodeSource, claimer: string) => ({ claim_id: `claim-${claimer}`, code: source.code, type: source.type, owner_id: source.owner_id });

export const claimAt = (source: CodeSource, claimer: string, at: string): DomainEvent => ({
  type: 'CodeClaimed',
  data: { ...referredBy(source, claimer), program_id: source.program_id, claimed_at: at },
});
export const conversionAt = (source: CodeSource, claimer: string, at: string): DomainEvent => ({
  type: 'UserConverted',
  data: { converted_at: at, referred_by: referredBy(source, claimer), source: 'client', purchase: null, program_id: source.program_id },
});
export const churnAt = (source: CodeSource, claimer: string, at: string): DomainEvent => ({
  type: 'UserChurned',
  data: { churned_at: at, referred_by: referredBy(source, claimer), program_id: source.program_id },
});

let notifications = 0;
/** A purchase, renewal or refund recorded at `at` (the provider says it occurred a week earlier). */
export function moneyAt(
  type: 'PurchaseRecorded' | 'RenewalRecorded' | 'RefundRecorded',
  source: CodeSource | null,
  at: string,
  price: number,
  currency = 'EUR',
): DomainEvent {
  notifications += 1;
  const fact = {
    provider: 'stripe' as const,
    notification_id: `n-${notifications}`,
    provider_type: 'invoice.paid',
    kind: type === 'RefundRecorded' ? ('refund' as const) : ('purchase' as const),
    occurred_at: new Date(Date.parse(at) - 7 * 86_400_000).toISOString(),
    transaction_id: null,
    original_transaction_id: null,
    product_id: null,
    price_minor: price,
    currency,
    period_start: null,
    period_end: null,
    is_trial: false,
    recorded_at: at,
    attribution: source === null ? null : { code: source.code, type: source.type, owner_id: source.owner_id, program_id: source.program_id },
  };
  return type === 'RefundRecorded'
    ? { type, data: { ...fact, reverses_conversion: false } }
    : { type, data: { ...fact, refunded_before: false, expired_before: false } };
}

/** A seeded generator (tests are reproducible). */
export function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

/**
 * `count` events over `codes` codes (low-numbered codes far more popular) spread over `days`
 * days from `start`: claims, conversions, churns, purchases, renewals and refunds in EUR and USD.
 */
export function randomHistory(options: { seed: number; count: number; codes: number; start: Date; days: number }): DomainEvent[] {
  const random = seeded(options.seed);
  const sources: CodeSource[] = Array.from({ length: options.codes }, (_, index) => ({
    code: `C${String(index).padStart(3, '0')}`,
    type: index % 5 === 0 ? 'promo' : 'referral',
    owner_id: index % 5 === 0 ? `C${String(index).padStart(3, '0')}` : `owner-${index}`,
    program_id: index % 5 === 0 ? null : `p${index % 3}`,
  }));
  const history: DomainEvent[] = [];
  for (let index = 0; index < options.count; index += 1) {
    const source = sources[Math.floor(sources.length * random() ** 3)]!;
    const at = new Date(options.start.getTime() + Math.floor(random() * options.days * 86_400_000)).toISOString();
    const roll = random();
    const price = 100 + Math.floor(random() * 900);
    const currency = random() < 0.8 ? 'EUR' : 'USD';
    if (roll < 0.55) history.push(claimAt(source, `u${index}`, at));
    else if (roll < 0.75) history.push(conversionAt(source, `u${index}`, at));
    else if (roll < 0.8) history.push(churnAt(source, `u${index}`, at));
    else if (roll < 0.93) history.push(moneyAt(random() < 0.7 ? 'PurchaseRecorded' : 'RenewalRecorded', source, at, price, currency));
    else history.push(moneyAt('RefundRecorded', source, at, price, currency));
  }
  return history;
}

interface Counted {
  source: CodeSource;
  date: string;
  figure: 'claims' | 'conversions' | 'churns' | 'gross' | 'refunds';
  currency: string | null;
  amount: number | null;
}

/** What one event counts for analytics, read from its data alone; null for other events. */
function counted(event: { type: string; data: any }): Counted | null {
  const { type, data } = event;
  const day = (at: string) => new Date(at).toISOString().slice(0, 10);
  switch (type) {
    case 'CodeClaimed':
      return { source: data, date: day(data.claimed_at), figure: 'claims', currency: null, amount: null };
    case 'UserConverted':
      return {
        source: { ...data.referred_by, program_id: data.program_id },
        date: day(data.converted_at),
        figure: 'conversions',
        currency: null,
        amount: null,
      };
    case 'UserChurned':
      return {
        source: { ...data.referred_by, program_id: data.program_id ?? null },
        date: day(data.churned_at),
        figure: 'churns',
        currency: null,
        amount: null,
      };
    case 'PurchaseRecorded':
    case 'RenewalRecorded':
    case 'RefundRecorded':
      if (data.attribution === null) return null;
      return {
        source: data.attribution,
        date: day(data.recorded_at),
        figure: type === 'RefundRecorded' ? 'refunds' : 'gross',
        currency: data.currency,
        amount: data.price_minor,
      };
    default:
      return null;
  }
}

type Money = { currency: string; gross_minor: number; refunded_minor: number }[];

function moneyOf(gross: Map<string, number>, refunded: Map<string, number>): Money {
  return [...new Set([...gross.keys(), ...refunded.keys()])]
    .sort()
    .map((currency) => ({ currency, gross_minor: gross.get(currency) ?? 0, refunded_minor: refunded.get(currency) ?? 0 }));
}

/** The daily series counted over the events, zeros included. */
export function countDaily(events: { type: string; data: any }[], from: string, to: string, filter: { programId?: string | null; code?: string | null } = {}) {
  const days = new Map<
    string,
    { claims: number; conversions: number; churns: number; refunds: number; gross: Map<string, number>; refunded: Map<string, number> }
  >();
  for (let time = Date.parse(`${from}T00:00:00Z`); time <= Date.parse(`${to}T00:00:00Z`); time += 86_400_000) {
    days.set(new Date(time).toISOString().slice(0, 10), { claims: 0, conversions: 0, churns: 0, refunds: 0, gross: new Map(), refunded: new Map() });
  }
  for (const event of events) {
    const fact = counted(event);
    if (fact === null || !days.has(fact.date)) continue;
    if (filter.programId && fact.source.program_id !== filter.programId) continue;
    if (filter.code && fact.source.code !== filter.code) continue;
    const day = days.get(fact.date)!;
    if (fact.figure === 'gross') {
      if (fact.currency !== null && fact.amount !== null) day.gross.set(fact.currency, (day.gross.get(fact.currency) ?? 0) + fact.amount);
    } else {
      day[fact.figure] += 1;
      if (fact.figure === 'refunds' && fact.currency !== null && fact.amount !== null)
        day.refunded.set(fact.currency, (day.refunded.get(fact.currency) ?? 0) + fact.amount);
    }
  }
  return [...days].map(([date, { claims, conversions, churns, refunds, gross, refunded }]) => ({
    date,
    claims,
    conversions,
    churns,
    refunds,
    revenue: moneyOf(gross, refunded),
  }));
}

/** Top codes counted over the events: codes with a figure above zero, highest first, ties by code. */
export function countTopCodes(
  events: { type: string; data: any }[],
  query: { from: string; to: string; programId: string | null; by: 'claims' | 'conversions' | 'revenue'; limit: number },
) {
  const totals = new Map<string, { claims: number; conversions: number; gross: Map<string, number>; refunded: Map<string, number> }>();
  for (const event of events) {
    const fact = counted(event);
    if (fact === null || fact.date < query.from || fact.date > query.to) continue;
    if (query.programId !== null && fact.source.program_id !== query.programId) continue;
    const row = totals.get(fact.source.code) ?? { claims: 0, conversions: 0, gross: new Map(), refunded: new Map() };
    totals.set(fact.source.code, row);
    if (fact.figure === 'claims') row.claims += 1;
    if (fact.figure === 'conversions') row.conversions += 1;
    const into = fact.figure === 'gross' ? row.gross : fact.figure === 'refunds' ? row.refunded : null;
    if (into && fact.currency !== null && fact.amount !== null) into.set(fact.currency, (into.get(fact.currency) ?? 0) + fact.amount);
  }
  const rows = [...totals].map(([code, row]) => ({ code, claims: row.claims, conversions: row.conversions, revenue: moneyOf(row.gross, row.refunded) }));
  const score = (row: (typeof rows)[number]) =>
    query.by === 'claims'
      ? row.claims
      : query.by === 'conversions'
        ? row.conversions
        : Math.max(0, ...row.revenue.map((money) => money.gross_minor - money.refunded_minor));
  return rows
    .filter((row) => score(row) > 0)
    .sort((a, b) => score(b) - score(a) || (a.code < b.code ? -1 : 1))
    .slice(0, query.limit);
}
