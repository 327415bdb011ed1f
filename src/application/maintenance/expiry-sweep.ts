import { inject, injectable } from 'tsyringe';
import { REWARD_EXPIRIES } from '../../../projections/reward-expiries.js';
import { streams } from '../../domain/events/index.js';
import { decideExpireRewards } from '../../domain/users/expire-rewards.js';
import { userEvolver } from '../../domain/users/user-state.js';
import type { Clock } from '../../ports/clock.js';
import type { ReadStore } from '../../ports/read-store.js';
import { ReadModelsBehindError } from '../../ports/read-consistency.js';
import { TOKENS } from '../../ports/tokens.js';
import { CommandExecutor } from '../command-executor.js';
import type { CommandContext } from '../event-log.js';
import { StreamExecutor } from '../stream-executor.js';

const BATCH = 500;

/** Who a sweep's writes are from: one correlation per run. */
export function sweepContext(now: Date): CommandContext {
  const run = `sweep-${now.toISOString()}`;
  return { correlation_id: run, causation_id: run, actor: 'process:expiry-sweep' };
}

/** Who records the expiries a read found due: the sweep's process, in the correlation of the request that read. */
function dueOnReadContext(requestId: string): CommandContext {
  return { correlation_id: requestId, causation_id: requestId, actor: 'process:expiry-sweep' };
}

/**
 * Records, as `RewardExpired` events, the expiry of entries whose time has passed, so the
 * history and the credit ledger show it. (Reads already treat them as expired.)
 */
@injectable()
export class ExpirySweep {
  constructor(
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(CommandExecutor) private readonly commands: CommandExecutor,
    @inject(TOKENS.ReadStore) private readonly readStore: ReadStore,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  /** Returns the number of expiries recorded. */
  async run(): Promise<number> {
    const now = this.clock.now();
    const due = await this.readStore.find<{ app_user_id: string }>(REWARD_EXPIRIES, {
      atMost: { field: 'expires_at', value: now.toISOString() },
      orderBy: { field: 'expires_at', direction: 'asc' },
      limit: BATCH,
    });
    let recorded = 0;
    for (const appUserId of new Set(due.map((entry) => entry.app_user_id))) {
      const { result } = await this.executor.execute(streams.user(appUserId), userEvolver, (state) => decideExpireRewards(state, now), sweepContext(now));
      recorded += result;
    }
    return recorded;
  }

  /**
   * Records the expiries of one user's entries whose time has passed, and returns once the read
   * models show them (or have not within READ_MODELS_WAIT_MS): what a credit-ledger read does
   * first, so the ledger agrees with the user's entries whenever it is read (SPEC §7.7), not only
   * after the next sweep. One indexed read when nothing is due.
   */
  async recordDueOf(appUserId: string, requestId: string): Promise<void> {
    const now = this.clock.now();
    const due = await this.readStore.find(REWARD_EXPIRIES, {
      where: { app_user_id: appUserId },
      atMost: { field: 'expires_at', value: now.toISOString() },
      limit: 1,
    });
    if (due.length === 0) return;
    try {
      await this.commands.execute(streams.user(appUserId), userEvolver, (state) => decideExpireRewards(state, now), dueOnReadContext(requestId));
    } catch (error) {
      // Read models that do not show the expiries in time (no projector runs on the store, or
      // they still list expiries recorded already): the read answers from them as they stand,
      // as every read does.
      if (!(error instanceof ReadModelsBehindError)) throw error;
    }
  }
}
