import { inject, injectable } from 'tsyringe';
import type { Config } from '../../config.js';
import { streams } from '../../domain/events/index.js';
import { assignProgram } from '../../domain/programs/program-assignment.js';
import { type ProfileFields, decideUpsertUser } from '../../domain/users/upsert-user.js';
import { type UserState, userEvolver } from '../../domain/users/user-state.js';
import type { Clock } from '../../ports/clock.js';
import { TOKENS } from '../../ports/tokens.js';
import type { CommandContext } from '../event-log.js';
import { CatalogQueries } from '../queries/catalog-queries.js';
import { CodeResolver } from '../queries/code-resolver.js';
import { ReadYourWrites } from '../read-your-writes.js';
import { StreamExecutor } from '../stream-executor.js';
import { CodeRegistry } from '../shared-resources/code-registry.js';

interface Prepared {
  now: Date;
  assignment: { program_id: string; referral_code: string } | null;
  conversionRewards: Awaited<ReturnType<UpsertUserHandler['conversionRewards']>>;
}

/** POST /users: create or update a user; give it a program and referral code when due. */
@injectable()
export class UpsertUserHandler {
  constructor(
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(CatalogQueries) private readonly catalog: CatalogQueries,
    @inject(CodeResolver) private readonly codes: CodeResolver,
    @inject(CodeRegistry) private readonly registry: CodeRegistry,
    @inject(ReadYourWrites) private readonly readYourWrites: ReadYourWrites,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Config) private readonly config: Config,
  ) {}

  async handle(appUserId: string, fields: Partial<ProfileFields>, context: CommandContext): Promise<{ created: boolean }> {
    let reservedCode: string | null = null;
    const command = (now: Date) => ({
      app_user_id: appUserId,
      fields,
      now,
      assignment: null,
      conversionRewards: [],
      conversions: this.config.CONVERSIONS_FROM,
    });
    const executed = await this.executor.execute(
      streams.user(appUserId),
      userEvolver,
      (state, prepared: Prepared) =>
        decideUpsertUser(state, { ...command(prepared.now), assignment: prepared.assignment, conversionRewards: prepared.conversionRewards }),
      context,
      {
        prepare: async ({ state }) => {
          const now = this.clock.now();
          // Validate before reserving anything, so a rejected request leaves no code behind.
          decideUpsertUser(state, command(now));
          let assignment = null;
          const program = state.program_id === null ? assignProgram(appUserId, await this.catalog.programs()) : null;
          if (program) {
            // A step of its own (the code stream), kept across conflict retries so a retry does
            // not reserve a second code.
            reservedCode ??= await this.registry.reserveReferralCode(appUserId, context);
            assignment = { program_id: program.id, referral_code: reservedCode };
          }
          return { now, assignment, conversionRewards: await this.conversionRewards(state) };
        },
      },
    );
    await this.readYourWrites.after(executed.position);
    return { created: executed.result.created };
  }

  private async conversionRewards(state: UserState) {
    if (state.referred_by === null || state.converted_at !== null) return [];
    const target = await this.codes.claimTarget(await this.codes.resolve(state.referred_by.code));
    return target?.conversionRewards ?? [];
  }
}
