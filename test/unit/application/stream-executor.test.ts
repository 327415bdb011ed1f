import 'reflect-metadata';
import { expect } from 'chai';
import fs from 'node:fs';
import { after, before, describe, it } from 'mocha';
import { EventLog } from '../../../src/application/event-log.js';
import { OperationIndex } from '../../../src/application/operation-index.js';
import { StreamExecutor } from '../../../src/application/stream-executor.js';
import { openSqlite, type SqliteConnection } from '../../../src/adapters/sqlite/sqlite-database.js';
import { SqliteEventStore } from '../../../src/adapters/sqlite/sqlite-event-store.js';
import { SqliteReadStore } from '../../../src/adapters/sqlite/sqlite-read-store.js';
import { RandomIds } from '../../../src/adapters/system/random-ids.js';
import type { NewDomainEvent } from '../../../src/domain/decider.js';
import { streams } from '../../../src/domain/events/index.js';
import { decideRequestPoolCode, poolEvolver } from '../../../src/domain/pools/pool.js';
import { decideCountReferral } from '../../../src/domain/users/count-referral.js';
import { userEvolver } from '../../../src/domain/users/user-state.js';
import { decideWithdrawCredits } from '../../../src/domain/users/withdraw-credits.js';
import type { EventStore, ReadStreamOptions } from '../../../src/ports/event-store.js';
import type { ReadConsistency } from '../../../src/ports/read-consistency.js';
import type { ReadStore } from '../../../src/ports/read-store.js';
import { event, programAssigned, registered, rewardGranted, spec, T0 } from '../../support/events.js';
import { tempDir } from '../../support/temp-dir.js';

/** Rows and bytes an executor reads and writes, counted at the ports (not timed). */
interface Touched {
  rowsRead: number;
  bytesRead: number;
  rowsWritten: number;
  bytesWritten: number;
}

const size = (value: unknown) => Buffer.byteLength(JSON.stringify(value, (_key, item) => (typeof item === 'bigint' ? item.toString() : item)));

function counting(store: EventStore, readStore: ReadStore): { store: EventStore; readStore: ReadStore; touched: Touched } {
  const touched: Touched = { rowsRead: 0, bytesRead: 0, rowsWritten: 0, bytesWritten: 0 };
  const countedStore: EventStore = Object.create(store);
  countedStore.readStream = async (stream: string, options?: ReadStreamOptions) => {
    const records = await store.readStream(stream, options);
    touched.rowsRead += records.length;
    touched.bytesRead += records.reduce((sum, record) => sum + size(record.data) + size(record.metadata), 0);
    return records;
  };
  countedStore.append = async (stream, events, expected) => {
    touched.rowsWritten += events.length;
    touched.bytesWritten += events.reduce((sum, next) => sum + size(next.data) + size(next.metadata), 0);
    return store.append(stream, events, expected);
  };
  const countedRead: ReadStore = Object.create(readStore);
  countedRead.get = async <T extends Record<string, unknown>>(collection: string, id: string) => {
    const doc = await readStore.get<T>(collection, id);
    touched.rowsRead += 1;
    touched.bytesRead += doc === null ? 0 : size(doc);
    return doc;
  };
  countedRead.putAux = async (collection, id, doc) => {
    touched.rowsWritten += 1;
    touched.bytesWritten += size(doc);
    return readStore.putAux(collection, id, doc);
  };
  return { store: countedStore, readStore: countedRead, touched };
}

const alwaysCaughtUp: ReadConsistency = { waitFor: async () => true, projections: async () => [] };
const context = { correlation_id: 'test', causation_id: 'test', actor: 'process:test' };
const HISTORY = 3_000;

describe('StreamExecutor on SQLite: cost per command (behaviour: stream-executor-behaviour.test.ts)', () => {
  let dir: string;
  let db: SqliteConnection;
  let store: SqliteEventStore;
  let readStore: SqliteReadStore;
  let log: EventLog;

  before(() => {
    dir = tempDir('executor');
    db = openSqlite(dir);
    store = new SqliteEventStore(db);
    readStore = new SqliteReadStore(db);
    log = new EventLog(store, new RandomIds());
  });

  after(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A user stream written straight to the log, `chunk` events per append. */
  async function write(stream: string, events: NewDomainEvent[], chunk = 500): Promise<void> {
    for (let start = 0; start < events.length; start += chunk) {
      const revision = (await store.readStream(stream, { direction: 'backwards', maxCount: 1 }))[0]?.revision ?? -1;
      await log.append(stream, events.slice(start, start + chunk), revision === -1 ? 'no_stream' : revision, context);
    }
  }

  function withdrawal(index: number, available: number): NewDomainEvent {
    return event('CreditsWithdrawn', {
      operation_id: `op-${index}`,
      key: 'coins',
      withdrawn_at: T0.toISOString(),
      credits_requested_to_withdraw: 1,
      credits_withdrawn: 1,
      credits_available_at_start: available,
      credits_available_at_end: available - 1,
      debits: [{ grant_id: 'wallet', credits: 1 }],
    });
  }

  async function walletUser(name: string, pastWithdrawals: number): Promise<string> {
    const credits = 1_000_000;
    const stream = streams.user(name);
    const history: NewDomainEvent[] = [registered(name), rewardGranted({ grant_id: 'wallet', credits, balance_after: credits })];
    for (let index = 0; index < pastWithdrawals; index += 1) history.push(withdrawal(index, credits - index));
    await write(stream, history);
    return stream;
  }

  /** One withdrawal through a fresh executor (nothing in memory): what a restarted process pays. */
  async function coldWithdrawal(stream: string, name: string, operationId: string): Promise<Touched> {
    const counted = counting(store, readStore);
    const executor = new StreamExecutor(new EventLog(counted.store, new RandomIds()), counted.readStore);
    const operations = new OperationIndex(counted.readStore, alwaysCaughtUp);
    await executor.execute(
      stream,
      userEvolver,
      (state, earlier: Awaited<ReturnType<OperationIndex['lookup']>>) =>
        decideWithdrawCredits(state, { key: 'coins', amount: 1, operation_id: operationId, earlier, isCreditReward: true, now: T0 }),
      { ...context, operation: { id: operationId, kind: 'withdraw' } },
      { prepare: (loaded) => operations.lookup(name, { id: operationId, kind: 'withdraw' }, loaded.position) },
    );
    return counted.touched;
  }

  it("asks SQLite's schema about the snapshot collection at most once, not on every load of a stream without a snapshot", async () => {
    const own = tempDir('executor-schema');
    const ownDb = openSqlite(own);
    let schemaLookups = 0;
    const prepare = ownDb.prepare.bind(ownDb);
    ownDb.prepare = ((source: string) => {
      const statement = prepare(source);
      if (source.includes('sqlite_master')) {
        const get = statement.get.bind(statement);
        statement.get = ((...params: unknown[]) => {
          schemaLookups += 1;
          return get(...params);
        }) as typeof statement.get;
      }
      return statement;
    }) as typeof ownDb.prepare;
    try {
      const executor = new StreamExecutor(new EventLog(new SqliteEventStore(ownDb), new RandomIds()), new SqliteReadStore(ownDb));
      const atStart = schemaLookups;
      for (let index = 0; index < 50; index += 1) {
        expect((await executor.load(streams.user(`fresh-${index}`), userEvolver)).revision).to.equal(-1);
      }
      expect(schemaLookups - atStart).to.be.at.most(1);
    } finally {
      ownDb.close();
      fs.rmSync(own, { recursive: true, force: true });
    }
  });

  it('takes only a synchronous decide: an async one does not compile (npm run typecheck)', () => {
    const executor = new StreamExecutor(log, readStore);
    // @ts-expect-error I/O belongs in `prepare`; a decide that returns a promise is refused.
    const asyncDecide = () => executor.execute('user-typed', userEvolver, async () => ({ events: [], result: null }), context);
    expect(asyncDecide).to.be.a('function');
  });

  it(`a withdrawal for a user with ${HISTORY} past withdrawals reads and writes no more than for a new user`, async () => {
    const fresh = await walletUser('fresh-wallet', 0);
    const long = await walletUser('long-wallet', HISTORY);
    // The service writes a snapshot every 100 folded events; one command here does the same.
    await new StreamExecutor(log, readStore).execute(
      long,
      userEvolver,
      (state) => decideWithdrawCredits(state, { key: 'coins', amount: 1, operation_id: null, earlier: null, isCreditReward: true, now: T0 }),
      context,
    );
    await new StreamExecutor(log, readStore).execute(
      fresh,
      userEvolver,
      (state) => decideWithdrawCredits(state, { key: 'coins', amount: 1, operation_id: null, earlier: null, isCreditReward: true, now: T0 }),
      context,
    );

    const freshCost = await coldWithdrawal(fresh, 'fresh-wallet', 'op-new');
    const longCost = await coldWithdrawal(long, 'long-wallet', 'op-new');
    expect(longCost.rowsRead).to.be.at.most(freshCost.rowsRead);
    expect(longCost.rowsWritten).to.equal(freshCost.rowsWritten);
    expect(longCost.bytesRead).to.be.at.most(freshCost.bytesRead * 1.3);
    expect(longCost.bytesWritten).to.be.at.most(freshCost.bytesWritten * 1.3);
  });

  it(`counting a claim for a referrer with ${HISTORY} past claims reads and writes no more than for a new referrer`, async () => {
    async function referrer(name: string, pastClaims: number): Promise<string> {
      const stream = streams.user(name);
      const history: NewDomainEvent[] = [registered(name), programAssigned('prog', name.toUpperCase().slice(0, 6))];
      for (let count = 1; count <= pastClaims; count += 1) {
        history.push(event('ReferralClaimCounted', { claimer: `c${count}`, code: 'CODE', claims: count, cause_position: String(count) }));
        history.push(
          rewardGranted({
            grant_id: `g${count}`,
            entry_id: 'g1',
            credits: 1,
            balance_after: count,
            cause: { type: 'referrals', variant: 'claim', count, claimer: `c${count}`, program_id: 'prog' },
          }),
        );
      }
      await write(stream, history);
      await new StreamExecutor(log, readStore).load(stream, userEvolver);
      return stream;
    }
    const senderRewards = [{ ...spec('coins', 'credit', { credits: 1 }), activation: { variant: 'claim' as const, amount: 1, limit: 0 } }];
    async function countOne(stream: string, causePosition: bigint): Promise<Touched> {
      // Warm up the snapshot the way the service does (a long fold writes one), then measure cold.
      const counted = counting(store, readStore);
      const executor = new StreamExecutor(new EventLog(counted.store, new RandomIds()), counted.readStore);
      await executor.execute(
        stream,
        userEvolver,
        (state) =>
          decideCountReferral(state, {
            figure: 'claim',
            claimer: 'newcomer',
            code: 'CODE',
            program_id: 'prog',
            senderRewards,
            cause_id: `cause-${causePosition}`,
            cause_position: causePosition,
            now: T0,
          }),
        context,
      );
      return counted.touched;
    }
    const fresh = await referrer('fresh-ref', 0);
    const long = await referrer('long-ref', HISTORY);
    await countOne(fresh, 10_000_000n);
    await countOne(long, 10_000_000n);
    const freshCost = await countOne(fresh, 10_000_001n);
    const longCost = await countOne(long, 10_000_001n);
    expect(longCost.rowsRead).to.be.at.most(freshCost.rowsRead);
    expect(longCost.rowsWritten).to.equal(freshCost.rowsWritten);
    expect(longCost.bytesRead).to.be.at.most(freshCost.bytesRead * 1.3);
    expect(longCost.bytesWritten).to.be.at.most(freshCost.bytesWritten * 1.3);
  });

  it(`a pool request after ${HISTORY} codes handed out reads and writes no more than on a pool that handed out none`, async () => {
    const code = (value: string) => ({ value, link: null, expires_at: '2099-01-01T00:00:00.000Z' });
    async function pool(rewardKey: string, handedOut: number): Promise<string> {
      const stream = streams.pool(rewardKey);
      const codes = Array.from({ length: handedOut + 20 }, (_, index) => code(`${rewardKey}-${index}`));
      const history: NewDomainEvent[] = [event('PoolCodesAdded', { codes })];
      for (let index = 0; index < handedOut; index += 1) {
        history.push(event('PoolCodeAssigned', { grant_id: `g${index}`, app_user_id: `u${index}`, code: codes[index]! }));
      }
      await write(stream, history);
      await new StreamExecutor(log, readStore).load(stream, poolEvolver);
      return stream;
    }
    async function requestOne(stream: string, grantId: string): Promise<Touched> {
      const counted = counting(store, readStore);
      const executor = new StreamExecutor(new EventLog(counted.store, new RandomIds()), counted.readStore);
      // The pool index's answer for a grant it never heard of (its look-up is one document, whatever the pool).
      await executor.execute(
        stream,
        poolEvolver,
        (state) => decideRequestPoolCode(state, { grant_id: grantId, app_user_id: 'newcomer', expires_at: null, position: 1n }, T0, null),
        context,
      );
      return counted.touched;
    }
    const fresh = await pool('fresh-pool', 0);
    const long = await pool('long-pool', HISTORY);
    await requestOne(fresh, 'warm-up');
    await requestOne(long, 'warm-up');
    const freshCost = await requestOne(fresh, 'measured');
    const longCost = await requestOne(long, 'measured');
    expect(longCost.rowsRead).to.be.at.most(freshCost.rowsRead);
    expect(longCost.rowsWritten).to.equal(freshCost.rowsWritten);
    expect(longCost.bytesRead).to.be.at.most(freshCost.bytesRead * 1.3);
    expect(longCost.bytesWritten).to.be.at.most(freshCost.bytesWritten * 1.3);
  });
});
