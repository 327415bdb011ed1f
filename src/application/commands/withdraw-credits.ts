import type { OperationRecord } from '../../domain/idempotency.js';
import { inject, injectable } from 'tsyringe';
import { streams } from '../../domain/events/index.js';
import { decideWithdrawCredits, type WithdrawResult } from '../../domain/users/withdraw-credits.js';
import { userEvolver } from '../../domain/users/user-state.js';
import type { Clock } from '../../ports/clock.js';
import { TOKENS } from '../../ports/tokens.js';
import type { CommandContext } from '../event-log.js';
import { CatalogQueries } from '../queries/catalog-queries.js';
import { OperationIndex } from '../operation-index.js';
import { ReadYourWrites } from '../read-your-writes.js';
import { StreamExecutor } from '../stream-executor.js';

export interface WithdrawCreditsInput {
  key: string;
  amount: number;
  operation_id: string | null;
}

/** POST /users/{id}/rewards/withdraw-credits. */
@injectable()
export class WithdrawCreditsHandler {
  constructor(
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(CatalogQueries) private readonly catalog: CatalogQueries,
    @inject(OperationIndex) private readonly operations: OperationIndex,
    @inject(ReadYourWrites) private readonly readYourWrites: ReadYourWrites,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  async handle(appUserId: string, input: WithdrawCreditsInput, context: CommandContext): Promise<{ result: WithdrawResult }> {
    const reward = await this.catalog.reward(input.key);
    const executed = await this.executor.execute(
      streams.user(appUserId),
      userEvolver,
      (state, earlier: OperationRecord | null) =>
        decideWithdrawCredits(state, { ...input, earlier, isCreditReward: reward?.kind === 'credit', now: this.clock.now() }),
      { ...context, ...(input.operation_id ? { operation_id: input.operation_id } : {}) },
      { prepare: (loaded) => this.operations.lookup(appUserId, input.operation_id, loaded.position) },
    );
    await this.readYourWrites.after(executed.position);
    return { result: executed.result };
  }
}
