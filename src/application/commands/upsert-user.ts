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
 * referral code is reserved under the user's lock, as a step of its own on the code's stream,
 * once the user is known to have none: concurrent creates of one user wait for each other, so
 * only the first reserves a code (before, each reserved one and all but one were left orphaned,
 * refusing those codes to promo codes and affiliates). A retry after a conflict reuses the
 * request's reservation rather than reserve a second code.
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
    let reservation: Promise<string> | null = null;
    const reserve = () => (reservation ??= this.registry.reserveReferralCode(appUserId, context));
    const executed = await this.commands.execute(
      stream,
      userEvolver,
      (current, prepared: Awaited<ReturnType<UpsertUserHandler['prepared']>>) => decideUpsertUser(current, { ...command(this.clock.now()), ...prepared }),
      context,
      {
        prepare: ({ state: current }) => {
          // Validate before reserving anything, so a rejected request leaves no code behind.
          decideUpsertUser(current, command(this.clock.now()));
          return this.prepared(appUserId, current, reserve);
        },
      },
    );
    return { created: executed.result.created };
  }

  /** Under the user's lock: the program and code of a user without one, and the conversion rewards due. */
  private async prepared(appUserId: string, current: UserState, reserve: () => Promise<string>) {
    const program = current.program_id === null ? assignProgram(appUserId, await this.catalog.programs()) : null;
    const assignment = program && { program_id: program.id, referral_code: await reserve() };
    return { assignment, conversionRewards: await this.conversionRewards(current) };
  }

  /** Receiver rewards with activation "conversion" of the code the user claimed (none once converted). */
  private async conversionRewards(state: UserState) {
    if (state.referred_by === null || state.converted_at !== null) return [];
    const target = await this.codes.claimTarget(await this.codes.resolve(state.referred_by.code));
    return target?.conversionRewards ?? [];
  }
}
