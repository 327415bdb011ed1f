import { inject, injectable } from 'tsyringe';
import { promoConfigEvolver } from '../../domain/catalog/config-state.js';
import { decideDefinePromoCode, type PromoCodeInput } from '../../domain/catalog/promo-config.js';
import { streams } from '../../domain/events/index.js';
import type { Clock } from '../../ports/clock.js';
import { TOKENS } from '../../ports/tokens.js';
import { CodeRegistry } from '../shared-resources/code-registry.js';
import type { CommandContext } from '../event-log.js';
import { CatalogQueries } from '../queries/catalog-queries.js';
import { ReadYourWrites } from '../read-your-writes.js';
import { StreamExecutor } from '../stream-executor.js';
import { rewardKinds } from './reward-kinds-lookup.js';

/** PUT /admin/promo-codes/{code}: reserves the code in the shared namespace, then defines the promo. */
@injectable()
export class DefinePromoCodeHandler {
  constructor(
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(CodeRegistry) private readonly registry: CodeRegistry,
    @inject(CatalogQueries) private readonly catalog: CatalogQueries,
    @inject(ReadYourWrites) private readonly readYourWrites: ReadYourWrites,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  async handle(input: PromoCodeInput, context: CommandContext) {
    const kinds = await rewardKinds(this.catalog);
    const executed = await this.executor.execute(
      streams.promo(input.code),
      promoConfigEvolver,
      (existing) => decideDefinePromoCode(existing, input, kinds, this.clock.now()),
      context,
      {
        // A new code is reserved in the shared namespace first (its own step, CODE.TAKEN),
        // once the definition is known to be valid.
        prepare: async ({ state: existing }) => {
          decideDefinePromoCode(existing, input, kinds, this.clock.now());
          if (!existing) await this.registry.reserve(input.code, 'promo', input.code, context, 'path:/code');
        },
      },
    );
    await this.readYourWrites.after(executed.position);
    return executed.result;
  }
}
