import { LRUCache } from 'lru-cache';
import type { Decision, Evolver, NewDomainEvent } from '../domain/decider.js';
import { type AppendResult, type ExpectedRevision, WrongExpectedRevisionError } from '../ports/event-store.js';
import type { ReadStore } from '../ports/read-store.js';
import type { CommandContext, EventLog, LoggedEvent } from './event-log.js';
import { KeyedLock } from './keyed-lock.js';
import { withWriteRetries } from './write-retries.js';

export interface Executed<S, R> {
  result: R;
  state: S;
  /** Stream revision after the command (-1: no stream). */
  revision: number;
  /** Global position of the last event written, null when the decision wrote nothing. */
  position: bigint | null;
}

export interface Loaded<S> {
  state: S;
  revision: number;
  /** Global position of the stream's last event; null when the stream does not exist. */
  position: bigint | null;
}

interface Snapshot<S> {
  version: number;
  revision: number;
  position: string | null;
  state: S;
}

const SNAPSHOT_COLLECTION = 'snapshots';

/**
 * Protects what a snapshot keeps of a state at rest (personal fields encrypted, SPEC §13):
 * `seal` before it is stored, `open` after it is read.
 */
export interface SnapshotSealer {
  seal(stream: string, state: unknown): Promise<unknown>;
  open(stream: string, state: unknown): Promise<unknown>;
}
/** Write a snapshot once this many events were folded beyond the last one. */
const SNAPSHOT_EVERY = 100;
/** Streams whose latest state is kept in memory (least recently used are dropped). */
const CACHED_STREAMS = 10_000;

/**
 * A batch whose events another writer had already appended (the same deterministic ids: one
 * `operation_id` sent to two processes at once). Its decision was never recorded, so it is
 * decided again on what was: the operation is then found and answered as a repeat (SPEC §6).
 */
class WrittenByAnotherError extends Error {
  constructor(stream: string) {
    super(`Another writer had appended these events to ${stream}`);
    this.name = 'WrittenByAnotherError';
  }
}

const isConflict = (error: unknown) => error instanceof WrongExpectedRevisionError || error instanceof WrittenByAnotherError;

/** One attempt of a write: what to append, against which revision, and the answers either way. */
interface Attempt<T> {
  events: NewDomainEvent[];
  expected: ExpectedRevision;
  contexts: CommandContext | readonly CommandContext[];
  /** The answer when the decision appends nothing. */
  unchanged(): T;
  /** The answer once the events are committed. */
  committed(appended: AppendResult): Promise<T>;
}

/**
 * What a command does once it has the stream's state and what `prepare` read: pure and
 * synchronous (no I/O, no await). An async function does not type-check here.
 */
export type Decide<S, R, P> = (state: S, prepared: NoInfer<P>) => Decision<R> & { then?: never };

/** A decision on a stream's latest event alone; synchronous like `Decide`. */
export type DecideOnLatest<R> = (latest: LoggedEvent | undefined) => Decision<R> & { then?: never };

export interface ExecuteOptions<S, P, R = unknown> {
  /**
   * Reads what the decision needs besides the stream (an index, another read model), once per
   * attempt, after the stream is loaded: a conflict re-reads both.
   */
  prepare?: (loaded: Loaded<S>) => Promise<P>;
  /**
   * The command may be decided together with the commands queued behind it on the stream (see
   * `execute`). True by default when there is no `prepare`: the decision then depends on the
   * state alone. A `prepare` may opt in when what it reads cannot be changed by an earlier
   * command of the same batch: it gets the state those commands left, with the revision and
   * position of the stream as loaded. Commands with the same `operation_id` never share a batch.
   */
  batchable?: boolean;
  /**
   * What the command's `prepare` reads about (e.g. the grants a pool command looks up in the
   * pool index): commands that name one key in common never share a batch, as commands with one
   * `operation_id` do, so what prepare read cannot have been changed by an earlier command of
   * the batch.
   */
  exclusiveKeys?: readonly string[];
  /**
   * Each event's own context, in the decision's order, when one decision records the effects of
   * several causes (a reaction counting a page of claims for one referrer): each event then
   * names the event that caused it. The command's context otherwise.
   */
  contextsOf?: (decision: Decision<R>) => readonly CommandContext[];
}

/** A command waiting for its stream; `run` by `drain` in a batch with the commands around it. */
interface QueuedCommand {
  evolver: Evolver<unknown>;
  decide: Decide<unknown, unknown, unknown>;
  context: CommandContext;
  options: ExecuteOptions<unknown, unknown>;
  resolve(executed: Executed<unknown, unknown>): void;
  reject(error: unknown): void;
}

/** Commands decided together at most (one append). */
const BATCH_LIMIT = 64;

/**
 * The leading commands of `queue` that can be decided together: same evolver, batchable, no
 * `operation_id` twice (its event ids would collide), no exclusive key twice. The first command
 * always goes; the batch stops at the first that cannot join, so commands keep their order.
 */
function takeBatch(queue: QueuedCommand[]): QueuedCommand[] {
  const [first] = queue;
  const joins = (command: QueuedCommand) => command.options.batchable ?? command.options.prepare === undefined;
  if (!first || !joins(first)) return queue.splice(0, 1);
  const taken = new Set<string>();
  let size = 0;
  for (const command of queue) {
    if (size === BATCH_LIMIT || command.evolver !== first.evolver || !joins(command)) break;
    const operation = command.context.operation;
    const keys = [
      ...(operation === undefined ? [] : [`operation\u0000${operation.kind}\u0000${operation.id}`]),
      ...(command.options.exclusiveKeys ?? []).map((key) => `key\u0000${key}`),
    ];
    if (keys.some((key) => taken.has(key))) break;
    for (const key of keys) taken.add(key);
    size += 1;
  }
  return queue.splice(0, size);
}

/** One command's part of a batch: its answer without the position yet (`wrote`: whether it appended), or its failure. */
type Outcome = { ok: true; executed: Omit<Executed<unknown, unknown>, 'position'>; wrote: boolean } | { ok: false; error: unknown };

/**
 * The one write path: load → decide → append with the exact expected revision; on a conflict
 * re-read and re-decide, as the write retry policy allows (write-retries.ts). A stream's state comes from memory (the last state this
 * process saw), else from its snapshot, plus the events after it: so deciding costs the same
 * for a stream with 100,000 events as for a new one.
 */
export class StreamExecutor {
  private readonly locks = new KeyedLock();
  /**
   * stream → last known state, the least recently used dropped first. Not a Map with delete and
   * set: V8 leaves a deleted entry's slot in place until the table is rebuilt, so taking the
   * oldest entry walks over every slot dropped before it (about 8 µs a time at 10,000 streams).
   */
  private readonly cache = new LRUCache<string, Loaded<unknown> & { version: number; folded: number }>({ max: CACHED_STREAMS });
  /**
   * The snapshot collection, made once: a store whose collection does not exist yet looks for
   * it again on every read (the embedded store asks SQLite's schema), and most streams have
   * no snapshot.
   */
  private snapshotCollection: Promise<void> | null = null;
  /** stream → commands waiting for it (`execute`). */
  private readonly queues = new Map<string, QueuedCommand[]>();

  constructor(
    private readonly log: EventLog,
    private readonly readStore: ReadStore,
    private readonly sealer: SnapshotSealer | null = null,
  ) {}

  /**
   * After an erasure: the stream's snapshot is rewritten from the state the erasure left, so no
   * snapshot written before it is read again (one written by an older version may hold personal
   * fields without sealing), and the next cold load starts there rather than at the stream's
   * first event. An erasure that wrote nothing (the user was erased already) has no position to
   * write a snapshot at: the snapshot is emptied instead.
   */
  async snapshotAfterErasure<S>(stream: string, evolver: Evolver<S>, erased: Executed<S, unknown>): Promise<void> {
    await this.locks.run(stream, async () => {
      this.cache.delete(stream);
      const snapshot =
        erased.position === null
          ? { version: -1, revision: -1, position: null, state: null }
          : { version: evolver.version, revision: erased.revision, position: erased.position.toString(), state: await this.sealed(stream, erased.state) };
      await this.readStore.putAux(SNAPSHOT_COLLECTION, stream, snapshot);
    });
  }

  private async sealed(stream: string, state: unknown): Promise<unknown> {
    return this.sealer ? this.sealer.seal(stream, state) : state;
  }

  async load<S>(stream: string, evolver: Evolver<S>): Promise<Loaded<S> & { folded: number }> {
    const start = await this.startingPoint(stream, evolver);
    let { state, revision, position } = start;
    const events = await this.log.readStream(stream, revision + 1);
    if (events.length > 0) {
      state = evolver.fold ? evolver.fold(state, events) : events.reduce(evolver.evolve, state);
      revision = events[events.length - 1]!.revision;
      position = events[events.length - 1]!.position;
    }
    const folded = start.folded + events.length;
    this.remember(stream, evolver, { state, revision, position }, folded);
    return { state, revision, position, folded };
  }

  private snapshotCollectionMade(): Promise<void> {
    this.snapshotCollection ??= this.readStore.ensureIndexes(SNAPSHOT_COLLECTION, []).catch((error: unknown) => {
      this.snapshotCollection = null;
      throw error;
    });
    return this.snapshotCollection;
  }

  private async startingPoint<S>(stream: string, evolver: Evolver<S>): Promise<Loaded<S> & { folded: number }> {
    const cached = this.cache.get(stream);
    if (cached && cached.version === evolver.version) return cached as Loaded<S> & { version: number; folded: number };
    await this.snapshotCollectionMade();
    const snapshot = await this.readStore.get<Snapshot<S> & Record<string, unknown>>(SNAPSHOT_COLLECTION, stream);
    if (snapshot !== null && snapshot.version === evolver.version) {
      const state = (this.sealer ? await this.sealer.open(stream, snapshot.state) : snapshot.state) as S;
      return { state, revision: snapshot.revision, position: snapshot.position === null ? null : BigInt(snapshot.position), folded: 0 };
    }
    return { state: evolver.initialState(), revision: -1, position: null, folded: 0 };
  }

  /** `folded`: events folded since the last snapshot was written. */
  private remember<S>(stream: string, evolver: Evolver<S>, loaded: Loaded<S>, folded: number): void {
    this.cache.set(stream, { ...loaded, version: evolver.version, folded });
  }

  /**
   * Under the stream's lock: one attempt, then its append with the attempt's expected revision;
   * a conflict (another writer moved the stream) starts a new attempt, which reads again.
   */
  private write<T>(stream: string, attempt: (number: number) => Promise<Attempt<T>>): Promise<T> {
    return this.locks.run(stream, () =>
      withWriteRetries(isConflict, async (number) => {
        const next = await attempt(number);
        if (next.events.length === 0) return next.unchanged();
        return next.committed(await this.log.append(stream, next.events, next.expected, next.contexts));
      }),
    );
  }

  /**
   * Like `execute`, but decides on the stream's latest event alone — for streams whose last
   * event carries the whole state that matters (claim slot counts, a code's reservation), so
   * cost stays flat however long the stream grows. `context` may give each event its own
   * (requests decided together in one append). `expectNew`: the stream almost certainly does
   * not exist yet (a fresh random code), so the first attempt decides on "no event" without
   * reading it; if it does exist, the append's conflict says so and the next attempt reads.
   */
  async executeOnLatest<R>(
    stream: string,
    decide: DecideOnLatest<R>,
    context: CommandContext | ((decision: Decision<R>) => readonly CommandContext[]),
    options: { expectNew?: boolean } = {},
  ): Promise<{ result: R; position: bigint | null }> {
    return this.write<{ result: R; position: bigint | null }>(stream, async (attempt) => {
      const latest = options.expectNew && attempt === 1 ? undefined : await this.log.last(stream);
      const decision = decide(latest);
      const { result } = decision;
      return {
        events: decision.events,
        expected: latest ? latest.revision : 'no_stream',
        contexts: typeof context === 'function' ? context(decision) : context,
        unchanged: () => ({ result, position: null }),
        committed: async (appended) => ({ result, position: appended.position }),
      };
    });
  }

  /**
   * Decides `decide` on the stream's state and appends its events. Commands that arrive while
   * the stream is busy queue, and those that can (`batchable`) are decided one after the other
   * on the state the previous ones leave, then appended together, in one append with one
   * expected revision: a hot stream (one user withdrawing from many devices) pays one load and
   * one commit per batch, not per command. Each command keeps its own answer: one whose decision
   * fails (a domain error) fails alone and leaves the state as it was for the next; a conflict
   * re-runs the whole batch; an append that fails otherwise runs each command again alone. The
   * answer's `position` is the batch's last event.
   */
  execute<S, R, P = unknown>(
    stream: string,
    evolver: Evolver<S>,
    decide: Decide<S, R, P>,
    context: CommandContext,
    options: ExecuteOptions<S, P, R> = {},
  ): Promise<Executed<S, R>> {
    return new Promise((resolve, reject) => {
      const command = { evolver, decide, context, options, resolve, reject } as unknown as QueuedCommand;
      const queue = this.queues.get(stream);
      if (queue) {
        queue.push(command);
        return;
      }
      this.queues.set(stream, [command]);
      void this.drain(stream);
    });
  }

  /** Runs what is queued for `stream`, batch after batch, until the queue is empty. */
  private async drain(stream: string): Promise<void> {
    const queue = this.queues.get(stream)!;
    while (queue.length > 0) {
      const batch = takeBatch(queue);
      try {
        await this.settle(stream, batch);
      } catch (error) {
        if (batch.length === 1) batch[0]!.reject(error);
        // The batch's append failed (an event its store refused, conflicts to the last attempt):
        // whose command caused it is unknown, so each is tried again alone and fails alone.
        else for (const command of batch) await this.settle(stream, [command]).catch((alone: unknown) => command.reject(alone));
      }
    }
    this.queues.delete(stream);
  }

  /** Runs `batch` and gives each command its answer, or throws when the batch as a whole failed. */
  private async settle(stream: string, batch: QueuedCommand[]): Promise<void> {
    const { outcomes, position } = await this.runBatch(stream, batch);
    outcomes.forEach((outcome, index) => {
      const command = batch[index]!;
      if (outcome.ok) command.resolve({ ...outcome.executed, position: outcome.wrote ? position : null });
      else command.reject(outcome.error);
    });
  }

  /** Decides the batch on one load and appends what it decided; the position of its last event (null: none). */
  private runBatch(stream: string, batch: QueuedCommand[]): Promise<{ outcomes: Outcome[]; position: bigint | null }> {
    const evolver = batch[0]!.evolver;
    return this.write<{ outcomes: Outcome[]; position: bigint | null }>(stream, async () => {
      const loaded = await this.load(stream, evolver);
      let state = loaded.state;
      const events: NewDomainEvent[] = [];
      const contexts: CommandContext[] = [];
      const outcomes: Outcome[] = [];
      for (const command of batch) {
        try {
          const prepared = command.options.prepare ? await command.options.prepare({ ...loaded, state }) : undefined;
          const decision = command.decide(state, prepared);
          if (decision.events.length > 0) state = evolver.fold ? evolver.fold(state, decision.events) : decision.events.reduce(evolver.evolve, state);
          const own = command.options.contextsOf?.(decision);
          for (const [index, event] of decision.events.entries()) {
            events.push(event);
            contexts.push(own?.[index] ?? command.context);
          }
          outcomes.push({
            ok: true,
            executed: { result: decision.result, state, revision: loaded.revision + events.length },
            wrote: decision.events.length > 0,
          });
        } catch (error) {
          // A conflict met while preparing concerns the stream: the whole attempt starts again.
          if (isConflict(error)) throw error;
          outcomes.push({ ok: false, error });
        }
      }
      return {
        events,
        expected: loaded.revision === -1 ? 'no_stream' : loaded.revision,
        contexts,
        unchanged: () => ({ outcomes, position: null }),
        committed: async (appended) => {
          if (appended.writtenByAnother) {
            // The state this attempt decided is not what the log holds: it is never remembered.
            this.cache.delete(stream);
            if (batch.some((command) => command.context.operation !== undefined)) throw new WrittenByAnotherError(stream);
            return { outcomes, position: appended.position };
          }
          const written = { state, revision: appended.nextExpectedRevision, position: appended.position };
          if (loaded.folded + events.length >= SNAPSHOT_EVERY) {
            const snapshot: Snapshot<unknown> = {
              version: evolver.version,
              revision: written.revision,
              position: written.position.toString(),
              state: await this.sealed(stream, state),
            };
            await this.readStore.putAux(SNAPSHOT_COLLECTION, stream, snapshot as unknown as Record<string, unknown>);
            this.remember(stream, evolver, written, 0);
          } else {
            this.remember(stream, evolver, written, loaded.folded + events.length);
          }
          return { outcomes, position: appended.position };
        },
      };
    });
  }
}
