import 'reflect-metadata';
import fs from 'node:fs';
import { expect } from 'chai';
import pino from 'pino';
import { analyticsProjection } from '../../../projections/analytics.js';
import { openSqlite, type SqliteConnection } from '../../../src/adapters/sqlite/sqlite-database.js';
import { SqliteEventStore } from '../../../src/adapters/sqlite/sqlite-event-store.js';
import { SqliteReadStore } from '../../../src/adapters/sqlite/sqlite-read-store.js';
import { RandomIds } from '../../../src/adapters/system/random-ids.js';
import { type CommandContext, EventLog } from '../../../src/application/event-log.js';
import { ProjectionRunner } from '../../../src/application/projections/projection-runner.js';
import { AnalyticsQueries } from '../../../src/application/queries/analytics-queries.js';
import type { DomainEvent } from '../../../src/domain/events/index.js';
import { claimAt, type CodeSource, conversionAt, moneyAt } from '../../support/analytics-history.js';
import { CountingReadStore } from '../../support/counting-read-store.js';
import { tempDir } from '../../support/temp-dir.js';

const HISTORY = 100_000;
const START = Date.parse('2025-06-01T00:00:00.000Z');
const context: CommandContext = { correlation_id: 'request-1', causation_id: 'request-1', actor: 'process:test' };
const source = (code: string): CodeSource => ({ code, type: 'referral', owner_id: `owner-of-${code}`, program_id: 'prog' });
/** 100,000 claims spread over 400 days: 250 a day. */
const historyAt = (index: number) => new Date(START + Math.floor(index / 250) * 86_400_000 + (index % 250) * 1_000).toISOString();

describe('analytics cost does not grow with history (instrumented read store)', function () {
  this.timeout(300_000);
  let dir: string;
  let db: SqliteConnection;
  let log: EventLog;
  let store: CountingReadStore;
  let runner: ProjectionRunner;

  async function append(stream: string, events: DomainEvent[]): Promise<void> {
    for (let start = 0; start < events.length; start += 2_000) await log.append(stream, events.slice(start, start + 2_000), 'any', context);
  }

  async function costOf(stream: string, events: DomainEvent[]) {
    await append(stream, events);
    store.resetCounts();
    while (await runner.processPage());
    return store.counts;
  }

  before(async () => {
    dir = tempDir('analytics-cost');
    db = openSqlite(dir);
    log = new EventLog(new SqliteEventStore(db), new RandomIds());
    store = new CountingReadStore(new SqliteReadStore(db));
    runner = new ProjectionRunner(log, store, [analyticsProjection], pino({ level: 'silent' }));
    await runner.init();
    // BUSY has 100,000 past claims (and conversions and revenue on some of them); FRESH none yet.
    const history: DomainEvent[] = [];
    for (let index = 0; index < HISTORY; index += 1) {
      history.push(claimAt(source('BUSY'), `claimer-${index}`, historyAt(index)));
      if (index % 10 === 0) history.push(conversionAt(source('BUSY'), `claimer-${index}`, historyAt(index)));
      if (index % 20 === 0) history.push(moneyAt('PurchaseRecorded', source('BUSY'), historyAt(index), 999));
    }
    await append('user-claimers', history);
    while (await runner.processPage());
  });

  after(async () => {
    await store.close();
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it(`a claim, a conversion and a purchase: a code with ${HISTORY.toLocaleString('en')} past claims costs what a new code does`, async function () {
    const at = historyAt(HISTORY - 1);
    const next = (code: string): DomainEvent[] => [
      claimAt(source(code), `next-${code}`, at),
      conversionAt(source(code), `next-${code}`, at),
      moneyAt('PurchaseRecorded', source(code), at, 999),
    ];
    // The last day of the history, for both: the busy code's day and month documents exist, the fresh code's do not.
    const busy = await costOf('user-next-busy', next('BUSY'));
    const fresh = await costOf('user-next-fresh', next('FRESH'));
    console.log(`      analytics cost of 3 events — busy code: ${JSON.stringify(busy)}; fresh code: ${JSON.stringify(fresh)}`);
    // Seven documents per event, each read (when it exists) and written once per page.
    expect(busy.documentsWritten).to.equal(fresh.documentsWritten);
    expect(busy.documentsWritten).to.equal(7);
    expect(busy.documentsRead).to.be.at.most(7);
    // Only the digits of larger counters differ.
    expect(busy.bytesWritten).to.be.at.most(fresh.bytesWritten + 7 * 24);
  });

  it('one claim alone: the same documents for the busy code as for a new one', async function () {
    const at = historyAt(HISTORY - 1);
    const busy = await costOf('user-one-busy', [claimAt(source('BUSY'), 'one-busy', at)]);
    const fresh = await costOf('user-one-fresh', [claimAt(source('NEWER'), 'one-fresh', at)]);
    expect(busy.documentsWritten).to.equal(fresh.documentsWritten);
    expect(busy.documentsWritten).to.equal(7);
    expect(busy.bytesWritten).to.be.at.most(fresh.bytesWritten + 7 * 24);
  });

  it('a daily series reads one document per day of the range, whatever the history', async function () {
    const queries = new AnalyticsQueries(store);
    store.resetCounts();
    const days = await queries.daily({ from: '2025-06-01', to: '2026-06-01', programId: null, code: 'BUSY' });
    expect(days).to.have.length(366);
    expect(days.reduce((sum, entry) => sum + entry.claims, 0)).to.equal(366 * 250);
    expect(store.counts.documentsRead).to.be.at.most(366);
  });

  it('top codes over a year read a few documents per period, not the history', async function () {
    const queries = new AnalyticsQueries(store);
    store.resetCounts();
    const top = await queries.topCodes({ from: '2025-06-01', to: '2026-06-01', programId: null, by: 'claims', limit: 10 });
    console.log(`      top codes over 366 days: ${store.counts.documentsRead} documents read`);
    expect(top[0]).to.deep.include({ code: 'BUSY', claims: 366 * 250 });
    // 13 periods (12 months and a day): each list read once, then each candidate's periods.
    expect(store.counts.documentsRead).to.be.below(200);
  });
});
