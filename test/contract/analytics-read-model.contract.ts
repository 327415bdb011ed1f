import 'reflect-metadata';
import { expect } from 'chai';
import pino from 'pino';
import { ANALYTICS_CODE_PERIODS, ANALYTICS_CODES, ANALYTICS_DAILY, analyticsProjection } from '../../projections/analytics.js';
import { MemoryEventStore } from '../../src/adapters/memory/memory-event-store.js';
import { RandomIds } from '../../src/adapters/system/random-ids.js';
import { EventLog } from '../../src/application/event-log.js';
import { replayProjections } from '../../src/application/projections/projection-replay.js';
import { ProjectionRunner } from '../../src/application/projections/projection-runner.js';
import { AnalyticsQueries } from '../../src/application/queries/analytics-queries.js';
import type { DomainEvent } from '../../src/domain/events/index.js';
import type { ReadStore } from '../../src/ports/read-store.js';
import { countDaily, countTopCodes, randomHistory, seeded } from '../support/analytics-history.js';
import type { OpenContractSubject } from './contract-subject.js';

const START = new Date('2026-01-20T00:00:00.000Z');
const day = (offset: number) => new Date(START.getTime() + offset * 86_400_000).toISOString().slice(0, 10);

/** Every document of the analytics read model, by collection, in id order. */
async function documents(store: ReadStore) {
  const all: Record<string, unknown[]> = {};
  for (const collection of [ANALYTICS_DAILY, ANALYTICS_CODE_PERIODS, ANALYTICS_CODES]) all[collection] = await store.find(collection);
  return all;
}

/**
 * The analytics read model on a read store adapter: projected by the runner from a log, its
 * daily series and top codes equal what is counted over the events, and a replay rebuilds
 * exactly the same documents. The store must be empty of analytics collections (a fresh
 * database per suite on shared servers).
 */
export function analyticsReadModelContract(name: string, open: OpenContractSubject<ReadStore>): void {
  describe(`analytics read model contract: ${name}`, function () {
    this.timeout(120_000);
    let dispose: () => Promise<void>;
    let store: ReadStore;
    let log: EventLog;
    let history: DomainEvent[];

    before(async () => {
      ({ store, dispose } = await open());
      log = new EventLog(new MemoryEventStore(), new RandomIds());
      history = randomHistory({ seed: 11, count: 1_500, codes: 40, start: START, days: 200 });
      const context = { correlation_id: 'analytics-contract', causation_id: 'analytics-contract', actor: 'process:test' };
      for (let index = 0; index < history.length; index += 100) await log.append(`user-u${index}`, history.slice(index, index + 100), 'any', context);
      const runner = new ProjectionRunner(log, store, [analyticsProjection], pino({ level: 'silent' }));
      await runner.init();
      while (await runner.processPage());
    });

    after(async () => dispose());

    it('the daily series equals the count over the log: all, by program, by code, by both', async () => {
      const queries = new AnalyticsQueries(store);
      for (const filter of [
        { programId: null, code: null },
        { programId: 'p1', code: null },
        { programId: null, code: 'C000' },
        { programId: 'p1', code: 'C001' },
        { programId: 'p2', code: 'C001' },
      ]) {
        const series = await queries.daily({ from: day(-3), to: day(205), ...filter });
        expect(series, JSON.stringify(filter)).to.deep.equal(countDaily(history, day(-3), day(205), filter));
      }
    });

    it('top codes equal the ranking counted over the log', async () => {
      const queries = new AnalyticsQueries(store);
      const random = seeded(3);
      for (let round = 0; round < 9; round += 1) {
        const start = Math.floor(random() * 200) - 10;
        const query = {
          from: day(start),
          to: day(start + Math.floor(random() * 200)),
          by: (['claims', 'conversions', 'revenue'] as const)[round % 3]!,
          programId: round % 4 === 1 ? 'p2' : null,
          limit: 1 + Math.floor(random() * 12),
        };
        const top = (await queries.topCodes(query)).map(({ code, claims, conversions, revenue }) => ({ code, claims, conversions, revenue }));
        expect(top, JSON.stringify(query)).to.deep.equal(countTopCodes(history, query));
      }
    });

    it('a replay rebuilds exactly the same documents', async () => {
      const live = await documents(store);
      expect(live[ANALYTICS_CODES]).to.have.length(40);
      expect(await replayProjections(log, store, [analyticsProjection], { pageSize: 97, flushDocuments: 500 })).to.equal('switched');
      expect(await documents(store)).to.deep.equal(live);
    });
  });
}
