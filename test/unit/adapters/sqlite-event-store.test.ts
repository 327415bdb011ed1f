import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { expect } from 'chai';
import { openSqlite, type SqliteConnection } from '../../../src/adapters/sqlite/sqlite-database.js';
import { SqliteEventStore } from '../../../src/adapters/sqlite/sqlite-event-store.js';
import { type NewEvent, WrongExpectedRevisionError } from '../../../src/ports/event-store.js';
import { tempDataDir } from '../../support/test-service.js';

const newEvent = (id: string = randomUUID()): NewEvent => ({
  id,
  type: 'ThingHappened',
  data: {},
  metadata: { correlation_id: randomUUID(), causation_id: randomUUID(), actor: 'test', schema_version: 1 },
});

/**
 * What the embedded store adds to the EventStore contract: event ids are unique across the whole
 * log, and an append that trips over one part-way leaves nothing behind (it inserts first and
 * tells a repeat from a conflict only when an insert collides).
 */
describe('SqliteEventStore: appends that collide part-way', () => {
  let dir: string;
  let db: SqliteConnection;
  let store: SqliteEventStore;

  beforeEach(() => {
    dir = tempDataDir();
    db = openSqlite(dir);
    store = new SqliteEventStore(db);
  });
  afterEach(async () => {
    await store.close();
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("an append whose second event's id is already in another stream is a conflict, and writes none of its events", async () => {
    const reused = randomUUID();
    await store.append('elsewhere', [newEvent(reused)], 'no_stream');
    const head = await store.headPosition();
    let error: unknown = null;
    await store.append('target', [newEvent(), newEvent(reused), newEvent()], 'no_stream').catch((caught: unknown) => {
      error = caught;
    });
    expect(error).to.be.instanceOf(WrongExpectedRevisionError);
    expect(await store.readStream('target')).to.deep.equal([]);
    expect(await store.headPosition()).to.equal(head);
  });

  it('a single event whose id is already in another stream is a conflict; the group it was committed with is written', async () => {
    const reused = randomUUID();
    await store.append('elsewhere', [newEvent(reused)], 'no_stream');
    const [clash, beside] = await Promise.allSettled([store.append('target', [newEvent(reused)], 'any'), store.append('beside', [newEvent()], 'no_stream')]);
    expect(clash.status).to.equal('rejected');
    expect((clash as PromiseRejectedResult).reason).to.be.instanceOf(WrongExpectedRevisionError);
    expect(beside.status).to.equal('fulfilled');
    expect(await store.readStream('target')).to.deep.equal([]);
    expect(await store.readStream('beside')).to.have.length(1);
  });

  it('repeating an `any` append answers the original result and writes nothing', async () => {
    const batch = [newEvent(), newEvent()];
    const original = await store.append('target', batch, 'any');
    await store.append('target', [newEvent()], 'any');
    const head = await store.headPosition();
    expect(await store.append('target', batch, 'any')).to.deep.equal(original);
    expect(await store.headPosition()).to.equal(head);
  });
});
