import { expect } from 'chai';
import type { MemoryReadStore } from '../../../src/adapters/memory/memory-read-store.js';
import { RandomIds } from '../../../src/adapters/system/random-ids.js';
import { EventLog } from '../../../src/application/event-log.js';
import { type Loaded, StreamExecutor } from '../../../src/application/stream-executor.js';
import { WRITE_ATTEMPTS } from '../../../src/application/write-retries.js';
import type { NewDomainEvent } from '../../../src/domain/decider.js';
import { streams } from '../../../src/domain/events/index.js';
import { operationEventIdParts } from '../../../src/domain/idempotency.js';
import { type UserState, userEvolver } from '../../../src/domain/users/user-state.js';
import { decideWithdrawCredits } from '../../../src/domain/users/withdraw-credits.js';
import { type EventStore, StoreUnavailableError, WrongExpectedRevisionError } from '../../../src/ports/event-store.js';
import { operationsProjection } from '../../../projections/operations.js';
import { applicationSpec } from '../../support/application-spec.js';
import { event, registered, rewardGranted, T0 } from '../../support/events.js';
import { rejection } from '../../support/rejection.js';

/** StreamExecutor gives up after this many attempts (the write retry policy). */
const ATTEMPTS = WRITE_ATTEMPTS;
const SNAPSHOTS = 'snapshots';
const context = { correlation_id: 'spec', causation_id: 'spec', actor: 'process:spec' };

interface StoredSnapshot {
  version: number;
  revision: number;
  position: string | null;
  state: UserState;
}

/** A withdrawal of `amount` credits of `coins` (no operation id): the command of these specs. */
const withdraw = (amount: number) => (state: UserState) =>
  decideWithdrawCredits(state, { key: 'coins', amount, operation_id: null, earlier: null, isCreditReward: true, now: T0 });

/** A past withdrawal of one credit, as recorded. */
function withdrawn(index: number, available: number): NewDomainEvent {
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

/** A user with a wallet of `credits` and then `withdrawals` past withdrawals: 2 + withdrawals events. */
function wallet(name: string, credits: number, withdrawals = 0): NewDomainEvent[] {
  const history: NewDomainEvent[] = [registered(name), rewardGranted({ grant_id: 'wallet', credits, balance_after: credits })];
  for (let index = 0; index < withdrawals; index += 1) history.push(withdrawn(index, credits - index));
  return history;
}

/** Counts the events each readStream returns and the appends tried, delegating to `inner`. */
function counting(inner: EventStore) {
  const counts = { eventsRead: 0, appends: 0 };
  const store: EventStore = Object.create(inner);
  store.readStream = async (stream, options) => {
    const events = await inner.readStream(stream, options);
    counts.eventsRead += events.length;
    return events;
  };
  store.append = async (stream, events, expected) => {
    counts.appends += 1;
    return inner.append(stream, events, expected);
  };
  return { store, counts };
}

function executorOn(store: EventStore, readStore: MemoryReadStore): StreamExecutor {
  return new StreamExecutor(new EventLog(store, new RandomIds()), readStore);
}

/** An event store whose appends to `stream` fail as conflicts the first `times` times (all, when Infinity). */
function conflicting(inner: EventStore, times: number) {
  const counts = { appends: 0 };
  const store: EventStore = Object.create(inner);
  store.append = async (stream, events, expected) => {
    counts.appends += 1;
    if (counts.appends <= times) throw new WrongExpectedRevisionError(stream, expected, 99);
    return inner.append(stream, events, expected);
  };
  return { store, counts };
}

describe('StreamExecutor (in memory): conflicts, snapshots, the state cache', () => {
  const ann = streams.user('ann');

  describe('conflicts', () => {
    it('another writer appends between the read and the append: the command re-reads and decides again on the new state', async () => {
      const app = await applicationSpec({
        store: (inner) => {
          const racing: EventStore = Object.create(inner);
          let raced = false;
          racing.append = async (stream, events, expected) => {
            if (!raced) {
              // Another process withdraws a credit after this command read the stream.
              raced = true;
              await new EventLog(inner, new RandomIds()).append(stream, [withdrawn(99, 10)], expected, context);
            }
            return inner.append(stream, events, expected);
          };
          return racing;
        },
      });
      await app.given({ [ann]: wallet('ann', 10) });
      const decidedOn: number[] = [];
      const preparedAt: (bigint | null)[] = [];
      const outcome = await app.when(() =>
        app.executor.execute(
          ann,
          userEvolver,
          (state) => {
            decidedOn.push(state.entries.find((entry) => entry.entry_id === 'wallet')!.credits ?? 0);
            return withdraw(5)(state);
          },
          context,
          { prepare: async (loaded) => void preparedAt.push(loaded.position) },
        ),
      );
      const { result, revision } = outcome.thenAppended({
        [ann]: [
          withdrawn(99, 10),
          event('CreditsWithdrawn', {
            operation_id: null,
            key: 'coins',
            withdrawn_at: T0.toISOString(),
            credits_requested_to_withdraw: 5,
            credits_withdrawn: 5,
            credits_available_at_start: 9,
            credits_available_at_end: 4,
            debits: [{ grant_id: 'wallet', credits: 5 }],
          }),
        ],
      });
      expect(decidedOn, 'credits each attempt decided on').to.deep.equal([10, 9]);
      expect(preparedAt, 'prepare ran again on the re-read stream').to.deep.equal([2n, 3n]);
      expect(result.credits_available_at_end).to.equal(4);
      expect(revision).to.equal(3);
      await app.stop();
    });

    it('runs `prepare` again on every attempt, after the stream is re-read', async () => {
      const faulty = { counts: { appends: 0 } };
      const app = await applicationSpec({
        store: (inner) => {
          const wrapped = conflicting(inner, 2);
          faulty.counts = wrapped.counts;
          return wrapped.store;
        },
      });
      await app.given({ [ann]: wallet('ann', 10) });
      const prepared: (bigint | null)[] = [];
      const decided: string[] = [];
      const outcome = await app.when(() =>
        app.executor.execute(
          ann,
          userEvolver,
          (state, tag: string) => {
            decided.push(tag);
            return withdraw(1)(state);
          },
          context,
          {
            prepare: async (loaded: Loaded<UserState>) => {
              prepared.push(loaded.position);
              return `attempt ${prepared.length}`;
            },
          },
        ),
      );
      expect(outcome.appended.get(ann)).to.have.length(1);
      expect(faulty.counts.appends).to.equal(3);
      expect(prepared).to.deep.equal([2n, 2n, 2n]);
      expect(decided, 'each decision gets what its own attempt prepared').to.deep.equal(['attempt 1', 'attempt 2', 'attempt 3']);
      await app.stop();
    });

    it('a conflict met while preparing starts the attempt again, as one met by the append', async () => {
      const app = await applicationSpec();
      await app.given({ [ann]: wallet('ann', 10) });
      let prepared = 0;
      const executed = await app.executor.execute(ann, userEvolver, withdraw(1), context, {
        prepare: async () => {
          prepared += 1;
          if (prepared === 1) throw new WrongExpectedRevisionError('code-X', 'no_stream', 0);
        },
      });
      expect(prepared).to.equal(2);
      expect(executed.result.credits_available_at_end).to.equal(9);
      await app.stop();
    });

    it(`gives up after ${ATTEMPTS} attempts and reports the conflict; nothing is appended`, async () => {
      const faulty = { counts: { appends: 0 } };
      const app = await applicationSpec({
        store: (inner) => {
          const wrapped = conflicting(inner, Number.POSITIVE_INFINITY);
          faulty.counts = wrapped.counts;
          return wrapped.store;
        },
      });
      await app.given({ [ann]: wallet('ann', 10) });
      let decisions = 0;
      const error = await rejection(
        app.executor.execute(
          ann,
          userEvolver,
          (state) => {
            decisions += 1;
            return withdraw(1)(state);
          },
          context,
        ),
      );
      expect(error).to.be.instanceOf(WrongExpectedRevisionError);
      expect(faulty.counts.appends).to.equal(ATTEMPTS);
      expect(decisions).to.equal(ATTEMPTS);
      expect(await app.events(ann)).to.have.length(2);
      await app.stop();
    });

    it('does not retry a failure that is not a conflict', async () => {
      const app = await applicationSpec({
        store: (inner) => {
          const down: EventStore = Object.create(inner);
          down.append = async () => {
            throw new StoreUnavailableError('the disk is gone');
          };
          return down;
        },
      });
      await app.given({ [ann]: wallet('ann', 10) });
      let decisions = 0;
      const error = await rejection(
        app.executor.execute(
          ann,
          userEvolver,
          (state) => {
            decisions += 1;
            return withdraw(1)(state);
          },
          context,
        ),
      );
      expect(error).to.be.instanceOf(StoreUnavailableError);
      expect(decisions).to.equal(1);
      await app.stop();
    });

    it('a decision with no events appends nothing and returns the state as loaded', async () => {
      const app = await applicationSpec();
      await app.given({ [ann]: wallet('ann', 10) });
      const outcome = await app.when(() => app.executor.execute(ann, userEvolver, () => ({ events: [], result: 'nothing to do' }), context));
      const executed = outcome.thenNothing();
      expect(executed).to.include({ result: 'nothing to do', revision: 1, position: null });
      await app.stop();
    });
  });

  describe('snapshots', () => {
    it('writes none until 100 events were folded, then one of the state after the command', async () => {
      const app = await applicationSpec();
      // 98 events: the first withdrawal folds 98 and appends 1 (99 < 100), the second reaches 100.
      await app.given({ [ann]: wallet('ann', 1_000, 96) });
      const first = await app.executor.execute(ann, userEvolver, withdraw(1), context);
      expect(first.revision).to.equal(98);
      expect(await app.readStore.get(SNAPSHOTS, ann)).to.equal(null);
      const second = await app.executor.execute(ann, userEvolver, withdraw(1), context);
      const snapshot = await app.readStore.get<StoredSnapshot & Record<string, unknown>>(SNAPSHOTS, ann);
      expect(snapshot).to.deep.equal({ version: userEvolver.version, revision: 99, position: second.position!.toString(), state: second.state });
      // Small whatever the history: the wallet entry and the balance, not the 100 withdrawals.
      expect(JSON.stringify(snapshot).length).to.be.below(1_000);
      await app.stop();
    });

    it('counts again from the snapshot: the next one is written 100 folded events later', async () => {
      const app = await applicationSpec();
      await app.given({ [ann]: wallet('ann', 1_000, 97) });
      const snapshotted = await app.executor.execute(ann, userEvolver, withdraw(1), context);
      expect((await app.readStore.get<StoredSnapshot & Record<string, unknown>>(SNAPSHOTS, ann))!.revision).to.equal(snapshotted.revision);
      for (let index = 0; index < 99; index += 1) await app.executor.execute(ann, userEvolver, withdraw(1), context);
      expect((await app.readStore.get<StoredSnapshot & Record<string, unknown>>(SNAPSHOTS, ann))!.revision).to.equal(snapshotted.revision);
      const next = await app.executor.execute(ann, userEvolver, withdraw(1), context);
      expect((await app.readStore.get<StoredSnapshot & Record<string, unknown>>(SNAPSHOTS, ann))!.revision).to.equal(next.revision);
      await app.stop();
    });

    it('a process without the stream in memory starts from the snapshot and reads only the events after it', async () => {
      const app = await applicationSpec();
      await app.given({ [ann]: wallet('ann', 1_000, 150) });
      await app.executor.execute(ann, userEvolver, withdraw(1), context);
      await app.given({ [ann]: [withdrawn(500, 848), withdrawn(501, 847)] });
      const everything = (await app.log.readStream(ann)).reduce(userEvolver.evolve, userEvolver.initialState());

      const cold = counting(app.store);
      const loaded = await executorOn(cold.store, app.readStore).load(ann, userEvolver);
      expect(loaded.state).to.deep.equal(everything);
      expect(loaded.revision).to.equal(154);
      expect(cold.counts.eventsRead, 'the two events after the snapshot').to.equal(2);
      await app.stop();
    });

    it('a snapshot of the same evolver version is trusted as it is', async () => {
      const app = await applicationSpec();
      await app.given({ [ann]: wallet('ann', 10) });
      const planted = { ...userEvolver.initialState(), exists: true, app_user_id: 'planted' };
      await app.readStore.putAux(SNAPSHOTS, ann, { version: userEvolver.version, revision: 1, position: '2', state: planted });
      const loaded = await executorOn(app.store, app.readStore).load(ann, userEvolver);
      expect(loaded.state).to.deep.equal(planted);
      await app.stop();
    });

    it('a snapshot of another evolver version is ignored: the whole stream is folded', async () => {
      const app = await applicationSpec();
      await app.given({ [ann]: wallet('ann', 10) });
      const planted = { ...userEvolver.initialState(), exists: true, app_user_id: 'planted' };
      await app.readStore.putAux(SNAPSHOTS, ann, { version: userEvolver.version - 1, revision: 1, position: '2', state: planted });
      const cold = counting(app.store);
      const loaded = await executorOn(cold.store, app.readStore).load(ann, userEvolver);
      expect(loaded.state).to.deep.equal((await app.log.readStream(ann)).reduce(userEvolver.evolve, userEvolver.initialState()));
      expect(cold.counts.eventsRead).to.equal(2);
      await app.stop();
    });
  });

  describe('commands queued on one stream', () => {
    /** `count` withdrawals of `amount` sent at once, each with its own request id (and operation id, when `operations` names them). */
    const crowd = (executor: StreamExecutor, count: number, amount: number, operations: (index: number) => string | undefined = () => undefined) =>
      Array.from({ length: count }, (_, index) => {
        const operation = operations(index);
        return executor.execute(ann, userEvolver, withdraw(amount), {
          ...context,
          correlation_id: `request-${index}`,
          ...(operation ? { operation: { id: operation, kind: 'withdraw' as const } } : {}),
        });
      });

    it('are decided one after the other on the state the previous left and appended together, each with its own answer and metadata', async () => {
      const app = await applicationSpec();
      await app.given({ [ann]: wallet('ann', 10) });
      const counted = counting(app.store);
      const executor = executorOn(counted.store, app.readStore);
      const answers = await Promise.all(crowd(executor, 10, 1));
      // The first runs as soon as it arrives; the nine queued behind it go in one append.
      expect(counted.counts.appends).to.equal(2);
      expect(answers.map((answer) => answer.result.credits_available_at_end)).to.deep.equal([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
      expect(answers.map((answer) => answer.revision)).to.deep.equal([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      const events = await app.events(ann);
      expect(events.slice(2).map((logged) => logged.metadata.correlation_id)).to.deep.equal(answers.map((_, index) => `request-${index}`));
      const last = events[events.length - 1]!.position;
      expect(
        answers.slice(1).every((answer) => answer.position === last),
        'a batch answers with its last position',
      ).to.equal(true);
      await app.stop();
    });

    it('a command that fails fails alone: the next is decided on the state as it was', async () => {
      const app = await applicationSpec();
      await app.given({ [ann]: wallet('ann', 10) });
      const notCredits = (state: UserState) =>
        decideWithdrawCredits(state, { key: 'coins', amount: 1, operation_id: null, earlier: null, isCreditReward: false, now: T0 });
      const [first, failing, last] = await Promise.allSettled([
        app.executor.execute(ann, userEvolver, withdraw(3), context),
        app.executor.execute(ann, userEvolver, notCredits, context),
        app.executor.execute(ann, userEvolver, withdraw(3), context),
      ]);
      expect(first.status === 'fulfilled' && first.value.result.credits_available_at_end).to.equal(7);
      expect(failing.status === 'rejected' && (failing.reason as { code?: string }).code).to.equal('WITHDRAW.REWARD_NOT_FOUND');
      expect(last.status === 'fulfilled' && last.value.result.credits_available_at_end).to.equal(4);
      expect((await app.events(ann)).map((logged) => logged.type)).to.deep.equal(['UserRegistered', 'RewardGranted', 'CreditsWithdrawn', 'CreditsWithdrawn']);
      await app.stop();
    });

    it('an append the store refuses is tried again command by command: only the command that caused it fails', async () => {
      const app = await applicationSpec();
      await app.given({ [ann]: wallet('ann', 10) });
      // An event its schema refuses: the log does not append it, whoever else is in the batch.
      const malformed = () => ({ events: [event('CreditsWithdrawn', { key: 'coins' } as never)], result: null });
      const [first, second, failing, last] = await Promise.allSettled([
        app.executor.execute(ann, userEvolver, withdraw(1), context),
        app.executor.execute(ann, userEvolver, withdraw(1), context),
        app.executor.execute(ann, userEvolver, malformed, context),
        app.executor.execute(ann, userEvolver, withdraw(1), context),
      ]);
      expect([first, second, last].map((answer) => answer.status === 'fulfilled' && answer.value.result.credits_available_at_end)).to.deep.equal([9, 8, 7]);
      expect(failing.status).to.equal('rejected');
      expect((await app.events(ann)).slice(2).map((logged) => logged.data)).to.have.length(3);
      await app.stop();
    });

    it('a batch whose append the store fails (not a conflict) is tried again command by command: only the command the store refuses fails', async () => {
      // The store refuses any append holding a withdrawal of 5 credits (a disk error for that write, say).
      const app = await applicationSpec({
        store: (inner) => {
          const store: EventStore = Object.create(inner);
          store.append = (stream, events, expected) =>
            events.some((one) => one.type === 'CreditsWithdrawn' && (one.data as { credits_requested_to_withdraw: number }).credits_requested_to_withdraw === 5)
              ? Promise.reject(new Error('the store refused this write'))
              : inner.append(stream, events, expected);
          return store;
        },
      });
      await app.given({ [ann]: wallet('ann', 10) });
      const [first, second, refused, last] = await Promise.allSettled([
        app.executor.execute(ann, userEvolver, withdraw(1), context),
        app.executor.execute(ann, userEvolver, withdraw(1), context),
        app.executor.execute(ann, userEvolver, withdraw(5), context),
        app.executor.execute(ann, userEvolver, withdraw(1), context),
      ]);
      expect([first, second, last].map((answer) => answer.status === 'fulfilled' && answer.value.result.credits_available_at_end)).to.deep.equal([9, 8, 7]);
      expect(refused.status === 'rejected' && (refused.reason as Error).message).to.equal('the store refused this write');
      await app.stop();
    });

    it('an operation gets the event ids it would get alone, and one operation_id never goes twice into a batch', async () => {
      const counted = { counts: { eventsRead: 0, appends: 0 } };
      const app = await applicationSpec({
        projections: [operationsProjection],
        store: (inner) => {
          const wrapped = counting(inner);
          counted.counts = wrapped.counts;
          return wrapped.store;
        },
      });
      await app.given({ [ann]: wallet('ann', 10) });
      const withdrawOnce = (operation: string) =>
        app.commands.executeIdempotent(
          'ann',
          { id: operation, kind: 'withdraw' },
          userEvolver,
          (state, earlier) => decideWithdrawCredits(state, { key: 'coins', amount: 1, operation_id: operation, earlier, isCreditReward: true, now: T0 }),
          app.context,
        );
      const answers = await Promise.all(['op-first', 'op-a', 'op-b', 'op-a'].map(withdrawOnce));
      // [op-first], [op-a, op-b], then the repeat of op-a alone: its prepare finds op-a in the operations index.
      expect(counted.counts.appends).to.equal(2);
      const ids = new RandomIds();
      const written = (await app.events(ann)).slice(2);
      expect(written.map((logged) => logged.id)).to.deep.equal(
        ['op-first', 'op-a', 'op-b'].map((operation) => ids.derived(...operationEventIdParts(ann, { id: operation, kind: 'withdraw' }, 0))),
      );
      expect(answers.map((answer) => answer.result.credits_available_at_end)).to.deep.equal([9, 8, 7, 8]);
      await app.stop();
    });

    it('commands naming an exclusive key in common never share a batch; the others do', async () => {
      const app = await applicationSpec();
      await app.given({ [ann]: wallet('ann', 10) });
      const counted = counting(app.store);
      // The commands prepared since the last append: one batch each time the executor appends.
      const batches: string[][] = [[]];
      const append = counted.store.append.bind(counted.store);
      counted.store.append = async (...args) => {
        batches.push([]);
        return append(...args);
      };
      const executor = executorOn(counted.store, app.readStore);
      const keyed = (name: string, keys: string[]) =>
        executor.execute(ann, userEvolver, withdraw(1), context, {
          prepare: async () => void batches[batches.length - 1]!.push(name),
          batchable: true,
          exclusiveKeys: keys,
        });
      await Promise.all([keyed('first', ['a']), keyed('b', ['b']), keyed('c+d', ['c', 'd']), keyed('d again', ['d']), keyed('e', ['e'])]);
      // [first], [b, c+d], then 'd again' starts the next batch, which 'e' joins.
      expect(counted.counts.appends).to.equal(3);
      expect(batches.filter((batch) => batch.length > 0)).to.deep.equal([['first'], ['b', 'c+d'], ['d again', 'e']]);
      await app.stop();
    });

    it('a command whose prepare did not opt in is decided alone, after those before it', async () => {
      const app = await applicationSpec();
      await app.given({ [ann]: wallet('ann', 10) });
      const counted = counting(app.store);
      const executor = executorOn(counted.store, app.readStore);
      const prepared: (bigint | null)[] = [];
      const prepare = async (loaded: Loaded<UserState>) => void prepared.push(loaded.position);
      await Promise.all([
        ...crowd(executor, 3, 1),
        executor.execute(ann, userEvolver, withdraw(1), context, { prepare }),
        executor.execute(ann, userEvolver, withdraw(1), context, { prepare }),
      ]);
      // [1], [2, 3], [prepare], [prepare]
      expect(counted.counts.appends).to.equal(4);
      expect(prepared, 'each saw the stream with every earlier command in it').to.deep.equal([5n, 6n]);
      await app.stop();
    });
  });

  describe('the state kept in memory', () => {
    it('a second command on the stream reads no event again', async () => {
      const app = await applicationSpec();
      await app.given({ [ann]: wallet('ann', 10, 5) });
      const counted = counting(app.store);
      const executor = executorOn(counted.store, app.readStore);
      await executor.execute(ann, userEvolver, withdraw(1), context);
      expect(counted.counts.eventsRead).to.equal(7);
      const second = await executor.execute(ann, userEvolver, withdraw(1), context);
      expect(counted.counts.eventsRead, 'no event read by the second command').to.equal(7);
      expect(second.result.credits_available_at_start).to.equal(4);
      await app.stop();
    });

    it('events another process appended are read on top of the remembered state', async () => {
      const app = await applicationSpec();
      await app.given({ [ann]: wallet('ann', 10) });
      const counted = counting(app.store);
      const executor = executorOn(counted.store, app.readStore);
      await executor.execute(ann, userEvolver, withdraw(1), context);
      await app.given({ [ann]: [withdrawn(7, 9)] });
      const before = counted.counts.eventsRead;
      const next = await executor.execute(ann, userEvolver, withdraw(1), context);
      expect(counted.counts.eventsRead - before).to.equal(1);
      expect(next.result.credits_available_at_start).to.equal(8);
      await app.stop();
    });

    it('a remembered state of another evolver version is not used', async () => {
      const app = await applicationSpec();
      await app.given({ [ann]: wallet('ann', 10, 3) });
      const counted = counting(app.store);
      const executor = executorOn(counted.store, app.readStore);
      await executor.load(ann, userEvolver);
      await executor.load(ann, { ...userEvolver, version: userEvolver.version + 1 });
      expect(counted.counts.eventsRead).to.equal(10);
      await app.stop();
    });
  });
});
