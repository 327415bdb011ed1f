import { inject, injectable } from 'tsyringe';
import { rewardConfigEvolver } from '../../domain/catalog/config-state.js';
import { decideDefineReward, type RewardInput } from '../../domain/catalog/reward-config.js';
import { streams } from '../../domain/events/index.js';
import type { Clock } from '../../ports/clock.js';
import { TOKENS } from '../../ports/tokens.js';
import type { CommandContext } from '../event-log.js';
import { ReadYourWrites } from '../read-your-writes.js';
import { StreamExecutor } from '../stream-executor.js';

/** PUT /admin/rewards/{key}. */
@injectable()
export class DefineRewardHandler {
  constructor(
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(ReadYourWrites) private readonly readYourWrites: ReadYourWrites,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  async handle(input: RewardInput, context: CommandContext) {
    const executed = await this.executor.execute(
      streams.reward(input.key),
      rewardConfigEvolver,
      (existing) => decideDefineReward(existing, input, this.clock.now()),
      context,
    );
    await this.readYourWrites.after(executed.position);
    return executed.result;
  }
}
