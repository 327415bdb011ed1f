import { inject, injectable } from 'tsyringe';
import { userEvolver } from '../../domain/users/user-state.js';
import type { WithdrawResult } from '../../domain/idempotency.js';
import { decideWithdrawCredits } from '../../domain/users/withdraw-credits.js';
import type { Clock } from '../../ports/clock.js';
import { TOKENS } from '../../ports/tokens.js';
import { CommandExecutor } from '../command-executor.js';
import type { CommandContext } from '../event-log.js';
import { CatalogQueries } from '../queries/catalog-queries.js';

export interface WithdrawCreditsInput {
  key: string;
  amount: number;
  operation_id: string | null;
}

/** POST /users/{id}/rewards/withdraw-credits: idempotent by operation_id. */
@injectable()
export class WithdrawCreditsHandler {
  constructor(
    @inject(CommandExecutor) private readonly commands: CommandExecutor,
    @inject(CatalogQueries) private readonly catalog: CatalogQueries,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  async handle(appUserId: string, input: WithdrawCreditsInput, context: CommandContext): Promise<{ result: WithdrawResult }> {
    const reward = await this.catalog.reward(input.key);
    const executed = await this.commands.executeIdempotent(
      appUserId,
      input.operation_id === null ? null : { id: input.operation_id, kind: 'withdraw' },
      userEvolver,
      (state, earlier) => decideWithdrawCredits(state, { ...input, earlier, isCreditReward: reward?.kind === 'credit', now: this.clock.now() }),
      context,
    );
    return { result: executed.result };
  }
}
