import { inject, injectable } from 'tsyringe';
import { rewardConfigEvolver } from '../../domain/catalog/config-state.js';
import { decideDefineReward, type RewardInput } from '../../domain/catalog/reward-config.js';
import { DomainError } from '../../domain/domain-error.js';
import { streams } from '../../domain/events/index.js';
import type { Clock } from '../../ports/clock.js';
import { TOKENS } from '../../ports/tokens.js';
import type { CommandContext } from '../event-log.js';
import { ReadYourWrites } from '../read-your-writes.js';
import { OfferCodeLookup } from '../store/offer-code-lookup.js';
import { StreamExecutor } from '../stream-executor.js';

/** PUT /admin/rewards/{key}. */
@injectable()
export class DefineRewardHandler {
  constructor(
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(ReadYourWrites) private readonly readYourWrites: ReadYourWrites,
    @inject(OfferCodeLookup) private readonly offerCodes: OfferCodeLookup,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  async handle(input: RewardInput, context: CommandContext) {
    const executed = await this.executor.execute(
      streams.reward(input.key),
      rewardConfigEvolver,
      (existing) => decideDefineReward(existing, input, this.clock.now()),
      context,
      {
        // offer_code_id is immutable, so it is checked once, on creation (before deciding).
        prepare: async ({ state: existing }) => {
          if (!existing && input.offer_code_id !== undefined) await this.checkOfferCode(input.offer_code_id);
        },
      },
    );
    await this.readYourWrites.after(executed.position);
    return executed.result;
  }

  /** Only when a catalog or App Store Connect could know the id: then an unknown one is a typo. */
  private async checkOfferCode(offerCodeId: string): Promise<void> {
    if ((await this.offerCodes.isConfigured()) && !(await this.offerCodes.isKnown(offerCodeId))) {
      throw new DomainError('REWARD.OFFER_CODE_UNKNOWN', `No store offer code ${offerCodeId} in the catalog or App Store Connect`, '/offer_code_id');
    }
  }
}
