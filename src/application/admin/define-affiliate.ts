import { inject, injectable } from 'tsyringe';
import { type AffiliateInput, decideDefineAffiliate } from '../../domain/catalog/affiliate-config.js';
import { affiliateConfigEvolver } from '../../domain/catalog/config-state.js';
import { streams } from '../../domain/events/index.js';
import type { Clock } from '../../ports/clock.js';
import { TOKENS } from '../../ports/tokens.js';
import { CommandExecutor } from '../command-executor.js';
import type { CommandContext } from '../event-log.js';
import { CatalogQueries } from '../queries/catalog-queries.js';
import { CodeRegistry } from '../shared-resources/code-registry.js';
import { defineCodeOwner } from './define-code-owner.js';
import { rewardKinds } from './reward-kinds-lookup.js';

/** PUT /admin/affiliates/{id}: its new codes are reserved in the shared namespace first. */
@injectable()
export class DefineAffiliateHandler {
  constructor(
    @inject(CommandExecutor) private readonly commands: CommandExecutor,
    @inject(CodeRegistry) private readonly registry: CodeRegistry,
    @inject(CatalogQueries) private readonly catalog: CatalogQueries,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  async handle(input: AffiliateInput, context: CommandContext) {
    const kinds = await rewardKinds(this.catalog);
    return defineCodeOwner(
      this.commands,
      this.registry,
      {
        stream: streams.affiliate(input.id),
        evolver: affiliateConfigEvolver,
        decide: (existing) => decideDefineAffiliate(existing, input, kinds, this.clock.now()),
        newCodes: (existing) =>
          input.codes.flatMap((code, index) =>
            existing?.codes.includes(code) ? [] : [{ code, type: 'affiliate' as const, ownerId: input.id, source: `/codes/${index}` }],
          ),
      },
      context,
    );
  }
}
