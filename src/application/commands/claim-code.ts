import { inject, injectable } from 'tsyringe';
import type { Config } from '../../config.js';
import { normalizeCode } from '../../domain/codes/referral-code.js';
import { DomainError } from '../../domain/domain-error.js';
import { streams } from '../../domain/events/index.js';
import type { GrantedFact } from '../../domain/events/user-events.js';
import { checkClaim, decideClaimCode } from '../../domain/users/claim-code.js';
import { userEvolver } from '../../domain/users/user-state.js';
import type { Clock } from '../../ports/clock.js';
import type { Ids } from '../../ports/ids.js';
import { TOKENS } from '../../ports/tokens.js';
import { CommandExecutor } from '../command-executor.js';
import type { CommandContext } from '../event-log.js';
import { CodeResolver } from '../queries/code-resolver.js';
import { ClaimSlots } from '../shared-resources/claim-slots.js';
import { withWriteRetries } from '../write-retries.js';

const slotLost = (error: unknown) => error instanceof DomainError && error.code === 'CLAIM.SLOT_LOST';

/**
 * POST /users/{id}/claim-code. Two streams, no transaction: the code's claim slot is taken
 * first (limit guard), then the claim is recorded in the claimer's stream (single-claim
 * guard). If the second step fails the slot is given back; if the process dies in between,
 * the claim repair gives it back later. A claim whose slot the repair released while the
 * request stalled (CLAIM.SLOT_LOST) starts again with a new claim id (write-retries.ts).
 */
@injectable()
export class ClaimCodeHandler {
  constructor(
    @inject(CommandExecutor) private readonly commands: CommandExecutor,
    @inject(CodeResolver) private readonly resolver: CodeResolver,
    @inject(ClaimSlots) private readonly slots: ClaimSlots,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Ids) private readonly ids: Ids,
    @inject(TOKENS.Config) private readonly config: Config,
  ) {}

  async handle(appUserId: string, rawCode: string, context: CommandContext): Promise<{ granted: GrantedFact[] }> {
    const code = normalizeCode(rawCode);
    const resolved = await this.resolver.resolve(code);
    const target = await this.resolver.claimTarget(resolved);
    const stream = streams.user(appUserId);
    return withWriteRetries(slotLost, async () => {
      const command = {
        claim_id: this.ids.uuid(),
        code,
        target,
        now: this.clock.now(),
        windowDays: this.config.CLAIM_WINDOW_DAYS,
        conversions: this.config.CONVERSIONS_FROM,
      };
      const { state } = await this.commands.load(stream, userEvolver);
      checkClaim(state, command);
      await this.slots.take(code, command.claim_id, appUserId, resolved!.limit, context);
      try {
        const executed = await this.commands.execute(
          stream,
          userEvolver,
          (current) => decideClaimCode(current, { ...command, now: this.clock.now() }),
          context,
          {
            granted: (result) => result.granted,
          },
        );
        return { granted: executed.result.granted };
      } catch (error) {
        await this.slots.abandon(code, command.claim_id, appUserId, context);
        throw error;
      }
    });
  }
}
