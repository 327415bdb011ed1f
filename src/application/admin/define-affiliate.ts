import { inject, injectable } from 'tsyringe';
import { affiliateConfigEvolver } from '../../domain/catalog/config-state.js';
import { type AffiliateInput, decideDefineAffiliate } from '../../domain/catalog/affiliate-config.js';
import { streams } from '../../domain/events/index.js';
import type { Clock } from '../../ports/clock.js';
import { TOKENS } from '../../ports/tokens.js';
import { CodeRegistry } from '../shared-resources/code-registry.js';
import type { CommandContext } from '../event-log.js';
import { CatalogQueries } from '../queries/catalog-queries.js';
import { ReadYourWrites } from '../read-your-writes.js';
import { StreamExecutor } from '../stream-executor.js';
import { rewardKinds } from './reward-kinds-lookup.js';

/**
 * PUT /admin/affiliates/{id}: new codes are reserved in the shared namespace first. A code
 * dropped from an affiliate stays reserved to it, so it never comes to mean someone else.
 */
@injectable()
export class DefineAffiliateHandler {
  constructor(
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(CodeRegistry) private readonly registry: CodeRegistry,
    @inject(CatalogQueries) private readonly catalog: CatalogQueries,
    @inject(ReadYourWrites) private readonly readYourWrites: ReadYourWrites,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  async handle(input: AffiliateInput, context: CommandContext) {
    const kinds = await rewardKinds(this.catalog);
    const executed = await this.executor.execute(
      streams.affiliate(input.id),
      affiliateConfigEvolver,
      (existing) => decideDefineAffiliate(existing, input, kinds, this.clock.now()),
      context,
      {
        // New codes are reserved in the shared namespace first (their own steps, CODE.TAKEN),
        // once the definition is known to be valid.
        prepare: async ({ state: existing }) => {
          decideDefineAffiliate(existing, input, kinds, this.clock.now());
          for (const [index, code] of input.codes.entries()) {
            if (!existing?.codes.includes(code)) await this.registry.reserve(code, 'affiliate', input.id, context, `/codes/${index}`);
          }
        },
      },
    );
    await this.readYourWrites.after(executed.position);
    return executed.result;
  }
}
