import { inject, injectable } from 'tsyringe';
import type { Config } from '../../config.js';
import { normalizeCode } from '../../domain/codes/referral-code.js';
import type { Decision } from '../../domain/decider.js';
import { DomainError } from '../../domain/domain-error.js';
import { streams } from '../../domain/events/index.js';
import type { GrantedFact } from '../../domain/events/user-events.js';
import { type ClaimCodeCommand, checkClaim, decideClaimCode } from '../../domain/users/claim-code.js';
import { type UserState, userEvolver } from '../../domain/users/user-state.js';
import type { Clock } from '../../ports/clock.js';
import type { Ids } from '../../ports/ids.js';
import { TOKENS } from '../../ports/tokens.js';
import { CommandExecutor } from '../command-executor.js';
import type { CommandContext } from '../event-log.js';
import { CodeResolver } from '../queries/code-resolver.js';
import { ClaimSlots } from '../shared-resources/claim-slots.js';
import { withWriteRetries } from '../write-retries.js';

/** The steps of a claim on the stores at hand: the service's, or the event generator's. */
export interface ClaimSteps<R> {
  now(): Date;
  /** The claimer's current state. */
  claimer(): Promise<UserState>;
  /** Takes a claim slot on the code's stream (CLAIM.LIMIT_REACHED when none is left). */
  takeSlot(claimId: string): Promise<void>;
  /** Records the claim in the claimer's stream, decided by `decide` on its latest state. */
  record(decide: (state: UserState) => Decision<{ granted: GrantedFact[] }>): Promise<R>;
  /** Gives the slot back after a failed `record`. */
  giveBack(claimId: string): Promise<void>;
}

/**
 * What happens on a claim (SPEC §5.1), whatever it runs on: the claimer's checks (steps 2–7,
 * `checkClaim`), then a claim slot on the code's stream (the limit, step 8), then the claim and
 * the receiver's rewards in the claimer's stream (`decideClaimCode`). Two streams, no
 * transaction: a claim that cannot be recorded gives its slot back (and if the process dies in
 * between, the claim repair gives it back later).
 */
export async function runClaim<R>(steps: ClaimSteps<R>, request: Omit<ClaimCodeCommand, 'now'>): Promise<R> {
  const command = { ...request, now: steps.now() };
  checkClaim(await steps.claimer(), command);
  await steps.takeSlot(command.claim_id);
  try {
    return await steps.record((state) => decideClaimCode(state, { ...command, now: steps.now() }));
  } catch (error) {
    await steps.giveBack(command.claim_id);
    throw error;
  }
}

const slotLost = (error: unknown) => error instanceof DomainError && error.code === 'CLAIM.SLOT_LOST';

/**
 * POST /users/{id}/claim-code: `runClaim` on the service's stores. A claim whose slot the claim
 * repair released while the request stalled (CLAIM.SLOT_LOST) starts again with a new claim id
 * (write-retries.ts).
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
    const steps: ClaimSteps<{ granted: GrantedFact[] }> = {
      now: () => this.clock.now(),
      claimer: async () => (await this.commands.load(stream, userEvolver)).state,
      takeSlot: (claimId) => this.slots.take(code, claimId, appUserId, resolved!.limit, context),
      record: async (decide) => {
        const executed = await this.commands.execute(stream, userEvolver, decide, context, { granted: (result) => result.granted });
        return { granted: executed.result.granted };
      },
      giveBack: async (claimId) => {
        await this.slots.abandon(code, claimId, appUserId, context);
      },
    };
    return withWriteRetries(slotLost, () =>
      runClaim(steps, { claim_id: this.ids.uuid(), code, target, windowDays: this.config.CLAIM_WINDOW_DAYS, conversions: this.config.CONVERSIONS_FROM }),
    );
  }
}
