import 'reflect-metadata';
import { tempDir } from '../../support/temp-dir.js';
import { expect } from 'chai';
import { after, describe, it } from 'mocha';
import {
  ANALYTICS_CODE_PERIODS,
  ANALYTICS_CODES,
  ANALYTICS_DAILY,
  analyticsProjection,
  codePeriodId,
  dailyId,
  netBest,
} from '../../../projections/analytics.js';
import fs from 'node:fs';
import { MemoryReadStore } from '../../../src/adapters/memory/memory-read-store.js';
import { openSqlite } from '../../../src/adapters/sqlite/sqlite-database.js';
import { SqliteReadStore } from '../../../src/adapters/sqlite/sqlite-read-store.js';
import type { ReadStore } from '../../../src/ports/read-store.js';
import { type LoggedEvent, toLogged } from '../../../src/application/event-log.js';
import { AnalyticsQueries, daysBetween, periodsOf } from '../../../src/application/queries/analytics-queries.js';
import type { DomainEvent } from '../../../src/domain/events/index.js';
import { type CodeSource, churnAt, claimAt, conversionAt, countTopCodes, moneyAt, randomHistory, seeded } from '../../support/analytics-history.js';
import { DAY, logged, project, T0 } from '../../support/events.js';

const REF: CodeSource = { code: 'BOB234', type: 'referral', owner_id: 'bob', program_id: 'prog' };
const PROMO: CodeSource = { code: 'WELCOME', type: 'promo', owner_id: 'WELCOME', program_id: null };

const isoAt = (day: number, hour = 12) => new Date(T0.getTime() + day * DAY + (hour - 12) * 3_600_000).toISOString();
const claim = (source: CodeSource, claimer: string, day: number, hour = 12) => claimAt(source, claimer, isoAt(day, hour));
const conversion = (source: CodeSource, claimer: string, day: number) => conversionAt(source, claimer, isoAt(day));
const churn = (source: CodeSource, claimer: string, day: number) => churnAt(source, claimer, isoAt(day));
const money = (type: 'PurchaseRecorded' | 'RenewalRecorded' | 'RefundRecorded', source: CodeSource | null, day: number, price: number, currency = 'EUR') =>
  moneyAt(type, source, isoAt(day), price, currency);

function loggedAll(domainEvents: DomainEvent[]): LoggedEvent[] {
  // The log's own timestamp is deliberately another day: analytics go by the recorded data times.
  return domainEvents.map((domainEvent, index) =>
    logged('user-x', domainEvent, { position: BigInt(index + 1), recordedAt: new Date(T0.getTime() + 500 * DAY) }),
  );
}

async function storeOf(domainEvents: DomainEvent[], store: ReadStore = new MemoryReadStore()): Promise<ReadStore> {
  for (const { name, indexes } of analyticsProjection.collections) await store.ensureIndexes(name, indexes);
  const docs = project(analyticsProjection, loggedAll(domainEvents));
  const changes = [...docs].map(([key, doc]) => {
    const [collection, ...id] = key.split('/');
    return { op: 'put' as const, collection: collection!, id: id.join('/'), doc };
  });
  await store.commitBatches([{ projector: 'analytics', version: 1, changes, position: BigInt(domainEvents.length), after: null }]);
  return store;
}

const day = (offset: number) => isoAt(offset).slice(0, 10);

describe('analytics projection (SPEC §14)', () => {
  it('a claim touches seven small documents: the day for all and its program, the code per day and month (all, program), the code', () => {
    const [claimed] = loggedAll([claim(REF, 'ann', 0)]);
    const targets = analyticsProjection.targets(claimed!);
    expect(targets).to.deep.equal([
      { collection: ANALYTICS_DAILY, id: dailyId(null, day(0)) },
      { collection: ANALYTICS_DAILY, id: dailyId('prog', day(0)) },
      { collection: ANALYTICS_CODE_PERIODS, id: codePeriodId(null, day(0), 'BOB234') },
      { collection: ANALYTICS_CODE_PERIODS, id: codePeriodId(null, day(0).slice(0, 7), 'BOB234') },
      { collection: ANALYTICS_CODE_PERIODS, id: codePeriodId('prog', day(0), 'BOB234') },
      { collection: ANALYTICS_CODE_PERIODS, id: codePeriodId('prog', day(0).slice(0, 7), 'BOB234') },
      { collection: ANALYTICS_CODES, id: 'BOB234' },
    ]);
    // A code without a program: no program documents.
    expect(analyticsProjection.targets(loggedAll([claim(PROMO, 'ann', 0)])[0]!)).to.have.length(4);
  });

  it('counts each figure on the day the service recorded it, and money per currency', () => {
    const docs = project(
      analyticsProjection,
      loggedAll([
        claim(REF, 'ann', 0),
        claim(REF, 'cat', 0, 23),
        conversion(REF, 'ann', 1),
        money('PurchaseRecorded', REF, 1, 999),
        money('RenewalRecorded', REF, 2, 999),
        money('PurchaseRecorded', REF, 2, 500, 'USD'),
        money('RefundRecorded', REF, 3, 999),
        churn(REF, 'ann', 3),
      ]),
    );
    const dayDoc = (offset: number) => docs.get(`${ANALYTICS_DAILY}/${dailyId(null, day(offset))}`);
    expect(dayDoc(0)).to.deep.equal({ scope: 'all', day: day(0), claims: 2, conversions: 0, churns: 0, refunds: 0, gross: {}, refunded: {} });
    expect(dayDoc(1)).to.include({ conversions: 1 });
    expect(dayDoc(1)!.gross).to.deep.equal({ EUR: 999 });
    expect(dayDoc(2)!.gross).to.deep.equal({ EUR: 999, USD: 500 });
    expect(dayDoc(3)).to.deep.include({ churns: 1, refunds: 1, refunded: { EUR: 999 }, gross: {} });
    // Not on the provider's occurred_at, a week earlier.
    expect(docs.has(`${ANALYTICS_DAILY}/${dailyId(null, day(-6))}`)).to.equal(false);
    const month = docs.get(`${ANALYTICS_CODE_PERIODS}/${codePeriodId('prog', day(0).slice(0, 7), 'BOB234')}`)!;
    expect(month).to.deep.include({ list: `program\u001fprog\u001f${day(0).slice(0, 7)}`, code: 'BOB234', claims: 2, conversions: 1, churns: 1, refunds: 1 });
    expect(month.net_best).to.equal(999); // EUR 1998 − 999; USD 500
    expect(docs.get(`${ANALYTICS_CODES}/BOB234`)).to.deep.include({
      code: 'BOB234',
      kind: 'referral',
      owner_id: 'bob',
      program_id: 'prog',
      first_day: day(0),
      last_day: day(3),
      claims: 2,
      conversions: 1,
    });
  });

  it('a churn recorded before schema v4 (no program_id) is read as null: counted for all and its code, in no program', () => {
    const { program_id: _program, ...v3 } = churn(REF, 'ann', 0).data as Record<string, unknown>;
    const old = toLogged({
      id: 'old-churn',
      type: 'UserChurned',
      stream: 'user-ann',
      revision: 3,
      position: 9n,
      recordedAt: T0,
      data: v3,
      metadata: { correlation_id: 'r', causation_id: 'r', actor: 'process:test', schema_version: 3 },
    });
    expect(old.data).to.deep.include({ program_id: null });
    expect(analyticsProjection.targets(old).map((ref) => ref.id)).to.deep.equal([
      dailyId(null, day(0)),
      codePeriodId(null, day(0), 'BOB234'),
      codePeriodId(null, day(0).slice(0, 7), 'BOB234'),
      'BOB234',
    ]);
  });

  it('ignores revenue of users who claimed nothing', () => {
    const [unattributed] = loggedAll([money('PurchaseRecorded', null, 0, 999)]);
    expect(analyticsProjection.targets(unattributed!)).to.deep.equal([]);
  });

  it('netBest: the largest gross − refunded of any currency, 0 without money', () => {
    expect(netBest({ gross: {}, refunded: {} })).to.equal(0);
    expect(netBest({ gross: { EUR: 100, USD: 300 }, refunded: { USD: 250 } })).to.equal(100);
    expect(netBest({ gross: {}, refunded: { EUR: 100 } })).to.equal(-100);
  });
});

describe('analytics queries', () => {
  it('periodsOf: whole calendar months where the range covers them, days elsewhere', () => {
    expect(periodsOf('2026-01-30', '2026-03-02')).to.deep.equal(['2026-01-30', '2026-01-31', '2026-02', '2026-03-01', '2026-03-02']);
    expect(periodsOf('2026-02-01', '2026-02-28')).to.deep.equal(['2026-02']);
    expect(periodsOf('2024-02-01', '2024-02-28')).to.have.length(28); // leap year: Feb 29 not covered
    expect(periodsOf('2026-05-05', '2026-05-05')).to.deep.equal(['2026-05-05']);
    let longest = 0;
    for (let start = 0; start < 800; start += 3) {
      const from = new Date(Date.UTC(2024, 0, 1) + start * DAY).toISOString().slice(0, 10);
      const to = new Date(Date.UTC(2024, 0, 1) + (start + 365) * DAY).toISOString().slice(0, 10);
      const periods = periodsOf(from, to);
      longest = Math.max(longest, periods.length);
      // The periods tile the range exactly.
      expect(periods.flatMap((period) => (period.length === 7 ? daysBetween(`${period}-01`, lastDayOf(period)) : [period]))).to.deep.equal(
        daysBetween(from, to),
      );
    }
    expect(longest).to.be.at.most(72);
  });

  it('daily: one entry per day, zeros included, by program, by code, by both', async () => {
    const store = await storeOf([
      claim(REF, 'ann', 0),
      claim(PROMO, 'cat', 0),
      conversion(REF, 'ann', 2),
      money('PurchaseRecorded', REF, 2, 999),
      money('RefundRecorded', PROMO, 2, 300, 'USD'),
    ]);
    const queries = new AnalyticsQueries(store);
    const all = await queries.daily({ from: day(-1), to: day(3), programId: null, code: null });
    expect(all.map((entry) => entry.date)).to.deep.equal([day(-1), day(0), day(1), day(2), day(3)]);
    expect(all[0]).to.deep.equal({ date: day(-1), claims: 0, conversions: 0, churns: 0, refunds: 0, revenue: [] });
    expect(all[1]).to.deep.include({ claims: 2 });
    expect(all[3]).to.deep.equal({
      date: day(2),
      claims: 0,
      conversions: 1,
      churns: 0,
      refunds: 1,
      revenue: [
        { currency: 'EUR', gross_minor: 999, refunded_minor: 0 },
        { currency: 'USD', gross_minor: 0, refunded_minor: 300 },
      ],
    });
    const program = await queries.daily({ from: day(0), to: day(2), programId: 'prog', code: null });
    expect(program.map((entry) => [entry.claims, entry.refunds])).to.deep.equal([
      [1, 0],
      [0, 0],
      [0, 0],
    ]);
    const promo = await queries.daily({ from: day(0), to: day(2), programId: null, code: 'WELCOME' });
    expect(promo.map((entry) => [entry.claims, entry.refunds])).to.deep.equal([
      [1, 0],
      [0, 0],
      [0, 1],
    ]);
    const both = await queries.daily({ from: day(0), to: day(2), programId: 'other', code: 'BOB234' });
    expect(both.every((entry) => entry.claims === 0 && entry.conversions === 0)).to.equal(true);
  });

  it('top codes: owner, kind and program of each code; ties by code', async () => {
    const ZED: CodeSource = { code: 'ZED999', type: 'referral', owner_id: 'zed', program_id: 'prog' };
    const store = await storeOf([claim(ZED, 'a', 0), claim(REF, 'b', 0), claim(PROMO, 'c', 1), claim(PROMO, 'd', 1), conversion(ZED, 'a', 1)]);
    const queries = new AnalyticsQueries(store);
    const top = await queries.topCodes({ from: day(0), to: day(1), programId: null, by: 'claims', limit: 10 });
    expect(top).to.deep.equal([
      { code: 'WELCOME', kind: 'promo', program_id: null, app_user_id: null, claims: 2, conversions: 0, revenue: [] },
      { code: 'BOB234', kind: 'referral', program_id: 'prog', app_user_id: 'bob', claims: 1, conversions: 0, revenue: [] },
      { code: 'ZED999', kind: 'referral', program_id: 'prog', app_user_id: 'zed', claims: 1, conversions: 1, revenue: [] },
    ]);
    expect((await queries.topCodes({ from: day(0), to: day(1), programId: null, by: 'conversions', limit: 10 })).map((row) => row.code)).to.deep.equal([
      'ZED999',
    ]);
    expect(await queries.topCodes({ from: day(0), to: day(1), programId: 'nothing', by: 'claims', limit: 10 })).to.deep.equal([]);
  });

  it('top codes among many tied codes: code ascending, in one list and across several', async () => {
    const promo = (index: number): CodeSource => ({ code: `T${String(index).padStart(3, '0')}`, type: 'promo', owner_id: `T${index}`, program_id: null });
    // 300 codes with one claim each on day 0, and 200 of them with one more on day 1 or 2.
    const history = [
      ...Array.from({ length: 300 }, (_, index) => claim(promo(299 - index), `a${index}`, 0)),
      ...Array.from({ length: 200 }, (_, index) => claim(promo(index * 1.5), `b${index}`, 1 + (index % 2))),
    ];
    const queries = new AnalyticsQueries(await storeOf(history));
    for (const [from, to, limit] of [
      [day(0), day(0), 10],
      [day(1), day(1), 7],
      [day(0), day(2), 25],
      [day(-5), day(5), 100],
    ] as const) {
      const query = { from, to, programId: null, by: 'claims' as const, limit };
      const top = (await queries.topCodes(query)).map(({ code, claims, conversions, revenue }) => ({ code, claims, conversions, revenue }));
      expect(top, JSON.stringify(query)).to.deep.equal(countTopCodes(history, query));
      expect(top).to.have.length(limit);
    }
  });

  it('top codes over many tied codes lets the event loop take turns between its reads (scale probe: 1.2 s held every request)', async () => {
    const promo = (index: number): CodeSource => ({ code: `T${String(index).padStart(3, '0')}`, type: 'promo', owner_id: `T${index}`, program_id: null });
    const history = Array.from({ length: 300 }, (_, index) => claim(promo(index), `a${index}`, index % 11));
    const store = await storeOf(history);
    const turns: string[] = [];
    for (const method of ['find', 'getMany'] as const) {
      const read = (store[method] as (...args: unknown[]) => Promise<unknown>).bind(store);
      (store as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
        turns.push('read');
        // Runs only if the query gives the event loop a turn before its next read.
        setImmediate(() => turns.push('other request'));
        return read(...args);
      };
    }
    const top = await new AnalyticsQueries(store).topCodes({ from: day(0), to: day(10), programId: null, by: 'claims', limit: 10 });
    expect(top).to.have.length(10);
    expect(turns.filter((turn) => turn === 'read').length).to.be.greaterThan(11);
    expect(turns.join(' ')).to.not.contain('read read');
  });

  it('top codes equal a ranking counted over the events, on random skewed histories (any range, measure, program, limit)', async () => {
    const history = randomHistory({ seed: 42, count: 3_000, codes: 60, start: new Date(T0.getTime() - 60 * DAY), days: 420 });
    // On SQLite: the memory store's find scans and sorts the whole collection on every call.
    const dir = tempDir('analytics-top');
    const db = openSqlite(dir);
    after(() => {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    const queries = new AnalyticsQueries(await storeOf(history, new SqliteReadStore(db)));
    const random = seeded(7);
    let compared = 0;
    for (let round = 0; round < 60; round += 1) {
      const start = Math.floor(random() * 400) - 50;
      const query = {
        from: day(start),
        to: day(start + Math.floor(random() * 366)),
        by: (['claims', 'conversions', 'revenue'] as const)[round % 3]!,
        programId: round % 4 === 0 ? 'p1' : null,
        limit: 1 + Math.floor(random() * 15),
      };
      const top = (await queries.topCodes(query)).map(({ code, claims, conversions, revenue }) => ({ code, claims, conversions, revenue }));
      expect(top, JSON.stringify(query)).to.deep.equal(countTopCodes(history, query));
      compared += top.length;
    }
    expect(compared).to.be.greaterThan(200);
  });
});

function lastDayOf(month: string): string {
  const [year, monthNumber] = month.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(year, monthNumber, 0)).toISOString().slice(0, 10);
}
