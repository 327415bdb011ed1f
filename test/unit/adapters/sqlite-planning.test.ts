import { expect } from 'chai';
import { STABLE_PARAM } from '../../../src/adapters/sqlite/sqlite-database.js';
import { SqliteEventStore } from '../../../src/adapters/sqlite/sqlite-event-store.js';
import { SqliteReadStore } from '../../../src/adapters/sqlite/sqlite-read-store.js';
import type { NewEvent } from '../../../src/ports/event-store.js';
import { recordedSqlite } from '../../support/recorded-sqlite.js';

const event = (stream: string, revision: number): NewEvent => ({
  id: `${stream}-${revision}`,
  type: revision % 2 === 0 ? 'Even' : 'Odd',
  data: { revision },
  metadata: { correlation_id: 'c', causation_id: 'c', actor: 'test', schema_version: 1 },
});

/**
 * The embedded stores write `STABLE_PARAM` where SQLite would otherwise plan a statement again
 * on every run (src/adapters/sqlite/sqlite-database.ts). These tests record every statement
 * the stores prepare while they answer, and check two things of each one that uses it: it
 * answers as a plain `?` would, and SQLite still searches an index for it (no statement turned
 * into a scan of a whole table).
 */
describe('SQLite statements with STABLE_PARAM: same answers, same indexes', () => {
  const sqlite = recordedSqlite();

  /** The query plan of every recorded statement that uses STABLE_PARAM, with its parameters bound to nulls. */
  function plansOfStableStatements(): { sql: string; plan: string[] }[] {
    return [...new Set(sqlite.prepared)]
      .filter((sql) => sql.includes(STABLE_PARAM))
      .map((sql) => {
        const statement = sqlite.db.prepare(`EXPLAIN QUERY PLAN ${sql}`);
        const params = Array.from({ length: (sql.match(/\?/g) ?? []).length }, () => null);
        return { sql, plan: (statement.all(...params) as { detail: string }[]).map((row) => row.detail) };
      });
  }

  it('the event store reads streams, their last revision and filtered pages through its indexes', async () => {
    const store = new SqliteEventStore(sqlite.db);
    for (const stream of ['a', 'b'])
      await store.append(
        stream,
        [0, 1, 2, 3].map((revision) => event(stream, revision)),
        'no_stream',
      );

    expect((await store.readStream('a', { fromRevision: 2 })).map((e) => e.revision)).to.deep.equal([2, 3]);
    expect((await store.readStream('a', { maxCount: 1 })).map((e) => e.revision)).to.deep.equal([0]);
    expect((await store.readStream('b', { direction: 'backwards', maxCount: 1 })).map((e) => e.revision)).to.deep.equal([3]);
    expect((await store.readAll({ after: null, limit: 3, filter: { types: ['Odd'] } })).map((e) => e.id)).to.deep.equal(['a-1', 'a-3', 'b-1']);
    await store.append('a', [event('a', 4)], 3);
    // A page of one stream by position (GET /admin/events?stream=): after its own event (position 2: a-1), after another's (6: b-1).
    expect((await store.readStream('a', { afterPosition: 2n, maxCount: 2 })).map((e) => e.revision)).to.deep.equal([2, 3]);
    expect((await store.readStream('a', { afterPosition: 6n })).map((e) => e.revision)).to.deep.equal([4]);

    expect((await store.readAll({ after: null, limit: 10, filter: { types: ['Even', 'Odd'] } })).length).to.equal(9);

    const plans = plansOfStableStatements();
    expect(plans.length).to.be.at.least(4);
    for (const { sql, plan } of plans) {
      expect(plan.join(' | '), sql).to.match(/USING (COVERING INDEX|INDEX|INTEGER PRIMARY KEY)/);
      expect(plan.join(' | '), sql).not.to.match(/TEMP B-TREE/);
    }
    // One type: through its index, in position order. Several (a follower's page): in position order, skipping the others.
    const typed = plans.filter(({ sql }) => sql.includes('type'));
    expect(typed.find(({ sql }) => sql.includes('type = '))!.plan.join(' | ')).to.match(/USING INDEX events_by_type/);
    expect(typed.find(({ sql }) => sql.includes('+type IN'))!.plan.join(' | ')).to.match(/USING INTEGER PRIMARY KEY/);
  });

  it('the read store finds documents by an indexed field through its index, in order and up to the limit', async () => {
    const store = new SqliteReadStore(sqlite.db);
    await store.ensureIndexes('things', [['code', 'created_at']]);
    await store.commitBatches([
      {
        projector: 'things',
        version: 1,
        after: null,
        position: 1n,
        changes: ['c', 'a', 'b'].map((id, index) => ({
          op: 'put',
          collection: 'things',
          id,
          doc: { code: index === 1 ? 'other' : 'same', created_at: `2026-11-2${index}` },
        })),
      },
    ]);

    const found = await store.find<{ code: string }>('things', { where: { code: 'same' }, orderBy: { field: 'created_at', direction: 'desc' }, limit: 1 });
    expect(found).to.deep.equal([{ code: 'same', created_at: '2026-11-22' }]);
    expect((await store.find('things', { where: { code: 'same' } })).length).to.equal(2);

    const plans = plansOfStableStatements().filter(({ sql }) => sql.includes('code'));
    expect(plans.length).to.be.at.least(1);
    for (const { sql, plan } of plans) expect(plan.join(' | '), sql).to.match(/USING (COVERING )?INDEX/);
  });
});
