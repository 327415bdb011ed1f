import { inject, injectable } from 'tsyringe';
import type { Config } from '../../config.js';
import { normalizeCode } from '../../domain/codes/referral-code.js';
import { DomainError } from '../../domain/domain-error.js';
import { NO_VERDICT, RejectedByRule, type RuleHit } from '../../domain/fraud/claim-rules.js';
import { streams } from '../../domain/events/index.js';
import type { GrantedFact } from '../../domain/events/user-events.js';
import type { Decision } from '../../domain/decider.js';
import { type ClaimCodeCommand, checkClaim, decideClaimCode } from '../../domain/users/claim-code.js';
import { type UserState, userEvolver } from '../../domain/users/user-state.js';
import type { Clock } from '../../ports/clock.js';
import type { Ids } from '../../ports/ids.js';
import { TOKENS } from '../../ports/tokens.js';
import { CommandExecutor } from '../command-executor.js';
import type { CommandContext } from '../event-log.js';
import { CodeResolver } from '../queries/code-resolver.js';
import { StreamExecutor } from '../stream-executor.js';
import { WRITE_ATTEMPTS } from '../write-retries.js';
import { ClaimFraudChecks } from '../fraud/claim-fraud-checks.js';
import { ClaimSlots } from '../shared-resources/claim-slots.js';

/** The steps of a claim on the stores at hand (the event generator's; see runClaim). */
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
 * A claim without fraud rules, whatever it runs on: the claimer's checks (`checkClaim`), then a
 * claim slot on the code's stream (the limit), then the claim and the receiver's rewards in the
 * claimer's stream (`decideClaimCode`); a claim that cannot be recorded gives its slot back.
 * The event generator runs it (it defines no fraud rules); the handler below runs the same
 * steps with the fraud rules' steps between them (to fold them in here: DEVELOPING.md).
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

/**
 * POST /users/{id}/claim-code. Two streams, no transaction: the code's claim slot is taken
 * first (limit guard), then the claim is recorded in the claimer's stream (single-claim
 * guard). If the second step fails the slot is given back; if the process dies in between,
 * the claim repair gives it back later.
 *
 * Fraud rules (SPEC §13) judge referral claims: the parties' rules before the slot (refused in
 * the slot's decision, after the limit), the referrer's hourly and daily counts in the slot's
 * decision, the payment customer's claimers in its own counter stream. A `reject` answers 422
 * and is recorded in the claimer's stream; a `hold` is recorded on the claim.
 */
@injectable()
export class ClaimCodeHandler {
  constructor(
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(CodeResolver) private readonly resolver: CodeResolver,
    @inject(ClaimSlots) private readonly slots: ClaimSlots,
    @inject(ClaimFraudChecks) private readonly fraud: ClaimFraudChecks,
    @inject(CommandExecutor) private readonly commands: CommandExecutor,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Ids) private readonly ids: Ids,
    @inject(TOKENS.Config) private readonly config: Config,
  ) {}

  async handle(appUserId: string, rawCode: string, context: CommandContext): Promise<{ granted: GrantedFact[] }> {
    const code = normalizeCode(rawCode);
    const resolved = await this.resolver.resolve(code);
    const target = await this.resolver.claimTarget(resolved);
    const rules = await this.fraud.rulesFor(target);
    const stream = streams.user(appUserId);
    for (let attempt = 1; ; attempt += 1) {
      const command = {
        claim_id: this.ids.uuid(),
        code,
        target,
        now: this.clock.now(),
        windowDays: this.config.CLAIM_WINDOW_DAYS,
        conversions: this.config.CONVERSIONS_FROM,
      };
      const { state } = await this.executor.load(stream, userEvolver);
      checkClaim(state, command);
      const parties = rules.length > 0 ? await this.fraud.judgeParties(rules, state, target!, command.now) : NO_VERDICT;
      let hold: RuleHit | null;
      try {
        const guard = rules.length > 0 ? { now: command.now, rules, refused: parties.reject } : {};
        const rateHold = await this.slots.take(code, command.claim_id, appUserId, resolved!.limit, context, guard);
        hold = parties.hold ?? rateHold;
      } catch (error) {
        if (error instanceof RejectedByRule) await this.fraud.recordRejection(appUserId, error.rule, target!, command.now, context);
        throw error;
      }
      let paymentCustomer: string | null = null;
      try {
        const counted = await this.fraud.countPaymentCustomer(rules, state, context);
        paymentCustomer = counted.stream;
        hold ??= counted.hold;
      } catch (error) {
        await this.slots.abandon(code, command.claim_id, appUserId, context);
        if (error instanceof RejectedByRule) await this.fraud.recordRejection(appUserId, error.rule, target!, command.now, context);
        throw error;
      }
      const claimHold = this.fraud.holdOf(hold, command.claim_id);
      let executed: Awaited<ReturnType<typeof this.executor.execute<UserState, { granted: GrantedFact[] }>>>;
      try {
        executed = await this.executor.execute(
          stream,
          userEvolver,
          (current) => decideClaimCode(current, { ...command, now: this.clock.now(), hold: claimHold }),
          context,
        );
      } catch (error) {
        await this.slots.abandon(code, command.claim_id, appUserId, context);
        await this.fraud.releasePaymentCustomer(paymentCustomer, context);
        const slotLost = error instanceof DomainError && error.code === 'CLAIM.SLOT_LOST';
        if (!slotLost || attempt >= WRITE_ATTEMPTS) throw error;
        continue;
      }
      await this.commands.afterCommit(executed.position, context, appUserId, executed.result.granted);
      return { granted: executed.result.granted };
    }
  }
}
