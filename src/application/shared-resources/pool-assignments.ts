import { inject, injectable } from 'tsyringe';
import { streams } from '../../domain/events/index.js';
import type { PoolCode } from '../../domain/events/pool-events.js';
import {
  availableCodes,
  decideAddPoolCodes,
  decideRequestPoolCode,
  decideWithdrawPoolRequest,
  type PoolFigures,
  poolEvolver,
  poolFigures,
  poolGrantKey,
} from '../../domain/pools/pool.js';
import { decideAssignRewardValue } from '../../domain/users/assign-reward-value.js';
import { userEvolver } from '../../domain/users/user-state.js';
import type { Clock } from '../../ports/clock.js';
import { TOKENS } from '../../ports/tokens.js';
import type { CommandContext } from '../event-log.js';
import { StreamExecutor } from '../stream-executor.js';

/**
 * One-time codes of offer_code / store_promo_code rewards. The pool stream decides which
 * code goes to which grant (each code to one grant, ever); the user's stream then records
 * the value. Both steps are idempotent, so the reactions can repeat them after a crash.
 */
@injectable()
export class PoolAssignments {
  constructor(
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  /** A pooled entry was granted: give it a code now, or queue it until codes arrive. */
  /** `expiresAt`: when the grant's entry expires (null: never); an expired grant gets no code. */
  async request(rewardKey: string, grantId: string, appUserId: string, expiresAt: string | null, context: CommandContext): Promise<void> {
    const { state } = await this.executor.execute(
      streams.pool(rewardKey),
      poolEvolver,
      (pool) => decideRequestPoolCode(pool, grantId, appUserId, expiresAt, this.clock.now()),
      followUp(context),
    );
    const value = state.byGrant[poolGrantKey(appUserId, grantId)];
    const code = value === undefined ? undefined : state.codes.find((candidate) => candidate.value === value);
    if (code) await this.deliver(appUserId, grantId, code, context);
  }

  /** A pooled grant was revoked: it leaves the pool's line if it still waits there. */
  async withdraw(rewardKey: string, grantId: string, appUserId: string, context: CommandContext): Promise<void> {
    await this.executor.execute(
      streams.pool(rewardKey),
      poolEvolver,
      (pool) => decideWithdrawPoolRequest(pool, grantId, appUserId, this.clock.now()),
      followUp(context),
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
      (pool) => decideAddPoolCodes(pool, codes, this.clock.now()),
      context,
    );
    return { ...result, available: availableCodes(state, this.clock.now()), position };
  }

  /** The pool's figures now (its stream's state: bounded by the pool's size, not by history). */
  async figures(rewardKey: string): Promise<PoolFigures> {
    const { state } = await this.executor.load(streams.pool(rewardKey), poolEvolver);
    return poolFigures(state, this.clock.now());
  }
}

/**
 * The context of a grant's follow-up writes (the pool's request, the delivery): without the
 * request's `operation_id`. Those writes are idempotent by grant already, and event ids derived
 * from the operation id would repeat the grant's own (the delivery's first event took the id of
 * the grant's first event, a conflict, and a 500 after the grant was kept) and another user's
 * with the same operation id (the pool took the second user's request for a repeat).
 */
function followUp(context: CommandContext): CommandContext {
  const { operation_id: _operation, ...rest } = context;
  return rest;
}
