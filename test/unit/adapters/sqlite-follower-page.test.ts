import { expect } from 'chai';
import pino from 'pino';
import { SqliteEventStore } from '../../../src/adapters/sqlite/sqlite-event-store.js';
import { SqliteReadStore } from '../../../src/adapters/sqlite/sqlite-read-store.js';
import { RandomIds } from '../../../src/adapters/system/random-ids.js';
import { EventLog } from '../../../src/application/event-log.js';
import { ProjectionRunner } from '../../../src/application/projections/projection-runner.js';
import type { NewEvent } from '../../../src/ports/event-store.js';
import type { Projection } from '../../../projections/projection.js';
import { recordedSqlite } from '../../support/recorded-sqlite.js';

const event = (type: string, index: number): NewEvent => ({
  id: `${type}-${index}`,
  type,
  data: { index },
  metadata: { correlation_id: 'c', causation_id: 'c', actor: 'test', schema_version: 1 },
});

/**
 * A follower far behind whose types are rare (a webhook feeder started on a long log) must not
 * read the rest of the log in one statement: the embedded store reads at most a window of
 * positions per page, and the follower's checkpoint moves through it page by page.
 */
describe('SQLite follower pages read a bounded window of the log', () => {
  const sqlite = recordedSqlite();

  it('120 events of other types, then a rare one: each page reads 50 positions, the third finds it', async () => {
    const store = new SqliteEventStore(sqlite.db, { scanWindow: 50 });
    await store.append(
      'busy',
      Array.from({ length: 120 }, (_, index) => event('Common', index)),
      'no_stream',
    );
    const { position: rare } = await store.append('quiet', [event('Rare', 0)], 'no_stream');
    expect(rare).to.equal(121n);

    const first = await store.readPage({ after: null, limit: 10, types: ['Rare', 'Scarce'] });
    expect(first).to.deep.equal({ events: [], through: 50n, more: true });
    const second = await store.readPage({ after: first.through, limit: 10, types: ['Rare', 'Scarce'] });
    expect(second).to.deep.equal({ events: [], through: 100n, more: true });
    const third = await store.readPage({ after: second.through, limit: 10, types: ['Rare', 'Scarce'] });
    expect(third.events.map((found) => [found.id, found.position])).to.deep.equal([['Rare-0', 121n]]);
    expect(third.through).to.equal(121n);
    expect(third.more).to.equal(false);

    // The page's statement searches a range of the primary key, bounded on both sides.
    const pageSql = sqlite.prepared.find((sql) => sql.includes('+type IN') && sql.includes('position <= ?'))!;
    const plan = (sqlite.db.prepare(`EXPLAIN QUERY PLAN ${pageSql}`).all(0, 50, 'Rare', 'Scarce', 10) as { detail: string }[]).map((row) => row.detail);
    expect(plan.join(' | ')).to.match(/SEARCH events USING INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)/);
  });

  it('a page full before the window ends was read through its last event', async () => {
    const store = new SqliteEventStore(sqlite.db, { scanWindow: 50 });
    await store.append(
      'busy',
      Array.from({ length: 30 }, (_, index) => event(index % 3 === 0 ? 'Rare' : 'Common', index)),
      'no_stream',
    );
    const page = await store.readPage({ after: null, limit: 4, types: ['Rare'] });
    expect(page.events.map((found) => found.position)).to.deep.equal([1n, 4n, 7n, 10n]);
    expect(page.through).to.equal(10n);
    expect(page.more).to.equal(true);
  });

  it('a window past the head stops at the head, and events committed after it wait for the next page', async () => {
    const store = new SqliteEventStore(sqlite.db, { scanWindow: 50 });
    await store.append('a', [event('Rare', 0), event('Common', 1)], 'no_stream');
    const page = await store.readPage({ after: null, limit: 10, types: ['Rare'] });
    expect(page).to.deep.include({ through: 2n, more: false });
    await store.append('b', [event('Rare', 2)], 'no_stream');
    const next = await store.readPage({ after: page.through, limit: 10, types: ['Rare'] });
    expect(next.events.map((found) => found.position)).to.deep.equal([3n]);
    expect(next.through).to.equal(3n);
  });

  it('a projection runner far behind is told to read on through windows without its events, up to the head', async () => {
    const log = new EventLog(new SqliteEventStore(sqlite.db, { scanWindow: 50 }), new RandomIds());
    const context = { correlation_id: 'c', causation_id: 'c', actor: 'test' };
    const counted = { type: 'PaymentCustomerClaimCounted' as const, data: { claimers: 1 } };
    const released = { type: 'PaymentCustomerClaimReleased' as const, data: { claimers: 0 } };
    await log.append(
      'payment-customer-busy',
      Array.from({ length: 400 }, () => counted),
      'no_stream',
      context,
    );
    const { position } = await log.append('payment-customer-quiet', [released], 'no_stream', context);
    const releases: Projection = {
      name: 'releases',
      version: 1,
      collections: [{ name: 'releases', indexes: [] }],
      eventTypes: ['PaymentCustomerClaimReleased'],
      targets: (logged) => [{ collection: 'releases', id: logged.stream }],
      evolve: (_ref, _doc, logged) => ({ position: String(logged.position) }),
    };
    const readStore = new SqliteReadStore(sqlite.db);
    const runner = new ProjectionRunner(log, readStore, [releases], pino({ level: 'silent' }));
    await runner.init();
    // Nine windows of 50 positions, eight of them without its event: each page says more is waiting
    // (so LogFollower reads on at once rather than waiting for an append), the ninth reaches the head.
    const answers: boolean[] = [];
    do answers.push(await runner.processPage());
    while (answers[answers.length - 1]);
    expect(answers).to.deep.equal([true, true, true, true, true, true, true, true, false]);
    expect(await readStore.get('releases', 'payment-customer-quiet')).to.deep.equal({ position: String(position) });
    expect(runner.lowestCheckpoint()).to.equal(position);
  });
});
