import 'reflect-metadata';
import { expect } from 'chai';
import type { ExpirySweep } from '../../../src/application/maintenance/expiry-sweep.js';
import { EventQueries } from '../../../src/application/queries/event-queries.js';
import { SqliteEventStore } from '../../../src/adapters/sqlite/sqlite-event-store.js';
import type { EventStore, NewEvent, ReadStreamOptions, RecordedEvent } from '../../../src/ports/event-store.js';
import type { ReadStore } from '../../../src/ports/read-store.js';
import { recordedSqlite } from '../../support/recorded-sqlite.js';

const event = (index: number): NewEvent => ({
  id: `e-${index}`,
  type: index % 3 === 0 ? 'Third' : 'Other',
  data: { index },
  metadata: { correlation_id: 'c', causation_id: 'c', actor: 'test', schema_version: 1 },
});

/** An event store that counts the events its stream reads hand back. */
function counting(store: EventStore) {
  const counted = { events: 0, reads: 0 };
  const readStream = store.readStream.bind(store);
  store.readStream = async (stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> => {
    const events = await readStream(stream, options);
    counted.reads += 1;
    counted.events += events.length;
    return events;
  };
  return counted;
}

describe('EventQueries: GET /admin/events?stream= pages a long stream without reading it whole', () => {
  const sqlite = recordedSqlite();

  /** `user-hot` with 30 events, every third of type `Third`. */
  async function thirtyEvents(): Promise<SqliteEventStore> {
    const store = new SqliteEventStore(sqlite.db);
    await store.append(
      'user-hot',
      Array.from({ length: 30 }, (_, i) => event(i)),
      'no_stream',
    );
    return store;
  }

  /** The revisions of `user-hot`, paged 100 at a time to the empty page at its end. */
  async function everyRevision(queries: EventQueries, newestFirst: boolean): Promise<number[]> {
    const seen: number[] = [];
    let after: bigint | null = null;
    for (;;) {
      const page = await queries.page({ after, limit: 100, stream: 'user-hot', streamPrefix: null, types: null, newestFirst });
      seen.push(...page.events.map((shown) => shown.revision));
      if (page.events.length === 0) return seen;
      after = BigInt(page.next_after!);
    }
  }

  /** `user-hot` with 2,000 events, another stream's event after every 200 of them. */
  async function hotStream(): Promise<SqliteEventStore> {
    const store = new SqliteEventStore(sqlite.db);
    let revision = -1;
    for (let start = 0; start < 2_000; start += 200) {
      await store.append(
        'user-hot',
        Array.from({ length: 200 }, (_, i) => event(start + i)),
        revision === -1 ? 'no_stream' : revision,
      );
      revision += 200;
      await store.append(`user-other-${start}`, [{ ...event(0), id: `other-${start}` }], 'no_stream');
    }
    return store;
  }

  it('paging a stream of 2,000 events 100 at a time reads each event once, with other streams in between', async () => {
    const store = await hotStream();
    const counted = counting(store);
    const seen = await everyRevision(new EventQueries(store, {} as ReadStore, {} as ExpirySweep), false);
    expect(seen).to.deep.equal(Array.from({ length: 2_000 }, (_, i) => i));
    // 20 full pages and the empty one at the end; each event handed back once.
    expect(counted.events).to.equal(2_000);
    expect(counted.reads).to.equal(21);
  });

  it('a type filter reads on until the page is full, and the next page goes on after its last event', async () => {
    const store = await thirtyEvents();
    const queries = new EventQueries(store, {} as ReadStore, {} as ExpirySweep);
    const first = await queries.page({ after: null, limit: 4, stream: 'user-hot', streamPrefix: null, types: ['Third'], newestFirst: false });
    expect(first.events.map((shown) => shown.data.index)).to.deep.equal([0, 3, 6, 9]);
    const second = await queries.page({
      after: BigInt(first.next_after!),
      limit: 4,
      stream: 'user-hot',
      streamPrefix: null,
      types: ['Third'],
      newestFirst: false,
    });
    expect(second.events.map((shown) => shown.data.index)).to.deep.equal([12, 15, 18, 21]);
    // A later read that finds more than the page has room for: the page still holds `limit` events.
    const dense = await queries.page({ after: null, limit: 4, stream: 'user-hot', streamPrefix: null, types: ['Other'], newestFirst: false });
    expect(dense.events.map((shown) => shown.data.index)).to.deep.equal([1, 2, 4, 5]);
  });

  it('newest first (order=desc), 100 at a time: each event once, from the last to the first', async () => {
    const store = await hotStream();
    const counted = counting(store);
    const seen = await everyRevision(new EventQueries(store, {} as ReadStore, {} as ExpirySweep), true);
    expect(seen).to.deep.equal(Array.from({ length: 2_000 }, (_, i) => 1_999 - i));
    expect(counted.events).to.equal(2_000);
    expect(counted.reads).to.equal(21);
  });

  it('newest first with a type filter reads back until the page is full, and stops at the first event', async () => {
    const store = await thirtyEvents();
    const queries = new EventQueries(store, {} as ReadStore, {} as ExpirySweep);
    const query = { limit: 4, stream: 'user-hot', streamPrefix: null, types: ['Third'], newestFirst: true };
    const first = await queries.page({ ...query, after: null });
    expect(first.events.map((shown) => shown.data.index)).to.deep.equal([27, 24, 21, 18]);
    const second = await queries.page({ ...query, after: BigInt(first.next_after!) });
    expect(second.events.map((shown) => shown.data.index)).to.deep.equal([15, 12, 9, 6]);
    const last = await queries.page({ ...query, after: BigInt(second.next_after!) });
    expect(last.events.map((shown) => shown.data.index)).to.deep.equal([3, 0]);
  });

  it('a filter that reads on through a long stream reads 1,000 events at a time whatever the page size, and lets the event loop take turns between reads (scale probes: 0.6 s held every request; limit=1 read one event at a time)', async () => {
    const store = await hotStream();
    const turns: string[] = [];
    const readStream = store.readStream.bind(store);
    store.readStream = async (stream: string, options?: ReadStreamOptions) => {
      turns.push('read');
      // Runs only if the query gives the event loop a turn before its next read.
      setImmediate(() => turns.push('other request'));
      return readStream(stream, options);
    };
    const queries = new EventQueries(store, {} as ReadStore, {} as ExpirySweep);
    const page = await queries.page({ after: null, limit: 1, stream: 'user-hot', streamPrefix: null, types: ['Missing'], newestFirst: false });
    expect(page.events).to.deep.equal([]);
    const reads = turns.filter((turn) => turn === 'read').length;
    expect(reads).to.equal(3);
    // Between any two reads, another turn ran.
    expect(turns.join(' ')).to.not.contain('read read');
  });
});
