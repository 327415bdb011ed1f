import { inject, injectable } from 'tsyringe';
import { manualGrantIdPrefix } from '../../domain/idempotency.js';
import type { Deactivation } from '../../domain/rewards/reward-schemas.js';
import { decideGrantReward } from '../../domain/users/grant-reward-by-hand.js';
import { userEvolver } from '../../domain/users/user-state.js';
import type { Clock } from '../../ports/clock.js';
import type { Ids } from '../../ports/ids.js';
import { TOKENS } from '../../ports/tokens.js';
import { CommandExecutor } from '../command-executor.js';
import type { CommandContext } from '../event-log.js';
import { CatalogQueries } from '../queries/catalog-queries.js';

export interface GrantRewardInput {
  key: string;
  operation_id: string | null;
  deactivation: Deactivation;
}

/** POST /users/{id}/rewards/grant (secret key): a reward granted by hand, idempotent by operation_id. */
@injectable()
export class GrantRewardHandler {
  constructor(
    @inject(CommandExecutor) private readonly commands: CommandExecutor,
    @inject(CatalogQueries) private readonly catalog: CatalogQueries,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Ids) private readonly ids: Ids,
  ) {}

  async handle(appUserId: string, input: GrantRewardInput, context: CommandContext) {
    const reward = await this.catalog.reward(input.key);
    const grantIdPrefix = manualGrantIdPrefix(input.operation_id, () => this.ids.uuid());
    const executed = await this.commands.executeIdempotent(
      appUserId,
      input.operation_id === null ? null : { id: input.operation_id, kind: 'grant' },
      userEvolver,
      (state, earlier) =>
        decideGrantReward(state, {
          key: input.key,
          spec: reward && { reward, deactivation: input.deactivation },
          operation_id: input.operation_id,
          earlier,
          grant_id_prefix: grantIdPrefix,
          now: this.clock.now(),
        }),
      context,
      { granted: (result) => result.granted },
    );
    return executed.result;
  }
}
