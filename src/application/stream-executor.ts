import type { Decision, Evolver } from '../domain/decider.js';
import { WrongExpectedRevisionError } from '../ports/event-store.js';
import type { ReadStore } from '../ports/read-store.js';
import type { CommandContext, EventLog, LoggedEvent } from './event-log.js';
import { KeyedLock } from './keyed-lock.js';

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
}

const SNAPSHOT_COLLECTION = 'snapshots';
/** Write a snapshot once this many events were folded beyond the last one. */
const SNAPSHOT_EVERY = 100;
const MAX_ATTEMPTS = 12;

/** Jittered, growing pause before re-reading a stream that another writer just moved. */
function backoff(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * attempt));
}

/**
 * load → decide → append with the exact expected revision; on a conflict re-read and
 * re-decide, a bounded number of times. Long streams load from a snapshot plus the tail.
 */
export class StreamExecutor {
  private readonly locks = new KeyedLock();

  constructor(
    private readonly log: EventLog,
    private readonly readStore: ReadStore,
  ) {}

  async load<S>(stream: string, evolver: Evolver<S>): Promise<Loaded<S> & { folded: number }> {
    const snapshot = await this.readStore.get<{ version: number; revision: number; state: S }>(SNAPSHOT_COLLECTION, stream);
    const usable = snapshot !== null && snapshot.version === evolver.version;
    let state = usable ? snapshot.state : evolver.initialState();
    let revision = usable ? snapshot.revision : -1;
    const events = await this.log.readStream(stream, revision + 1);
    if (events.length > 0) {
      state = evolver.fold ? evolver.fold(state, events) : events.reduce(evolver.evolve, state);
      revision = events[events.length - 1]!.revision;
    }
    return { state, revision, folded: events.length };
  }

  /**
   * Like `execute`, but decides on the stream's latest event alone — for streams whose last
   * event carries the whole state that matters (claim slot counts), so cost stays flat
   * however long the stream grows.
   */
  async executeOnLatest<R>(
    stream: string,
    decide: (latest: LoggedEvent | undefined) => Decision<R>,
    context: CommandContext | ((decision: Decision<R>) => readonly CommandContext[]),
  ): Promise<{ result: R; position: bigint | null }> {
    return this.locks.run(stream, async () => {
      for (let attempt = 1; ; attempt += 1) {
        const latest = await this.log.last(stream);
        const decision = decide(latest);
        const { events, result } = decision;
        if (events.length === 0) return { result, position: null };
        try {
          const contexts = typeof context === 'function' ? context(decision) : context;
          const appended = await this.log.append(stream, events, latest ? latest.revision : 'no_stream', contexts);
          return { result, position: appended.position };
        } catch (error) {
          if (!(error instanceof WrongExpectedRevisionError) || attempt >= MAX_ATTEMPTS) throw error;
          await backoff(attempt);
        }
      }
    });
  }

  async execute<S, R>(
    stream: string,
    evolver: Evolver<S>,
    decide: (state: S, revision: number) => Decision<R> | Promise<Decision<R>>,
    context: CommandContext,
  ): Promise<Executed<S, R>> {
    return this.locks.run(stream, async () => {
      for (let attempt = 1; ; attempt += 1) {
        const { state, revision, folded } = await this.load(stream, evolver);
        const { events, result } = await decide(state, revision);
        if (events.length === 0) return { result, state, revision, position: null };
        try {
          const expected = revision === -1 ? 'no_stream' : revision;
          const appended = await this.log.append(stream, events, expected, context);
          const after = evolver.fold ? evolver.fold(state, events) : events.reduce(evolver.evolve, state);
          if (folded + events.length >= SNAPSHOT_EVERY) {
            await this.readStore.putAux(SNAPSHOT_COLLECTION, stream, {
              version: evolver.version,
              revision: appended.nextExpectedRevision,
              state: after as unknown as Record<string, unknown>,
            });
          }
          return { result, state: after, revision: appended.nextExpectedRevision, position: appended.position };
        } catch (error) {
          if (!(error instanceof WrongExpectedRevisionError) || attempt >= MAX_ATTEMPTS) throw error;
          await backoff(attempt);
        }
      }
    });
  }
}
