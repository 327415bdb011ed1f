import { inject, injectable } from 'tsyringe';
import { streams } from '../../domain/events/index.js';
import type { PoolCode } from '../../domain/events/pool-events.js';
import {
  availableCodes,
  decideAddPoolCodes,
  decideLineChanges,
  type KnownGrant,
  type LineChange,
  type PoolFigures,
  poolEvolver,
  poolFigures,
  type PoolRequest,
  poolGrantKey,
} from '../../domain/pools/pool.js';
import { decideAssignRewardValue } from '../../domain/users/assign-reward-value.js';
import { userEvolver } from '../../domain/users/user-state.js';
import { POOL_CODES, POOL_GRANTS, type PoolCodeDoc, type PoolGrantDoc, poolCodeId, poolGrantId, poolIndexProjection } from '../../../projections/pool-index.js';
import type { Clock } from '../../ports/clock.js';
import { READ_MODELS_WAIT_MS, type ReadConsistency, ReadModelsBehindError } from '../../ports/read-consistency.js';
import type { ReadStore } from '../../ports/read-store.js';
import { TOKENS } from '../../ports/tokens.js';
import type { CommandContext } from '../event-log.js';
import { StreamExecutor } from '../stream-executor.js';

/**
 * One-time codes of offer_code / store_promo_code rewards. The pool stream decides which
 * code goes to which grant (each code to one grant, ever); the user's stream then records
 * the value. Both steps are idempotent, so the reactions can repeat them after a crash. What the
 * pool remembers for ever (its values, each grant's code) is read from the pool index once it has
 * passed the pool stream's last event: the append then names that stream's exact revision, so
 * nothing can slip in between the look-up and the append unnoticed (a conflict looks again).
 */
@injectable()
export class PoolAssignments {
  constructor(
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.ReadStore) private readonly readStore: ReadStore,
    @inject(TOKENS.ReadConsistency) private readonly consistency: ReadConsistency,
  ) {}

  /**
   * A pooled entry was granted: give it a code now, or queue it until codes arrive, in grant
   * order (see `PoolRequest`; an expired grant gets no code).
   */
  async request(rewardKey: string, grant: PoolRequest, context: CommandContext): Promise<void> {
    await this.changeLine(rewardKey, [{ change: { kind: 'request', ...grant }, context }]);
  }

  /** A pooled grant was revoked: it leaves the pool's line if it still waits there. */
  async withdraw(rewardKey: string, grantId: string, appUserId: string, context: CommandContext): Promise<void> {
    await this.changeLine(rewardKey, [{ change: { kind: 'withdraw', grant_id: grantId, app_user_id: appUserId }, context }]);
  }

  /**
   * Grants' requests and withdrawals for one pool, in log order, each with the context of what
   * caused it: decided together and appended at once (`decideLineChanges`), then each code they
   * got is delivered into its user's stream.
   */
  async changeLine(rewardKey: string, changes: readonly { change: LineChange; context: CommandContext }[]): Promise<void> {
    const lineChanges = changes.map(({ change }) => change);
    const { result } = await this.executor.execute(
      streams.pool(rewardKey),
      poolEvolver,
      (pool, known: ReadonlyMap<string, KnownGrant>) => decideLineChanges(pool, lineChanges, this.clock.now(), known),
      followUp(changes[changes.length - 1]!.context),
      {
        prepare: ({ position }) => this.knownGrants(rewardKey, lineChanges, position),
        // Decided with the pool commands queued around it (one append for a burst of claims
        // with a pooled reward), but never with another about one of its grants: its prepare
        // would not see what that one decided.
        batchable: true,
        exclusiveKeys: lineChanges.map((change) => poolGrantKey(change.app_user_id, change.grant_id)),
        // Each event names the grant or revocation that caused it.
        contextsOf: (decision) => decision.result.causes.map((index) => followUp(changes[index]!.context)),
      },
    );
    await Promise.all(
      result.codes.map((code, index) => {
        const { change, context } = changes[index]!;
        return code ? this.deliver(change.app_user_id, change.grant_id, code, context) : undefined;
      }),
    );
  }

  /** Records the pool's decision in the user's stream (no-op when already there). */
  async deliver(appUserId: string, grantId: string, code: PoolCode, context: CommandContext): Promise<void> {
    await this.executor.execute(
      streams.user(appUserId),
      userEvolver,
      (user) => decideAssignRewardValue(user, grantId, code, this.clock.now()),
      followUp(context),
    );
  }

  async addCodes(rewardKey: string, codes: PoolCode[], context: CommandContext) {
    const { result, state, position } = await this.executor.execute(
      streams.pool(rewardKey),
      poolEvolver,
      (pool, known: ReadonlySet<string>) => decideAddPoolCodes(pool, codes, known, this.clock.now()),
      context,
      { prepare: ({ position }) => this.knownValues(rewardKey, codes, position) },
    );
    return { ...result, available: availableCodes(state, this.clock.now()), position };
  }

  /** The pool's figures now (its stream's state: bounded by the codes still free, not by history). */
  async figures(rewardKey: string): Promise<PoolFigures> {
    const { state } = await this.executor.load(streams.pool(rewardKey), poolEvolver);
    return poolFigures(state, this.clock.now());
  }

  /** What the pool index has of these grants, by `poolGrantKey`. */
  private async knownGrants(rewardKey: string, changes: readonly LineChange[], position: bigint | null): Promise<Map<string, KnownGrant>> {
    const known = new Map<string, KnownGrant>();
    if (!(await this.indexPassed(position))) return known;
    const keys = new Map(
      changes.map((change) => [poolGrantId(rewardKey, change.app_user_id, change.grant_id), poolGrantKey(change.app_user_id, change.grant_id)]),
    );
    for (const [id, doc] of await this.readStore.getMany<PoolGrantDoc>(POOL_GRANTS, [...keys.keys()])) known.set(keys.get(id)!, doc);
    return known;
  }

  /** Which of these values the pool was ever given. */
  private async knownValues(rewardKey: string, codes: PoolCode[], position: bigint | null): Promise<ReadonlySet<string>> {
    if (!(await this.indexPassed(position))) return new Set();
    const ids = new Map(codes.map((code) => [poolCodeId(rewardKey, code.value), code.value]));
    const found = await this.readStore.getMany<PoolCodeDoc>(POOL_CODES, [...ids.keys()]);
    return new Set([...found.keys()].map((id) => ids.get(id)!));
  }

  /** False for a pool with no events yet (the index knows nothing of it); 503 when the index stays behind. */
  private async indexPassed(position: bigint | null): Promise<boolean> {
    if (position === null) return false;
    if (!(await this.consistency.waitFor(position, READ_MODELS_WAIT_MS, poolIndexProjection.name))) {
      // Deciding without the index could give a grant a second code: refuse instead (503).
      throw new ReadModelsBehindError('The pool index is behind the log; nothing was done, retry');
    }
    return true;
  }
}

/**
 * The context of a grant's follow-up writes (the pool's request, the delivery): without the
 * request's operation id. Those writes are idempotent by grant already, and event ids derived
 * from the operation id would repeat the grant's own (the delivery's first event took the id of
 * the grant's first event, a conflict, and a 500 after the grant was kept) and another user's
 * with the same operation id (the pool took the second user's request for a repeat).
 */
function followUp(context: CommandContext): CommandContext {
  const { operation: _operation, ...rest } = context;
  return rest;
}
