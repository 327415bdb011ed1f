import { inject, injectable } from 'tsyringe';
import type { Config } from '../../config.js';
import { streams } from '../../domain/events/index.js';
import { assignProgram } from '../../domain/programs/program-assignment.js';
import { decideUpsertUser, type ProfileFields } from '../../domain/users/upsert-user.js';
import { type UserState, userEvolver } from '../../domain/users/user-state.js';
import type { Clock } from '../../ports/clock.js';
import { TOKENS } from '../../ports/tokens.js';
import { CommandExecutor } from '../command-executor.js';
import type { CommandContext } from '../event-log.js';
import { CatalogQueries } from '../queries/catalog-queries.js';
import { CodeResolver } from '../queries/code-resolver.js';
import { CodeRegistry } from '../shared-resources/code-registry.js';

/**
 * POST /users: create or update a user; give it a program and referral code when due. The
 * referral code is reserved first, as a step of its own on the code's stream (before the
 * user's write and its conflict retries, so a retry never reserves a second code); the
 * user's write then records the assignment unless a concurrent request recorded one first.
 */
@injectable()
export class UpsertUserHandler {
  constructor(
    @inject(CommandExecutor) private readonly commands: CommandExecutor,
    @inject(CatalogQueries) private readonly catalog: CatalogQueries,
    @inject(CodeResolver) private readonly codes: CodeResolver,
    @inject(CodeRegistry) private readonly registry: CodeRegistry,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Config) private readonly config: Config,
  ) {}

  async handle(appUserId: string, fields: Partial<ProfileFields>, context: CommandContext): Promise<{ created: boolean }> {
    const stream = streams.user(appUserId);
    const command = (now: Date) => ({
      app_user_id: appUserId,
      fields,
      now,
      assignment: null,
      conversionRewards: [],
      conversions: this.config.CONVERSIONS_FROM,
    });
    const { state } = await this.commands.load(stream, userEvolver);
    // Validate before reserving anything, so a rejected request leaves no code behind.
    decideUpsertUser(state, command(this.clock.now()));
    const program = state.program_id === null ? assignProgram(appUserId, await this.catalog.programs()) : null;
    const assignment = program && { program_id: program.id, referral_code: await this.registry.reserveReferralCode(appUserId, context) };
    const executed = await this.commands.execute(
      stream,
      userEvolver,
      (current, conversionRewards: Awaited<ReturnType<UpsertUserHandler['conversionRewards']>>) =>
        decideUpsertUser(current, { ...command(this.clock.now()), assignment, conversionRewards }),
      context,
      { prepare: ({ state: current }) => this.conversionRewards(current) },
    );
    return { created: executed.result.created };
  }

  /** Receiver rewards with activation "conversion" of the code the user claimed (none once converted). */
  private async conversionRewards(state: UserState) {
    if (state.referred_by === null || state.converted_at !== null) return [];
    const target = await this.codes.claimTarget(await this.codes.resolve(state.referred_by.code));
    return target?.conversionRewards ?? [];
  }
}
