import { inject, injectable } from 'tsyringe';
import { programConfigEvolver } from '../../domain/catalog/config-state.js';
import { decideDefineProgram, type ProgramInput } from '../../domain/catalog/program-config.js';
import { streams } from '../../domain/events/index.js';
import type { Clock } from '../../ports/clock.js';
import { TOKENS } from '../../ports/tokens.js';
import { CommandExecutor } from '../command-executor.js';
import type { CommandContext } from '../event-log.js';
import { KeyedLock } from '../keyed-lock.js';
import { CatalogQueries } from '../queries/catalog-queries.js';
import { rewardKinds } from './reward-kinds-lookup.js';

/**
 * PUT /admin/programs/{id}. The percentage sum spans programs, so program writes are
 * serialised in this process and checked against the read model (which each write waits
 * for). Admin writes from several API instances at once could still race; run admin
 * changes through one instance (README).
 */
@injectable()
export class DefineProgramHandler {
  private readonly lock = new KeyedLock();

  constructor(
    @inject(CommandExecutor) private readonly commands: CommandExecutor,
    @inject(CatalogQueries) private readonly catalog: CatalogQueries,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  async handle(input: ProgramInput, context: CommandContext) {
    return this.lock.run('programs', async () => {
      const others = (await this.catalog.programs()).filter((program) => program.id !== input.id);
      const kinds = await rewardKinds(this.catalog);
      const executed = await this.commands.execute(
        streams.program(input.id),
        programConfigEvolver,
        (existing) =>
          decideDefineProgram(existing, {
            input,
            rewardKinds: kinds,
            otherProgramsPercentage: others.reduce((sum, program) => sum + program.distribution_percentage, 0),
            now: this.clock.now(),
          }),
        context,
      );
      return executed.result;
    });
  }
}
