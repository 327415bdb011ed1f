import 'reflect-metadata';
import { expect } from 'chai';
import { pino } from 'pino';
import type { Projection } from '../../projections/projection.js';
import { MemoryEventStore } from '../../src/adapters/memory/memory-event-store.js';
import { MemoryReadStore } from '../../src/adapters/memory/memory-read-store.js';
import { RandomIds } from '../../src/adapters/system/random-ids.js';
import { CommandExecutor } from '../../src/application/command-executor.js';
import { type CommandContext, EventLog, type LoggedEvent } from '../../src/application/event-log.js';
import { OperationIndex } from '../../src/application/operation-index.js';
import { ProjectionRunner } from '../../src/application/projections/projection-runner.js';
import { ReadYourWrites } from '../../src/application/read-your-writes.js';
import { PoolAssignments } from '../../src/application/shared-resources/pool-assignments.js';
import { StreamExecutor } from '../../src/application/stream-executor.js';
import type { NewDomainEvent } from '../../src/domain/decider.js';
import { DomainError } from '../../src/domain/domain-error.js';
import type { DomainEvent } from '../../src/domain/events/index.js';
import type { Clock } from '../../src/ports/clock.js';
import type { EventStore } from '../../src/ports/event-store.js';
import type { ReadConsistency } from '../../src/ports/read-consistency.js';
import { comparable } from './decider-spec.js';
import { T0 } from './events.js';

/**
 * Given / when / then for the application layer, on the in-memory stores:
 *
 *   const app = await applicationSpec({ projections: [operationsProjection] });
 *   await app.given({ 'user-ann': [registered('ann'), rewardGranted({ … })] });
 *   const outcome = await app.when(() => handler.handle('ann', input, app.context));
 *   outcome.thenAppended({ 'user-ann': [{ type: 'CreditsWithdrawn', data: { … } }] });
 *   await app.stop();
 *
 * `given` appends straight to the log (no handler runs). `when` runs the action and records
 * what it appended; `thenAppended` expects exactly those events per stream (type + data, and the id
 * where the expected event names one), `thenNothing` none, `thenError` a DomainError and
 * nothing appended. With `projections`, the real ProjectionRunner folds them into the
 * in-memory read store, and `given` returns once they include the given events.
 */
export interface ApplicationSpecOptions {
  /** Read models to keep (ProjectionRunner on the in-memory stores); none by default. */
  projections?: Projection[];
  /** Wraps the event store the log and executor use (fault injection); the spec reads the real one. */
  store?: (store: EventStore) => EventStore;
}

export interface ApplicationSpec {
  readonly store: MemoryEventStore;
  readStore: MemoryReadStore;
  log: EventLog;
  executor: StreamExecutor;
  /** The write path of requests on `executor` (after-commit work: pooled codes, read-your-writes). */
  commands: CommandExecutor;
  /** The projection runner when projections were asked for; otherwise always caught up. */
  consistency: ReadConsistency;
  clock: Clock;
  context: CommandContext;
  given(streams: Record<string, DomainEvent[]>): Promise<void>;
  when<R>(action: () => Promise<R>): Promise<Outcome<R>>;
  /** The events of a stream as the log holds them now. */
  events(stream: string): Promise<LoggedEvent[]>;
  stop(): Promise<void>;
}

export interface Outcome<R> {
  /** What the action appended, stream by stream, in commit order. */
  appended: Map<string, LoggedEvent[]>;
  /**
   * Expects exactly these events in these streams; returns the action's result. (Not named
   * `then`: an object with a `then` method would be taken for a promise by `await`.)
   */
  thenAppended(expected: Record<string, NewDomainEvent[]>): R;
  /** Expects the action to succeed without appending anything; returns its result. */
  thenNothing(): R;
  /** Expects a DomainError with that code, and nothing appended. */
  thenError(code: string): DomainError;
}

const alwaysCaughtUp: ReadConsistency = { waitFor: async () => true, projections: async () => [] };

export async function applicationSpec(options: ApplicationSpecOptions = {}): Promise<ApplicationSpec> {
  const store = new MemoryEventStore();
  const readStore = new MemoryReadStore();
  const log = new EventLog(options.store ? options.store(store) : store, new RandomIds());
  const executor = new StreamExecutor(log, readStore);
  const runner = options.projections ? new ProjectionRunner(log, readStore, options.projections, pino({ level: 'silent' })) : null;
  if (runner) {
    await runner.init();
    runner.start();
  }
  const consistency = runner ?? alwaysCaughtUp;
  const clock: Clock = { now: () => T0 };
  const commands = new CommandExecutor(
    executor,
    new PoolAssignments(executor, clock, readStore, consistency),
    new OperationIndex(readStore, consistency),
    new ReadYourWrites(consistency, store, pino({ level: 'silent' })),
  );
  const givenLog = new EventLog(store, new RandomIds());
  const context: CommandContext = { correlation_id: 'spec', causation_id: 'spec', actor: 'process:spec' };

  async function caughtUp(): Promise<void> {
    const head = await store.headPosition();
    if (runner && head !== null) expect(await runner.waitFor(head, 2_000), 'projections caught up').to.equal(true);
  }

  return {
    store,
    readStore,
    log,
    executor,
    commands,
    consistency,
    clock,
    context,
    async given(streams) {
      for (const [stream, events] of Object.entries(streams)) {
        const revision = (await store.readStream(stream)).length - 1;
        await givenLog.append(stream, events, revision === -1 ? 'no_stream' : revision, context);
      }
      await caughtUp();
    },
    async when<R>(action: () => Promise<R>) {
      const before = await store.headPosition();
      let outcome: { ok: true; result: R } | { ok: false; error: unknown };
      try {
        outcome = { ok: true, result: await action() };
      } catch (error) {
        outcome = { ok: false, error };
      }
      const appended = new Map<string, LoggedEvent[]>();
      for (const event of await givenLog.readAll(before, 10_000)) appended.set(event.stream, [...(appended.get(event.stream) ?? []), event]);
      const succeeded = (): R => {
        if (outcome.ok) return outcome.result;
        const { error } = outcome;
        throw new Error(`expected the action to succeed, but it threw ${error instanceof DomainError ? `${error.code} (${error.message})` : String(error)}`, {
          cause: error,
        });
      };
      return {
        appended,
        thenAppended(expected) {
          const result = succeeded();
          const actual = Object.fromEntries(
            [...appended].map(([stream, events]) => [stream, events.map((event, index) => comparable(event, expected[stream]?.[index]))]),
          );
          const wanted = Object.fromEntries(Object.entries(expected).map(([stream, events]) => [stream, events.map((event) => comparable(event, event))]));
          expect(actual, 'appended events').to.deep.equal(wanted);
          return result;
        },
        thenNothing() {
          const result = succeeded();
          expect(Object.fromEntries(appended), 'appended events').to.deep.equal({});
          return result;
        },
        thenError(code) {
          if (outcome.ok) expect.fail(`expected DomainError ${code}, but the action returned ${JSON.stringify(outcome.result, bigints)}`);
          expect(outcome.error, 'thrown').to.be.instanceOf(DomainError);
          expect((outcome.error as DomainError).code, 'error code').to.equal(code);
          expect(Object.fromEntries(appended), 'appended events').to.deep.equal({});
          return outcome.error as DomainError;
        },
      };
    },
    events: (stream) => givenLog.readStream(stream),
    async stop() {
      await runner?.stop();
    },
  };
}

function bigints(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}
