import { inject, injectable } from 'tsyringe';
import { rewardConfigEvolver } from '../../domain/catalog/config-state.js';
import { decideDefineReward, type RewardInput } from '../../domain/catalog/reward-config.js';
import { DomainError } from '../../domain/domain-error.js';
import { streams } from '../../domain/events/index.js';
import type { Clock } from '../../ports/clock.js';
import { TOKENS } from '../../ports/tokens.js';
import { CommandExecutor } from '../command-executor.js';
import type { CommandContext } from '../event-log.js';
import { OfferCodeLookup } from '../offer-codes/offer-code-lookup.js';

/**
 * PUT /admin/rewards/{key}. A new reward's offer_code_id is checked against the catalog or App
 * Store Connect before the write (a read of its own, outside the retried decision).
 */
@injectable()
export class DefineRewardHandler {
  constructor(
    @inject(CommandExecutor) private readonly commands: CommandExecutor,
    @inject(OfferCodeLookup) private readonly offerCodes: OfferCodeLookup,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  async handle(input: RewardInput, context: CommandContext) {
    const stream = streams.reward(input.key);
    // offer_code_id is immutable, so it is checked once, on creation.
    const { state: existing } = await this.commands.load(stream, rewardConfigEvolver);
    if (!existing && input.offer_code_id !== undefined) await this.checkOfferCode(input.offer_code_id);
    const executed = await this.commands.execute(stream, rewardConfigEvolver, (current) => decideDefineReward(current, input, this.clock.now()), context);
    return executed.result;
  }

  /** Only when a catalog or App Store Connect could know the id: then an unknown one is a typo. */
  private async checkOfferCode(offerCodeId: string): Promise<void> {
    if ((await this.offerCodes.isConfigured()) && !(await this.offerCodes.isKnown(offerCodeId))) {
      throw new DomainError('REWARD.OFFER_CODE_UNKNOWN', `No store offer code ${offerCodeId} in the catalog or App Store Connect`, '/offer_code_id');
    }
  }
}
