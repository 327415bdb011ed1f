import { expect } from 'chai';
import type { Projection } from '../../../projections/projection.js';
import { MemoryReadStore } from '../../../src/adapters/memory/memory-read-store.js';
import { CheckpointPoller } from '../../../src/application/projections/checkpoint-poller.js';
import { HELD_PROJECTIONS, HeldProjectionsRecord } from '../../../src/application/projections/held-projections.js';
import type { ProjectionStatus } from '../../../src/ports/read-consistency.js';
import { StoreUnavailableError } from '../../../src/ports/event-store.js';
import type { ReadStore } from '../../../src/ports/read-store.js';

const projection = (name: string): Projection => ({ name, version: 1, collections: [], eventTypes: [], targets: () => [], evolve: (_ref, doc) => doc });
const PROJECTIONS = [projection('users'), projection('codes')];

/** A poll that runs only when the test says so. */
function steppedPause() {
  let release: (() => void) | null = null;
  return {
    pause: () => new Promise<void>((resolve) => (release = resolve)),
    /** Lets the poll waiting now run, and the microtasks after it settle. */
    async step() {
      const go = release;
      release = null;
      go?.();
      for (let turn = 0; turn < 10; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

/** Counts checkpoint reads. */
function counted(store: ReadStore): { store: ReadStore; reads: () => number } {
  let reads = 0;
  const checkpoint = store.checkpoint.bind(store);
  store.checkpoint = (projector: string) => {
    reads += 1;
    return checkpoint(projector);
  };
  return { store, reads: () => reads };
}

/**
 * An API instance whose projector runs in another process waits for the projector's checkpoints
 * after each command (read-your-writes across processes).
 */
describe('CheckpointPoller: requests waiting for the projector share one poll', () => {
  let memory: MemoryReadStore;
  const move = (name: string, after: bigint | null, position: bigint) => memory.commitBatches([{ projector: name, version: 1, changes: [], position, after }]);

  beforeEach(async () => {
    memory = new MemoryReadStore();
    for (const { name } of PROJECTIONS) await move(name, null, 1n);
  });

  it('30 waiting requests read the checkpoints once per poll, not once each', async () => {
    const { store, reads } = counted(memory);
    const stepped = steppedPause();
    const poller = new CheckpointPoller(store, PROJECTIONS, stepped.pause);
    const waiting = Array.from({ length: 30 }, () => poller.waitFor(5n, 10_000));
    await stepped.step(); // each request's own first look
    const afterFirstLooks = reads();
    expect(afterFirstLooks).to.equal(30 * PROJECTIONS.length);
    for (let poll = 0; poll < 3; poll += 1) await stepped.step();
    expect(reads() - afterFirstLooks).to.equal(3 * PROJECTIONS.length);
    for (const { name } of PROJECTIONS) await move(name, 1n, 5n);
    await stepped.step();
    expect(await Promise.all(waiting)).to.deep.equal(Array(30).fill(true));
    // Nobody waits: no more polls.
    const settled = reads();
    await stepped.step();
    expect(reads()).to.equal(settled);
  });

  it('each request is answered when the projections it waits for pass its position', async () => {
    const stepped = steppedPause();
    const poller = new CheckpointPoller(memory, PROJECTIONS, stepped.pause);
    const early = poller.waitFor(3n, 10_000, 'users');
    const late = poller.waitFor(6n, 10_000);
    let earlyDone = false;
    early.then(() => (earlyDone = true));
    await move('users', 1n, 4n);
    await stepped.step();
    await stepped.step();
    expect(earlyDone).to.equal(true);
    expect(await early).to.equal(true);
    await move('users', 4n, 6n);
    await move('codes', 1n, 6n);
    await stepped.step();
    expect(await late).to.equal(true);
  });

  it('answers at once when the position is passed already, and false when the time is up', async () => {
    const poller = new CheckpointPoller(memory, PROJECTIONS);
    expect(await poller.waitFor(1n, 10)).to.equal(true);
    expect(await poller.waitFor(99n, 30)).to.equal(false);
  });

  it('reports the version that built each read model, so an API process refuses requests until a replay (needs_replay)', async () => {
    const store = new MemoryReadStore();
    await store.commitBatches([{ projector: 'users', version: 1, changes: [], position: 1n, after: null }]);
    // Built by version 2 (a rollback to version 1, or a projector process of another release).
    await store.commitBatches([{ projector: 'codes', version: 2, changes: [], position: 1n, after: null }]);
    const poller = new CheckpointPoller(store, [...PROJECTIONS, projection('fresh')]);
    expect((await poller.projections()).map(({ name, version, storedVersion }) => [name, version, storedVersion])).to.deep.equal([
      ['users', 1, 1],
      ['codes', 1, 2],
      // Never written: nothing to rebuild.
      ['fresh', 1, 1],
    ]);
  });

  it('a store that cannot be read fails every waiting request (as its own read would)', async () => {
    const stepped = steppedPause();
    const failing = new MemoryReadStore();
    for (const { name } of PROJECTIONS) await failing.commitBatches([{ projector: name, version: 1, changes: [], position: 1n, after: null }]);
    const poller = new CheckpointPoller(failing, PROJECTIONS, stepped.pause);
    const waiting = [poller.waitFor(5n, 10_000), poller.waitFor(6n, 10_000)].map((promise) => promise.then(String, (error: unknown) => error));
    await stepped.step();
    failing.checkpoint = () => Promise.reject(new StoreUnavailableError('the read store is gone'));
    await stepped.step();
    for (const outcome of await Promise.all(waiting)) expect(outcome).to.be.instanceOf(StoreUnavailableError);
  });

  describe('read models held at a failing event, as the projector records them', () => {
    const failure = { position: '7', eventId: 'e-7', error: 'evolve threw' };
    const statusOf = (name: string, held: ProjectionStatus['failure'], checkpoint = 1n): ProjectionStatus => ({
      name,
      version: 1,
      storedVersion: 1,
      checkpoint,
      failure: held,
    });

    it('are reported, and not waited for unless named: the others answer at once', async () => {
      await new HeldProjectionsRecord(memory).record([statusOf('users', null), statusOf('codes', failure)]);
      await move('users', 1n, 9n);
      const poller = new CheckpointPoller(memory, PROJECTIONS);
      expect((await poller.projections()).map((status) => [status.name, status.failure])).to.deep.equal([
        ['users', null],
        ['codes', failure],
      ]);
      expect(await poller.waitFor(9n, 10)).to.equal(true);
      expect(await poller.waitFor(9n, 30, 'codes')).to.equal(false);
    });

    it('a recorded failure its checkpoint has passed is over (moved on, or a replay rebuilt past it)', async () => {
      await new HeldProjectionsRecord(memory).record([statusOf('users', null), statusOf('codes', failure)]);
      await move('codes', 1n, 7n);
      const poller = new CheckpointPoller(memory, PROJECTIONS);
      expect((await poller.projections()).every((status) => status.failure === null)).to.equal(true);
    });

    it('the projector writes a failure when it changes, not on every page', async () => {
      let writes = 0;
      const putAux = memory.putAux.bind(memory);
      memory.putAux = (collection, id, doc) => {
        writes += 1;
        return putAux(collection, id, doc);
      };
      const record = new HeldProjectionsRecord(memory);
      await record.record([statusOf('users', null), statusOf('codes', null)]);
      expect(writes, 'the first page clears what a former projector left').to.equal(2);
      for (let page = 0; page < 5; page += 1) await record.record([statusOf('users', null), statusOf('codes', null)]);
      expect(writes).to.equal(2);
      await record.record([statusOf('users', null), statusOf('codes', failure)]);
      await record.record([statusOf('users', null), statusOf('codes', failure)]);
      expect(writes).to.equal(3);
      expect(await memory.get(HELD_PROJECTIONS, 'codes')).to.deep.equal({ projection: 'codes', failure });
      await record.record([statusOf('users', null), statusOf('codes', null, 8n)]);
      expect(writes).to.equal(4);
      expect(await memory.get(HELD_PROJECTIONS, 'codes')).to.deep.equal({ projection: 'codes', failure: null });
    });
  });
});
