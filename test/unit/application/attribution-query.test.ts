import 'reflect-metadata';
import { expect } from 'chai';
import { ATTRIBUTION, ATTRIBUTION_TOTALS, type AttributionDay } from '../../../projections/attribution.js';
import { MemoryReadStore } from '../../../src/adapters/memory/memory-read-store.js';
import { RevenueQueries } from '../../../src/application/queries/revenue-queries.js';
import type { FindQuery } from '../../../src/ports/read-store.js';

/** A read store that counts the documents its finds hand back. */
class CountingStore extends MemoryReadStore {
  handedBack = 0;
  override async find<T extends Record<string, unknown>>(collection: string, query?: FindQuery): Promise<T[]> {
    const found = await super.find<T>(collection, query);
    this.handedBack += found.length;
    return found;
  }
}

describe('attribution queries', () => {
  it('reads the days in the range only: a range costs the same after 400 days of history as after one', async () => {
    const store = new CountingStore();
    const days = Array.from({ length: 400 }, (_, index) => new Date(Date.UTC(2025, 0, 1) + index * 86_400_000).toISOString().slice(0, 10));
    const doc = (day: string): AttributionDay => ({
      dimension: 'code',
      group: 'BOB234',
      day,
      claims: 1,
      conversions: 0,
      refunds: 0,
      gross: { EUR: 100 },
      refunded: {},
    });
    await store.commitBatches([
      {
        projector: 'attribution',
        version: 2,
        after: null,
        position: 1n,
        changes: days.map((day) => ({ op: 'put' as const, collection: ATTRIBUTION, id: `code\u001fBOB234\u001f${day}`, doc: doc(day) })),
      },
    ]);
    const queries = new RevenueQueries(store);
    const [row] = await queries.attribution('code', days[390]!, days[392]!);
    expect(row).to.deep.include({ group: 'BOB234', claims: 3 });
    expect(row!.revenue).to.deep.equal([{ currency: 'EUR', gross_minor: 300, refunded_minor: 0 }]);
    expect(store.handedBack).to.equal(3);
  });

  it('all time reads one total per group, not every day behind it', async () => {
    const store = new CountingStore();
    const days = Array.from({ length: 400 }, (_, index) => new Date(Date.UTC(2025, 0, 1) + index * 86_400_000).toISOString().slice(0, 10));
    const counts = { claims: 1, conversions: 0, refunds: 0, gross: { EUR: 100 }, refunded: {} };
    await store.commitBatches([
      {
        projector: 'attribution',
        version: 3,
        after: null,
        position: 1n,
        changes: [
          ...days.map((day) => ({
            op: 'put' as const,
            collection: ATTRIBUTION,
            id: `code\u001fBOB234\u001f${day}`,
            doc: { dimension: 'code', group: 'BOB234', day, ...counts },
          })),
          {
            op: 'put' as const,
            collection: ATTRIBUTION_TOTALS,
            id: 'code\u001fBOB234',
            doc: { dimension: 'code', group: 'BOB234', ...counts, claims: 400, gross: { EUR: 40_000 } },
          },
        ],
      },
    ]);
    const [row] = await new RevenueQueries(store).attribution('code', null, null);
    expect(row).to.deep.include({ group: 'BOB234', claims: 400 });
    expect(row!.revenue).to.deep.equal([{ currency: 'EUR', gross_minor: 40_000, refunded_minor: 0 }]);
    expect(store.handedBack).to.equal(1);
  });
});
