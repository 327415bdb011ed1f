import type { OperationRecord } from '../../domain/idempotency.js';
import { inject, injectable } from 'tsyringe';
import { streams } from '../../domain/events/index.js';
import { POOLED_KINDS } from '../../domain/rewards/reward-kinds.js';
import type { Deactivation } from '../../domain/rewards/reward-schemas.js';
import { decideGrantReward } from '../../domain/users/grant-reward-by-hand.js';
import { userEvolver } from '../../domain/users/user-state.js';
import type { Clock } from '../../ports/clock.js';
import type { Ids } from '../../ports/ids.js';
import { TOKENS } from '../../ports/tokens.js';
import type { CommandContext } from '../event-log.js';
import { CatalogQueries } from '../queries/catalog-queries.js';
import { OperationIndex } from '../operation-index.js';
import { ReadYourWrites } from '../read-your-writes.js';
import { StreamExecutor } from '../stream-executor.js';
import { PoolAssignments } from '../shared-resources/pool-assignments.js';

export interface GrantRewardInput {
  key: string;
  operation_id: string | null;
  deactivation: Deactivation;
}

/** POST /users/{id}/rewards/grant (secret key): a reward granted by hand. */
@injectable()
export class GrantRewardHandler {
  constructor(
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(CatalogQueries) private readonly catalog: CatalogQueries,
    @inject(PoolAssignments) private readonly pools: PoolAssignments,
    @inject(OperationIndex) private readonly operations: OperationIndex,
    @inject(ReadYourWrites) private readonly readYourWrites: ReadYourWrites,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Ids) private readonly ids: Ids,
  ) {}

  async handle(appUserId: string, input: GrantRewardInput, context: CommandContext) {
    const reward = await this.catalog.reward(input.key);
    const prefix = `manual:${input.operation_id ?? this.ids.uuid()}`;
    const executed = await this.executor.execute(
      streams.user(appUserId),
      userEvolver,
      (state, earlier: OperationRecord | null) =>
        decideGrantReward(state, {
          key: input.key,
          spec: reward && { reward, deactivation: input.deactivation },
          operation_id: input.operation_id,
          earlier,
          grant_id_prefix: prefix,
          now: this.clock.now(),
        }),
      { ...context, ...(input.operation_id ? { operation_id: input.operation_id } : {}) },
      { prepare: (loaded) => this.operations.lookup(appUserId, input.operation_id, loaded.position) },
    );
    const pooled = reward !== null && POOLED_KINDS.includes(reward.kind);
    if (pooled) {
      for (const granted of executed.result.granted) await this.pools.request(reward.key, granted.grant_id, appUserId, context);
    }
    await this.readYourWrites.after(pooled ? null : executed.position);
    return executed.result;
  }
}
