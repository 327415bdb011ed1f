import { inject, injectable } from 'tsyringe';
import type { Evolver } from '../domain/decider.js';
import { streams } from '../domain/events/index.js';
import type { GrantedFact } from '../domain/events/user-events.js';
import type { Operation, OperationRecord } from '../domain/idempotency.js';
import { POOLED_KINDS } from '../domain/rewards/reward-kinds.js';
import type { CommandContext } from './event-log.js';
import { OperationIndex } from './operation-index.js';
import { ReadYourWrites } from './read-your-writes.js';
import { PoolAssignments } from './shared-resources/pool-assignments.js';
import { type Decide, type Executed, type ExecuteOptions, type Loaded, StreamExecutor } from './stream-executor.js';

export interface CommandOptions<S, R, P> extends ExecuteOptions<S, P> {
  /** The rewards the command granted (read from its result): pooled ones get their one-time code before the answer. */
  granted?: (result: R) => readonly GrantedFact[];
}

/**
 * The write of a request (HTTP command handlers): `StreamExecutor.execute`, then the work every
 * request does once its events are committed, attached here and nowhere else —
 *  1. each pooled reward it granted asks its pool for a one-time code, so the answer shows it;
 *  2. the request waits until the read models include its change (read-your-writes), so the
 *     answer and the client's next read see it. When pooled codes were asked for, a reaction
 *     may hand them out concurrently: then it waits for everything committed so far.
 * Reactions and background jobs use the StreamExecutor directly: nobody waits for them.
 */
@injectable()
export class CommandExecutor {
  constructor(
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(PoolAssignments) private readonly pools: PoolAssignments,
    @inject(OperationIndex) private readonly operations: OperationIndex,
    @inject(ReadYourWrites) private readonly readYourWrites: ReadYourWrites,
  ) {}

  /** The stream's current state, for what a command checks or does before its write. */
  load<S>(stream: string, evolver: Evolver<S>): Promise<Loaded<S>> {
    return this.executor.load(stream, evolver);
  }

  async execute<S, R, P = unknown>(
    stream: string,
    evolver: Evolver<S>,
    decide: Decide<S, R, P>,
    context: CommandContext,
    options: CommandOptions<S, R, P> = {},
  ): Promise<Executed<S, R>> {
    const executed = await this.executor.execute(stream, evolver, decide, context, options);
    await this.afterCommit(executed.position, context, streams.idOf('user', stream), options.granted?.(executed.result) ?? []);
    return executed;
  }

  /**
   * The after-commit work, for a request that wrote more than one stream (call it once, with
   * the position of its last write; null when it wrote nothing itself).
   */
  async afterCommit(position: bigint | null, context: CommandContext, appUserId: string | null = null, granted: readonly GrantedFact[] = []): Promise<void> {
    // The grants were the command's: its last event's position places them in the pool's line.
    // A command that wrote nothing (a repeated operation_id) asks again with no position: its
    // first run may have failed before asking; a grant the pool knows asks for nothing new.
    const pooled = appUserId === null ? [] : granted.filter((grant) => POOLED_KINDS.includes(grant.kind));
    for (const grant of pooled) {
      const request = { grant_id: grant.grant_id, app_user_id: appUserId!, expires_at: grant.expires_at, position };
      await this.pools.request(grant.reward_key, request, context);
    }
    await this.readYourWrites.after(pooled.length > 0 ? null : position, position !== null);
  }

  /**
   * A command on a user's stream that `operation_id` makes idempotent (src/domain/idempotency.ts):
   * its events carry the operation id (their ids derive from it), and `decide` gets what the
   * operation id was first used for by an operation of its kind, from the operations index, read
   * once the index has passed the stream's last event (null when the id is new or absent).
   */
  executeIdempotent<S, R>(
    appUserId: string,
    operation: Operation | null,
    evolver: Evolver<S>,
    decide: Decide<S, R, OperationRecord | null>,
    context: CommandContext,
    options: Pick<CommandOptions<S, R, OperationRecord | null>, 'granted'> = {},
  ): Promise<Executed<S, R>> {
    return this.execute(streams.user(appUserId), evolver, decide, operation ? { ...context, operation } : context, {
      ...options,
      prepare: (loaded) => this.operations.lookup(appUserId, operation, loaded.position),
      // Commands of a batch have distinct operation ids, so none can change what another looks up.
      batchable: true,
    });
  }
}
