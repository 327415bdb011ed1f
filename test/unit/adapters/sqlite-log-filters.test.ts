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
 * GET /admin/events?stream_prefix=&type= and `npm run export-events` on the embedded
 * store: a prefix or set of types with few events is read through its index, one with many by a scan in
 * position order. Both ways answer the same pages.
 */
describe('SQLite: reading the log by stream prefix and by types', () => {
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
        await append('user-5', 'Rare');
        await append('affiliate-a1', 'Rarer');
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
    { types: ['Rare', 'Rarer'] },
    { types: ['Rare', 'Thing'] },
    { streamPrefixes: ['user-'], types: ['Rare', 'Rarer'] },
    { streamPrefixes: ['affiliate-'], types: ['Rare', 'Rarer', 'Other'] },
  ];

  it('answers every prefix, type and page the same through the index and by a scan, in position order', async () => {
    const byIndex = new SqliteEventStore(sqlite.db);
    await log(byIndex);
    const byScan = new SqliteEventStore(sqlite.db, { sparseFilterEvents: 0 });
    const everything = await byIndex.readAll({ after: null, limit: 10_000 });
    for (const filter of filters) {
      const prefix = filter.streamPrefixes?.[0] ?? '';
      const expected = everything
        .filter((found) => found.stream.startsWith(prefix) && (filter.types === undefined || filter.types.includes(found.type)))
        .map((found) => found.id);
      for (const limit of [1, 3, 100]) {
        expect(await pages(byIndex, filter, limit), `${JSON.stringify(filter)} by ${limit}, index`).to.deep.equal(expected);
        expect(await pages(byScan, filter, limit), `${JSON.stringify(filter)} by ${limit}, scan`).to.deep.equal(expected);
      }
    }
    expect(await pages(byIndex, { streamPrefixes: ['affiliate'] }, 100)).to.have.length(10);
  });

  it('reads a sparse prefix or set of types through its index (never the log after `after`), a dense one in position order', async () => {
    const store = new SqliteEventStore(sqlite.db, { sparseFilterEvents: 20 });
    await log(store);
    const planOf = async (filter: LogFilter): Promise<string> => {
      const before = new Set(sqlite.prepared);
      await store.readAll({ after: null, limit: 5, filter });
      const [page, ...more] = sqlite.prepared.filter((sql) => !before.has(sql) && sql.startsWith('SELECT *'));
      expect(more, JSON.stringify(filter)).to.deep.equal([]);
      const params = Array.from({ length: (page!.match(/\?/g) ?? []).length }, () => null);
      return (sqlite.db.prepare(`EXPLAIN QUERY PLAN ${page}`).all(...params) as { detail: string }[]).map((step) => step.detail).join(' | ');
    };
    const byStream = /SEARCH events USING INDEX sqlite_autoindex_events_2 \(stream>\? AND stream<\?\)/;
    const byTypes = /SEARCH events USING INDEX events_by_type \(type=\?\)/;
    const inOrder = /SEARCH events USING INTEGER PRIMARY KEY \(rowid>\?\)/;
    const sparse: [LogFilter, RegExp][] = [
      [{ streamPrefixes: ['affiliate-'] }, byStream],
      [{ streamPrefixes: ['affiliate-'], types: ['Thing'] }, byStream],
      [{ types: ['Rare', 'Rarer'] }, byTypes],
      [{ streamPrefixes: ['user-'], types: ['Rare', 'Rarer'] }, byTypes],
    ];
    for (const [filter, index] of sparse) {
      const plan = await planOf(filter);
      expect(plan, JSON.stringify(filter)).to.match(index);
      expect(plan, JSON.stringify(filter)).not.to.match(/SCAN events/);
    }
    for (const filter of [{ streamPrefixes: ['user-'] }, { types: ['Thing', 'Other'] }]) {
      const plan = await planOf(filter);
      expect(plan, JSON.stringify(filter)).to.match(inOrder);
      expect(plan, JSON.stringify(filter)).not.to.match(/TEMP B-TREE/);
    }
    // The counts that decide read index entries only, at most `sparseFilterEvents` of them.
    const counts = [...new Set(sqlite.prepared)].filter((sql) => sql.includes('count(*)'));
    expect(counts).to.have.length(2);
    for (const sql of counts) {
      const params = Array.from({ length: (sql.match(/\?/g) ?? []).length }, () => null);
      const plan = (sqlite.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((step) => step.detail).join(' | ');
      expect(plan, sql).to.match(/USING COVERING INDEX/);
    }
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
