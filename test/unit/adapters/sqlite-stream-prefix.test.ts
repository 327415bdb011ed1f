import { expect } from 'chai';
import { prefixUpperBound, SqliteEventStore } from '../../../src/adapters/sqlite/sqlite-event-store.js';
import type { LogFilter, NewEvent, RecordedEvent } from '../../../src/ports/event-store.js';
import { recordedSqlite } from '../../support/recorded-sqlite.js';

const metadata = { correlation_id: 'c', causation_id: 'c', actor: 'test', schema_version: 1 };
let counter = 0;
const event = (type: string): NewEvent => {
  counter += 1;
  return { id: `e${counter}`, type, data: {}, metadata };
};

/**
 * GET /admin/events?stream_prefix= and `npm run export-events --stream-prefix` on the embedded
 * store: a prefix with few events is read through the stream index, one with many by a scan in
 * position order. Both ways answer the same pages.
 */
describe('SQLite: reading the log by stream prefix', () => {
  const sqlite = recordedSqlite();

  /** A log of 60 `user-` streams' events with a few affiliates' and odd names among them. */
  async function log(store: SqliteEventStore): Promise<void> {
    const revisions = new Map<string, number>();
    const append = async (stream: string, type = 'Thing') => {
      const revision = revisions.get(stream) ?? -1;
      await store.append(stream, [event(type)], revision === -1 ? 'no_stream' : revision);
      revisions.set(stream, revision + 1);
    };
    for (let i = 0; i < 60; i++) {
      await append(`user-${i % 7}`, i % 2 === 0 ? 'Thing' : 'Other');
      if (i % 9 === 0) await append(`affiliate-${i % 2 === 0 ? 'a1' : 'a10'}`, i % 4 === 0 ? 'Thing' : 'Other');
      if (i === 20) {
        await append('affiliate-a2');
        await append('affiliate\u{10FFFF}x');
        await append('affiliatf');
        await append('\u{10FFFF}\u{10FFFF}');
        await append('user-😀');
      }
    }
  }

  async function pages(store: SqliteEventStore, filter: LogFilter, limit: number): Promise<string[]> {
    const ids: string[] = [];
    for (let after: bigint | null = null; ; ) {
      const page: RecordedEvent[] = await store.readAll({ after, limit, filter });
      ids.push(...page.map((found) => found.id));
      if (page.length < limit) return ids;
      after = page[page.length - 1]!.position;
    }
  }

  const filters: LogFilter[] = [
    { streamPrefixes: ['affiliate-a1'] },
    { streamPrefixes: ['affiliate-'] },
    { streamPrefixes: ['affiliate'] },
    { streamPrefixes: ['user-'] },
    { streamPrefixes: ['user-3'] },
    { streamPrefixes: ['\u{10FFFF}'] },
    { streamPrefixes: ['user-😀'] },
    { streamPrefixes: ['nobody-'] },
    { streamPrefixes: ['affiliate-a1'], types: ['Thing'] },
    { streamPrefixes: ['user-'], types: ['Thing', 'Other'] },
  ];

  it('answers every prefix, type and page the same through the index and by a scan, in position order', async () => {
    const byIndex = new SqliteEventStore(sqlite.db);
    await log(byIndex);
    const byScan = new SqliteEventStore(sqlite.db, { sparsePrefixEvents: 0 });
    const everything = await byIndex.readAll({ after: null, limit: 10_000 });
    for (const filter of filters) {
      const prefix = filter.streamPrefixes![0]!;
      const expected = everything
        .filter((found) => found.stream.startsWith(prefix) && (filter.types === undefined || filter.types.includes(found.type)))
        .map((found) => found.id);
      for (const limit of [1, 3, 100]) {
        expect(await pages(byIndex, filter, limit), `${JSON.stringify(filter)} by ${limit}, index`).to.deep.equal(expected);
        expect(await pages(byScan, filter, limit), `${JSON.stringify(filter)} by ${limit}, scan`).to.deep.equal(expected);
      }
    }
    expect(await pages(byIndex, { streamPrefixes: ['affiliate'] }, 100)).to.have.length(9);
  });

  it('reads a sparse prefix through the stream index (never the log after `after`), a dense one in position order', async () => {
    const store = new SqliteEventStore(sqlite.db, { sparsePrefixEvents: 20 });
    await log(store);
    await store.readAll({ after: null, limit: 5, filter: { streamPrefixes: ['affiliate-'] } });
    await store.readAll({ after: null, limit: 5, filter: { streamPrefixes: ['user-'] } });
    const plans = [...new Set(sqlite.prepared)]
      .filter((sql) => sql.includes('FROM events WHERE') && sql.includes('stream'))
      .map((sql) => {
        const params = Array.from({ length: (sql.match(/\?/g) ?? []).length }, () => null);
        return { sql, plan: (sqlite.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((step) => step.detail).join(' | ') };
      });
    const count = plans.filter(({ sql }) => sql.includes('count(*)'));
    const sparse = plans.filter(({ sql }) => sql.includes('stream >= ?') && !sql.includes('count(*)'));
    const dense = plans.filter(({ sql }) => sql.includes('substr(stream'));
    expect([count.length, sparse.length, dense.length]).to.deep.equal([1, 1, 1]);
    expect(count[0]!.plan).to.match(/SEARCH events USING COVERING INDEX sqlite_autoindex_events_2 \(stream>\? AND stream<\?\)/);
    expect(sparse[0]!.plan).to.match(/SEARCH events USING INDEX sqlite_autoindex_events_2 \(stream>\? AND stream<\?\)/);
    expect(sparse[0]!.plan).not.to.match(/SCAN events/);
    expect(dense[0]!.plan).to.match(/SEARCH events USING INTEGER PRIMARY KEY \(rowid>\?\)/);
    expect(dense[0]!.plan).not.to.match(/TEMP B-TREE/);
  });

  it("bounds a prefix's streams by the least string above them all", () => {
    expect(prefixUpperBound('user-')).to.equal('user.');
    expect(prefixUpperBound('a\u{10FFFF}')).to.equal('b');
    expect(prefixUpperBound('a\u{10FFFF}\u{10FFFF}')).to.equal('b');
    expect(prefixUpperBound('\uD7FF')).to.equal('\uE000');
    expect(prefixUpperBound('\u{10FFFF}')).to.equal(null);
    expect(prefixUpperBound('')).to.equal(null);
  });
});
