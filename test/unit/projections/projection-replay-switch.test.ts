import 'reflect-metadata';
import fs from 'node:fs';
import { expect } from 'chai';
import { openSqlite, type SqliteConnection } from '../../../src/adapters/sqlite/sqlite-database.js';
import { SqliteEventStore } from '../../../src/adapters/sqlite/sqlite-event-store.js';
import { SqliteReadStore } from '../../../src/adapters/sqlite/sqlite-read-store.js';
import { RandomIds } from '../../../src/adapters/system/random-ids.js';
import { type CommandContext, EventLog } from '../../../src/application/event-log.js';
import { replayProjections } from '../../../src/application/projections/projection-replay.js';
import type { ReadStore } from '../../../src/ports/read-store.js';
import { COUNTS, counting } from '../../support/counting-projection.js';
import { registered } from '../../support/events.js';
import { tempDir } from '../../support/temp-dir.js';

const context: CommandContext = { correlation_id: 'request-1', causation_id: 'request-1', actor: 'process:test' };
/**
 * MongoDB switches a rebuilt read model in collection by collection, its replay checkpoint marked
 * `switching` meanwhile. A run interrupted there has put part of its rebuild live: the next run
 * must finish that switch, not fold again into rebuilt collections that are partly gone.
 */
describe('npm run replay after a run interrupted while switching a read model in', () => {
  let dir: string;
  let db: SqliteConnection;
  let log: EventLog;
  let sqlite: SqliteReadStore;
  let store: ReadStore;
  let swaps: { version: number }[];
  let commits: number;
  let switching: boolean;

  beforeEach(async () => {
    dir = tempDir('replay-switching');
    db = openSqlite(dir);
    log = new EventLog(new SqliteEventStore(db), new RandomIds());
    sqlite = new SqliteReadStore(db);
    swaps = [];
    commits = 0;
    switching = true;
    // The SQLite store as MongoDB's shows an interrupted switch: the replay checkpoint marked `switching` until a swap.
    store = new Proxy(sqlite, {
      get(target, property) {
        if (property === 'checkpoint')
          return async (projector: string) => ({
            ...(await target.checkpoint(projector)),
            ...(switching && projector === 'replay:event_counts' ? { switching: true } : {}),
          });
        if (property === 'swapIn')
          return async (...args: Parameters<ReadStore['swapIn']>) => {
            swaps.push({ version: args[2] });
            switching = false;
            await target.swapIn(...args);
          };
        if (property === 'commitBatches')
          return async (...args: Parameters<ReadStore['commitBatches']>) => {
            commits += 1;
            await target.commitBatches(...args);
          };
        const value = Reflect.get(target, property) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    await log.append('hot', [registered('hot-0'), registered('hot-1'), registered('hot-2')], 'no_stream', context);
    // What the interrupted run had rebuilt (through the head) when it began the switch.
    await sqlite.commitBatches([
      {
        projector: 'replay:event_counts',
        version: 1,
        position: (await log.store.headPosition())!,
        after: null,
        changes: [{ op: 'put', collection: `${COUNTS}__rebuild`, id: 'hot', doc: { count: 3 } }],
      },
    ]);
    commits = 0;
  });
  afterEach(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('finishes the switch first, folds nothing again, and says so', async () => {
    const finished: string[] = [];
    expect(await replayProjections(log, store, [counting], { onSwitchFinished: (name) => finished.push(name) })).to.equal('switched');
    expect(finished).to.deep.equal(['event_counts']);
    expect(swaps).to.deep.equal([{ version: 1 }]);
    expect(commits).to.equal(0);
    expect(await sqlite.get(COUNTS, 'hot')).to.deep.equal({ count: 3 });
    expect(await sqlite.checkpoint('event_counts')).to.deep.equal({ projector: 'event_counts', position: (await log.store.headPosition())!, version: 1 });
  });

  it('a switch begun under another version of the projection is finished under that version, then rebuilt under this one', async () => {
    const next = { ...counting, version: 2 };
    expect(await replayProjections(log, store, [next])).to.equal('switched');
    expect(swaps).to.deep.equal([{ version: 1 }, { version: 2 }]);
    expect(await sqlite.get(COUNTS, 'hot')).to.deep.equal({ count: 3 });
    expect((await sqlite.checkpoint('event_counts')).version).to.equal(2);
  });
});
