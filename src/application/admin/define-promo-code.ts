import { inject, injectable } from 'tsyringe';
import { promoConfigEvolver } from '../../domain/catalog/config-state.js';
import { decideDefinePromoCode, type PromoCodeInput } from '../../domain/catalog/promo-config.js';
import { streams } from '../../domain/events/index.js';
import type { Clock } from '../../ports/clock.js';
import { TOKENS } from '../../ports/tokens.js';
import { CommandExecutor } from '../command-executor.js';
import type { CommandContext } from '../event-log.js';
import { CatalogQueries } from '../queries/catalog-queries.js';
import { CodeRegistry } from '../shared-resources/code-registry.js';
import { defineCodeOwner } from './define-code-owner.js';
import { rewardKinds } from './reward-kinds-lookup.js';

/** PUT /admin/promo-codes/{code}: reserves the code in the shared namespace, then defines the promo. */
@injectable()
export class DefinePromoCodeHandler {
  constructor(
    @inject(CommandExecutor) private readonly commands: CommandExecutor,
    @inject(CodeRegistry) private readonly registry: CodeRegistry,
    @inject(CatalogQueries) private readonly catalog: CatalogQueries,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  async handle(input: PromoCodeInput, context: CommandContext) {
    const kinds = await rewardKinds(this.catalog);
    return defineCodeOwner(
      this.commands,
      this.registry,
      {
        stream: streams.promo(input.code),
        evolver: promoConfigEvolver,
        decide: (existing) => decideDefinePromoCode(existing, input, kinds, this.clock.now()),
        newCodes: (existing) => (existing ? [] : [{ code: input.code, type: 'promo' as const, ownerId: input.code, source: 'path:/code' }]),
      },
      context,
    );
  }
}
