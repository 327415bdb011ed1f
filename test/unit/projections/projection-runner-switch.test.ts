import 'reflect-metadata';
import fs from 'node:fs';
import { expect } from 'chai';
import pino from 'pino';
import type { Projection } from '../../../projections/projection.js';
import { openSqlite, type SqliteConnection } from '../../../src/adapters/sqlite/sqlite-database.js';
import { SqliteEventStore } from '../../../src/adapters/sqlite/sqlite-event-store.js';
import { SqliteReadStore } from '../../../src/adapters/sqlite/sqlite-read-store.js';
import { RandomIds } from '../../../src/adapters/system/random-ids.js';
import { type CommandContext, EventLog } from '../../../src/application/event-log.js';
import { ProjectionRunner } from '../../../src/application/projections/projection-runner.js';
import { CheckpointMovedError, type ProjectorBatch } from '../../../src/ports/read-store.js';
import { COUNTS, counting } from '../../support/counting-projection.js';
import { registered } from '../../support/events.js';
import { tempDir } from '../../support/temp-dir.js';

const context: CommandContext = { correlation_id: 'request-1', causation_id: 'request-1', actor: 'process:test' };
/**
 * A replay run while the service is idle ends at the very position the live projector stands
 * at, and is switched in. The live projector must not continue it as if it were its own read
 * model: its next commit is refused (the checkpoint's version changed), it reloads, and goes on
 * from the switched-in documents, keeping their version.
 */
describe('ProjectionRunner after a replay was switched in at its own position', () => {
  let dir: string;
  let db: SqliteConnection;
  let log: EventLog;
  let store: SqliteReadStore;
  let runner: ProjectionRunner;

  const append = (stream: string, count: number) =>
    log.append(
      stream,
      Array.from({ length: count }, (_, index) => registered(`${stream}-${index}`)),
      'any',
      context,
    );
  const catchUp = async () => {
    while (await runner.processPage());
  };

  beforeEach(async () => {
    dir = tempDir('runner-switch');
    db = openSqlite(dir);
    log = new EventLog(new SqliteEventStore(db), new RandomIds());
    store = new SqliteReadStore(db);
    runner = new ProjectionRunner(log, store, [counting], pino({ level: 'silent' }));
    await runner.init();
  });
  afterEach(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses to continue it as its own read model, then continues the switched-in documents and keeps their version', async () => {
    await append('hot', 3);
    await catchUp();
    const head = (await log.store.headPosition())!;
    // A replay of version 2 reached the same position, built its documents and was switched in.
    await store.commitBatches([
      {
        projector: 'replay:event_counts',
        version: 2,
        position: head,
        after: null,
        changes: [{ op: 'put', collection: `${COUNTS}__rebuild`, id: 'hot', doc: { count: 100 } }],
      },
    ]);
    await store.swapIn('event_counts', 'replay:event_counts', 2, [[COUNTS, `${COUNTS}__rebuild`]]);
    await append('hot', 1);
    // The first commit names version 1: refused, nothing lands, the runner reloads.
    await catchUp();
    expect(await store.get(COUNTS, 'hot')).to.deep.equal({ count: 100 });
    expect(await store.checkpoint('event_counts')).to.deep.equal({ projector: 'event_counts', position: head, version: 2 });
    await catchUp();
    expect(await store.get(COUNTS, 'hot')).to.deep.equal({ count: 101 });
    expect(await store.checkpoint('event_counts')).to.deep.equal({ projector: 'event_counts', position: head + 1n, version: 2 });
    expect(runner.status()[0]!.storedVersion).to.equal(2);
  });
});

/** The same count, in a read model of its own. */
const second: Projection = {
  ...counting,
  name: 'event_counts_b',
  collections: [{ name: 'event_counts_b', indexes: [] }],
  targets: (event) => [{ collection: 'event_counts_b', id: event.stream }],
};

/**
 * Read models of one group that stand at different checkpoints: one switched in by a replay
 * ahead of the others, or one added by an upgrade to a log the others have folded. Each folds
 * every event once: from the lowest checkpoint of the group, each skipping what it has.
 */
describe('ProjectionRunner with read models at different checkpoints', () => {
  let dir: string;
  let db: SqliteConnection;
  let log: EventLog;
  let store: SqliteReadStore;
  let appended = 0;

  const append = (count: number) => {
    const first = appended;
    appended += count;
    return log.append(
      'hot',
      Array.from({ length: count }, (_, index) => registered(`hot-${first + index}`)),
      'any',
      context,
    );
  };
  const runnerOf = async (projections: Projection[]) => {
    const runner = new ProjectionRunner(log, store, projections, pino({ level: 'silent' }));
    await runner.init();
    return runner;
  };
  const catchUp = async (runner: ProjectionRunner) => {
    while (await runner.processPage());
  };
  const counts = async () => [(await store.get<{ count: number }>(COUNTS, 'hot'))?.count, (await store.get<{ count: number }>('event_counts_b', 'hot'))?.count];

  beforeEach(() => {
    dir = tempDir('runner-checkpoints');
    db = openSqlite(dir);
    log = new EventLog(new SqliteEventStore(db), new RandomIds());
    store = new SqliteReadStore(db);
  });
  afterEach(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a read model switched in ahead of the other skips what its replay folded, and the other misses nothing', async () => {
    const runner = await runnerOf([counting, second]);
    await append(3);
    await catchUp(runner);
    await append(2);
    // A replay of the second read model reached the head (5 events) and was switched in.
    const head = (await log.store.headPosition())!;
    await store.commitBatches([
      {
        projector: 'replay:event_counts_b',
        version: 1,
        position: head,
        after: null,
        changes: [{ op: 'put', collection: 'event_counts_b__rebuild', id: 'hot', doc: { count: 5 } }],
      },
    ]);
    await store.swapIn('event_counts_b', 'replay:event_counts_b', 1, [['event_counts_b', 'event_counts_b__rebuild']]);
    await catchUp(runner);
    await append(1);
    await catchUp(runner);
    expect(await counts()).to.deep.equal([6, 6]);
  });

  it('a read model added to a log the others have folded folds the whole history', async () => {
    await append(4);
    await catchUp(await runnerOf([counting]));
    const upgraded = await runnerOf([counting, second]);
    await append(1);
    await catchUp(upgraded);
    expect(await counts()).to.deep.equal([5, 5]);
  });
});

/**
 * On MongoDB a replay switches a read model in collection by collection, with its checkpoint
 * marked `switching` meanwhile: a live projector that folded into it then would fold onto
 * documents already swapped in. It waits, and the read models of its group go on.
 */
describe('ProjectionRunner while a replay is switching one of its read models in', () => {
  let dir: string;
  let db: SqliteConnection;
  let log: EventLog;
  let committed: string[];
  const switching = new Set<string>();
  let runner: ProjectionRunner;

  const append = (count: number) =>
    log.append(
      'hot',
      Array.from({ length: count }, () => registered(`hot-${Math.random()}`)),
      'any',
      context,
    );
  const catchUp = async () => {
    while (await runner.processPage());
  };

  beforeEach(async () => {
    dir = tempDir('runner-switching');
    db = openSqlite(dir);
    log = new EventLog(new SqliteEventStore(db), new RandomIds());
    const sqlite = new SqliteReadStore(db);
    committed = [];
    switching.clear();
    // The SQLite store as MongoDB's shows a switch in progress: its checkpoint marked `switching`.
    const store = new Proxy(sqlite, {
      get(target, property) {
        if (property === 'checkpoint')
          return async (projector: string) => ({ ...(await target.checkpoint(projector)), ...(switching.has(projector) ? { switching: true } : {}) });
        if (property === 'commitBatches')
          return async (batches: ProjectorBatch[]) => {
            // As MongoDB's: a commit into a switching read model is refused, and nothing of it lands.
            const refused = batches.find((batch) => switching.has(batch.projector));
            if (refused) throw new CheckpointMovedError(refused.projector);
            await target.commitBatches(batches);
            committed.push(...batches.map((batch) => batch.projector));
          };
        const value = Reflect.get(target, property) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    runner = new ProjectionRunner(log, store, [counting, second], pino({ level: 'silent' }));
    await runner.init();
  });
  afterEach(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('folds nothing into it until the switch is done, while the other read model goes on; then catches it up', async () => {
    await append(3);
    await catchUp();
    const before = (await log.store.headPosition())!;
    switching.add('event_counts');
    committed = [];
    await append(2);
    // The first commit names the switching read model: refused, the runner reloads and waits for it.
    await catchUp();
    await catchUp();
    expect(committed).to.not.include('event_counts');
    expect(runner.status().find((status) => status.name === 'event_counts')!.checkpoint).to.equal(before);
    expect(runner.status().find((status) => status.name === 'event_counts_b')!.checkpoint).to.equal(before + 2n);

    switching.delete('event_counts');
    await catchUp();
    expect(runner.status().find((status) => status.name === 'event_counts')!.checkpoint).to.equal(before + 2n);
  });
});
