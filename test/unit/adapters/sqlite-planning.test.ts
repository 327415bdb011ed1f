import { expect } from 'chai';
import { STABLE_PARAM } from '../../../src/adapters/sqlite/sqlite-database.js';
import { SqliteEventStore } from '../../../src/adapters/sqlite/sqlite-event-store.js';
import { SqliteReadStore } from '../../../src/adapters/sqlite/sqlite-read-store.js';
import { SqliteWebhookOutbox } from '../../../src/adapters/sqlite/sqlite-webhook-outbox.js';
import { CREDIT_LEDGER, creditLedgerProjection } from '../../../projections/credit-ledger.js';
import type { NewEvent } from '../../../src/ports/event-store.js';
import { recordedSqlite } from '../../support/recorded-sqlite.js';

const event = (stream: string, revision: number): NewEvent => ({
  id: `${stream}-${revision}`,
  type: revision % 2 === 0 ? 'Even' : 'Odd',
  data: { revision },
  metadata: { correlation_id: 'c', causation_id: 'c', actor: 'test', schema_version: 1 },
});

/** The query plan of every statement `sqlite` recorded that `which` picks, with its parameters bound to nulls. */
function plansOf(sqlite: ReturnType<typeof recordedSqlite>, which: (sql: string) => boolean): { sql: string; plan: string[] }[] {
  return [...new Set(sqlite.prepared)].filter(which).map((sql) => {
    const statement = sqlite.db.prepare(`EXPLAIN QUERY PLAN ${sql}`);
    const params = Array.from({ length: (sql.match(/\?/g) ?? []).length }, () => null);
    return { sql, plan: (statement.all(...params) as { detail: string }[]).map((row) => row.detail) };
  });
}

/**
 * The embedded stores write `STABLE_PARAM` where SQLite would otherwise plan a statement again
 * on every run (src/adapters/sqlite/sqlite-database.ts). These tests record every statement
 * the stores prepare while they answer, and check two things of each one that uses it: it
 * answers as a plain `?` would, and SQLite still searches an index for it (no statement turned
 * into a scan of a whole table).
 */
describe('SQLite statements with STABLE_PARAM: same answers, same indexes', () => {
  const sqlite = recordedSqlite();

  const plansOfStableStatements = () => plansOf(sqlite, (sql) => sql.includes(STABLE_PARAM));

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

    // Several types as a log of many such events has them (a sparse set: test/unit/adapters/sqlite-log-filters.test.ts).
    const dense = new SqliteEventStore(sqlite.db, { sparseFilterEvents: 0 });
    expect((await dense.readAll({ after: null, limit: 10, filter: { types: ['Even', 'Odd'] } })).length).to.equal(9);

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

describe('SQLite: the credit ledger of one key', () => {
  const sqlite = recordedSqlite();

  it("is read through an index on the user and the key, not by walking the user's rows of other keys", async () => {
    const store = new SqliteReadStore(sqlite.db);
    for (const { name, indexes } of creditLedgerProjection.collections) await store.ensureIndexes(name, indexes);
    const row = (id: number, key: string) => ({
      op: 'put' as const,
      collection: CREDIT_LEDGER,
      id: `r${id}`,
      doc: { app_user_id: 'u', key, seq: String(id).padStart(20, '0') },
    });
    await store.commitBatches([
      {
        projector: 'credit_ledger',
        version: 1,
        after: null,
        position: 1n,
        changes: [...Array.from({ length: 50 }, (_, id) => row(id, 'gems')), row(50, 'rare')],
      },
    ]);
    await store.find(CREDIT_LEDGER, { where: { app_user_id: 'u' }, orderBy: { field: 'seq', direction: 'asc' }, limit: 3 });
    const query = { where: { app_user_id: 'u', key: 'rare' }, orderBy: { field: 'seq', direction: 'asc' as const } };
    const pages = [
      await store.find(CREDIT_LEDGER, { ...query, limit: 3 }),
      await store.find(CREDIT_LEDGER, { ...query, atLeast: { field: 'seq', value: '0' }, limit: 3 }),
    ];
    for (const page of pages) expect(page.map((doc) => doc.key)).to.deep.equal(['rare']);

    const plans = plansOf(sqlite, (sql) => sql.startsWith('SELECT') && sql.includes('$.seq'));
    expect(plans.length).to.equal(3);
    // (The temporary tree orders rows of one `seq` by id: the store's tie-break, within equal values only.)
    for (const { sql, plan: steps } of plans) {
      const plan = steps.join(' | ');
      if (sql.includes('$.key'))
        expect(plan, sql).to.match(/SEARCH rm_credit_ledger USING INDEX idx_credit_ledger_app_user_id_key_seq \(<expr>=\? AND <expr>=\?/);
      else expect(plan, sql).to.match(/SEARCH rm_credit_ledger USING INDEX idx_credit_ledger_app_user_id_seq /);
    }
  });
});

describe('SQLite: the webhook outbox pages by status and forgets old deliveries through indexes', () => {
  const sqlite = recordedSqlite();

  it("a deliveries page by status, the retention sweep and an endpoint's removal each search an index instead of reading every message", async () => {
    const outbox = new SqliteWebhookOutbox(sqlite.db);
    await outbox.list('ep', { status: 'failed', after: 5n, limit: 20 });
    await outbox.removeDelivered('2026-01-01T00:00:00.000Z', 10);
    await outbox.removeEndpoint('ep');
    const plans = plansOf(sqlite, (sql) => sql.includes(' AND status = ?') || sql.startsWith('DELETE FROM webhook_messages WHERE (endpoint_id'));
    expect(plans.map(({ plan }) => plan.join(' | '))).to.have.length(3);
    const byStatus = plans.find(({ sql }) => sql.startsWith('SELECT * FROM webhook_messages'))!.plan.join(' | ');
    expect(byStatus).to.match(/USING INDEX webhook_messages_by_status \(endpoint_id=\? AND status=\? AND position>\?\)/);
    const retention = plans.find(({ sql }) => sql.startsWith('DELETE') && sql.includes("status = 'delivered'"))!.plan.join(' | ');
    expect(retention).to.match(/USING (COVERING )?INDEX webhook_messages_delivered \(delivered_at<\?\)/);
    const removal = plans.find(({ sql }) => sql.startsWith('DELETE') && sql.includes('WHERE endpoint_id = ? AND position <= ? LIMIT'))!.plan.join(' | ');
    expect(removal).to.match(/USING (COVERING )?INDEX \w+ \(endpoint_id=\? AND position<\?\)/);
    for (const { sql, plan } of plans) expect(plan.join(' | '), sql).not.to.match(/SCAN webhook_messages\b(?! USING)/);
  });

  it('finds the due endpoints and counts each queue by index searches, one per endpoint, never reading every open message (soak probe: 2/3 of the CPU at 184,000 queued)', async () => {
    const outbox = new SqliteWebhookOutbox(sqlite.db);
    const T0 = '2026-01-01T00:00:00.000Z';
    const message = (endpoint: string, position: bigint) => ({
      endpoint_id: endpoint,
      message_id: `${endpoint}-${position}`,
      event_id: `e-${position}`,
      event_type: 'user.created',
      position,
      payload: '{}',
      enqueued_at: new Date(Date.parse(T0) + Number(position)).toISOString(),
    });
    await outbox.feed('f', [message('a', 1n), message('a', 2n), message('b', 3n), message('c', 4n)], null, 4n);
    await outbox.recordAttempt('c', 'c-4', {
      status: 'delivered',
      attempted_at: T0,
      next_attempt_at: T0,
      status_code: 200,
      error: null,
      latency_ms: 1,
      due_at: new Date(Date.parse(T0) + 4).toISOString(),
    });
    const before = sqlite.prepared.length;
    expect(await outbox.dueEndpoints('2027-01-01T00:00:00.000Z')).to.deep.equal(['a', 'b']);
    expect(await outbox.stats()).to.deep.equal([
      { endpoint_id: 'a', depth: 2, oldest_enqueued_at: '2026-01-01T00:00:00.001Z' },
      { endpoint_id: 'b', depth: 1, oldest_enqueued_at: '2026-01-01T00:00:00.003Z' },
    ]);
    expect(sqlite.prepared.length, 'no statement prepared on the way').to.equal(before);
    const plans = plansOf(sqlite, (sql) => /^(WITH|SELECT)/.test(sql) && sql.includes('open = 1'));
    expect(plans.length).to.be.at.least(3);
    for (const { sql, plan: steps } of plans) {
      const plan = steps.join(' | ');
      expect(plan, sql).not.to.match(/SCAN webhook_messages\b|TEMP B-TREE/);
      for (const search of steps.filter((step) => step.startsWith('SEARCH'))) {
        expect(search, sql).to.match(
          /USING (COVERING )?INDEX webhook_messages_open \(open=\? AND endpoint_id[=>]\?\)|USING COVERING INDEX webhook_messages_open \(open=\?\)/,
        );
      }
    }
  });
});
