import { inject, injectable } from 'tsyringe';
import type { Config } from '../../config.js';
import { normalizeCode } from '../../domain/codes/referral-code.js';
import { DomainError } from '../../domain/domain-error.js';
import { NO_VERDICT, RejectedByRule, type RuleHit } from '../../domain/fraud/claim-rules.js';
import type { TakeSlot } from '../../domain/codes/claim-slots.js';
import { streams } from '../../domain/events/index.js';
import type { GrantedFact } from '../../domain/events/user-events.js';
import type { Decision } from '../../domain/decider.js';
import { type ClaimCodeCommand, checkClaim, decideClaimCode } from '../../domain/users/claim-code.js';
import { type UserState, userEvolver } from '../../domain/users/user-state.js';
import type { Clock } from '../../ports/clock.js';
import type { Ids } from '../../ports/ids.js';
import type { Logger } from '../../ports/logger.js';
import { TOKENS } from '../../ports/tokens.js';
import { CommandExecutor } from '../command-executor.js';
import type { CommandContext } from '../event-log.js';
import { CodeResolver } from '../queries/code-resolver.js';
import { StreamExecutor } from '../stream-executor.js';
import { WRITE_ATTEMPTS } from '../write-retries.js';
import { KeyedLock } from '../keyed-lock.js';
import { ClaimFraudChecks, type ClaimFraudSteps } from '../fraud/claim-fraud-checks.js';
import { ClaimSlots } from '../shared-resources/claim-slots.js';

/** The steps of a claim on the stores at hand (the service's or the event generator's). */
export interface ClaimSteps<R> {
  now(): Date;
  /** A new claim id (one per attempt). */
  claimId(): string;
  /** The claimer's current state. */
  claimer(): Promise<UserState>;
  /**
   * Takes a claim slot on the code's stream (CLAIM.LIMIT_REACHED when none is left), with the
   * fraud rules judged on the code's counts in `guard`, after releasing the slots of the claims
   * it replaces; resolves to the `hold` rule it triggers.
   */
  takeSlot(claimId: string, guard: Pick<TakeSlot, 'now' | 'rules' | 'refused' | 'replacing'>): Promise<RuleHit | null>;
  /** Records the claim in the claimer's stream, decided by `decide` on its latest state. */
  record(decide: (state: UserState) => Decision<{ granted: GrantedFact[] }>): Promise<R>;
  /**
   * Gives the slot back after a failed `record`, or after a claim refused once its slot was taken
   * (`refusedAt`: when that claim was made; it then no longer counts in its hour and day).
   */
  giveBack(claimId: string, refusedAt?: Date): Promise<void>;
  /**
   * Abandons the claimer's earlier claims that hold a slot of the code but never reached its
   * stream (a request that died half-way); resolves to them, for `takeSlot` to release (`replacing`).
   */
  abandonStale(): Promise<string[]>;
  /** The fraud rules' steps (SPEC §13); null when no rule judges this claim. */
  fraud: ClaimFraudSteps | null;
}

/**
 * What happens on claim, whatever it runs on (the handler below, the event generator):
 * 1. the claimer's checks (`checkClaim`) on its current state;
 * 2. the fraud rules on the parties (`judgeParties`), when rules judge the claim;
 * 3. a claim slot on the code's stream: the limit, then the referrer's rate rules, then a
 *    party's `reject` (a refusal by a rule is recorded in the claimer's stream); and, in the same
 *    round, 4. the payment customer's claimers counter when a rule needs it (a refusal by either
 *    gives back what the other took; the slot's refusal is the one reported);
 * 5. the claim and the receiver's rewards in the claimer's stream (`decideClaimCode`), with the
 *    `hold` a rule put on it; a claim that cannot be recorded gives its slot and count back, and
 *    a slot lost meanwhile (the claim repair released it) starts again with a new claim id.
 * Two streams, no transaction: if the process dies between 3 and 5, the claim repair gives the
 * slot back later; sooner, the claimer's retry finds the code full with its own earlier slot,
 * abandons that claim and releases its slot in the same append that takes a new one. A retry
 * that finds room takes a new slot, and the handler gives the earlier one back once the claim
 * is recorded (`ClaimSlots.releaseStaleOf`).
 */
const NOT_COUNTED = Promise.resolve({ hold: null, stream: null });

export async function runClaim<R>(steps: ClaimSteps<R>, request: Omit<ClaimCodeCommand, 'now' | 'claim_id' | 'hold'>): Promise<R> {
  const fraud = steps.fraud;
  let staleLookedFor = false;
  let replacing: string[] = [];
  for (let attempt = 1; ; attempt += 1) {
    const command = { ...request, claim_id: steps.claimId(), now: steps.now() };
    const claimer = await steps.claimer();
    checkClaim(claimer, command);
    const parties = fraud ? await fraud.judgeParties(claimer, command.now) : NO_VERDICT;
    // A referral code's slots count its claims of the hour and day even while no rule judges
    // them, so that a rate rule enabled later counts the claims made before it.
    const counts = command.target?.type === 'referral' ? { now: command.now } : {};
    const guard = { ...(fraud ? { now: command.now, rules: fraud.rules, refused: parties.reject } : counts), replacing };
    replacing = [];
    // The slot and the payment customer's count are taken together (one group commit); a claim
    // refused by either gives back what the other took.
    const [slot, counted] = await Promise.allSettled([
      steps.takeSlot(command.claim_id, guard),
      fraud ? fraud.countPaymentCustomer(claimer, command.claim_id) : NOT_COUNTED,
    ]);
    if (slot.status === 'rejected' || counted.status === 'rejected') {
      // Refused by the payment-customer rule, the claim did not happen: it no longer counts in its hour and day.
      const refusedByRule = counted.status === 'rejected' && counted.reason instanceof RejectedByRule;
      if (slot.status === 'fulfilled') await steps.giveBack(command.claim_id, refusedByRule ? command.now : undefined);
      if (counted.status === 'fulfilled') await fraud?.releasePaymentCustomer(counted.value.stream, command.claim_id);
      const error: unknown = slot.status === 'rejected' ? slot.reason : (counted as PromiseRejectedResult).reason;
      if (fraud && error instanceof RejectedByRule) await fraud.recordRejection(error.rule, command.now);
      // The code may be full of the claimer's own earlier attempt: the claim tries again, once,
      // releasing that slot as it takes one.
      const full = error instanceof DomainError && error.code === 'CLAIM.LIMIT_REACHED';
      if (full && !staleLookedFor) {
        staleLookedFor = true;
        replacing = await steps.abandonStale();
        if (replacing.length > 0) continue;
      }
      throw error;
    }
    const paymentCustomer = counted.value.stream;
    const hold: RuleHit | null = parties.hold ?? slot.value ?? counted.value.hold;
    const claimHold = fraud ? fraud.holdOf(hold, command.claim_id) : null;
    try {
      return await steps.record((state) => decideClaimCode(state, { ...command, now: steps.now(), hold: claimHold }));
    } catch (error) {
      await steps.giveBack(command.claim_id);
      await fraud?.releasePaymentCustomer(paymentCustomer, command.claim_id);
      const slotLost = error instanceof DomainError && error.code === 'CLAIM.SLOT_LOST';
      if (!slotLost || attempt >= WRITE_ATTEMPTS) throw error;
    }
  }
}

/**
 * POST /users/{id}/claim-code: `runClaim` on the service's stores, then the after-commit work
 * (read-your-writes, pooled-code requests) of every write.
 *
 * One claim per claimer at a time (in this process): a user who already has a claim in flight
 * would pass the "not claimed before" check (SPEC §5.1 step 4) and take a slot on the code,
 * only to give it back once the first claim is recorded. Thirty such requests held every slot
 * of a limited code meanwhile, and other users were told CLAIM.LIMIT_REACHED. Queued, the next
 * claim sees the first one recorded and is ALREADY_CLAIMED without touching the code.
 *
 * Fraud rules (SPEC §13) judge referral claims (src/application/fraud/claim-fraud-checks.ts):
 * a `reject` answers 422 and is recorded in the claimer's stream; a `hold` is recorded on the claim.
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
    @inject(TOKENS.Logger) private readonly logger: Logger,
  ) {}

  private readonly claimers = new KeyedLock();

  handle(appUserId: string, rawCode: string, context: CommandContext): Promise<{ granted: GrantedFact[] }> {
    return this.claimers.run(appUserId, () => this.claim(appUserId, rawCode, context));
  }

  private async claim(appUserId: string, rawCode: string, context: CommandContext): Promise<{ granted: GrantedFact[] }> {
    const code = normalizeCode(rawCode);
    const resolved = await this.resolver.resolve(code);
    const target = await this.resolver.claimTarget(resolved);
    const stream = streams.user(appUserId);
    const executed = await runClaim(
      {
        now: () => this.clock.now(),
        claimId: () => this.ids.uuid(),
        claimer: async () => (await this.executor.load(stream, userEvolver)).state,
        // checkClaim has refused an unknown code before a slot is taken.
        takeSlot: (claimId, guard) => this.slots.take(code, claimId, appUserId, resolved!.limit, context, guard),
        record: (decide) => this.executor.execute(stream, userEvolver, decide, context),
        giveBack: async (claimId, refusedAt) => {
          await this.slots.abandon(code, claimId, appUserId, context, { refusedAt });
        },
        abandonStale: () => this.slots.abandonHeldBy(code, appUserId, context),
        fraud: await this.fraud.stepsFor(target, appUserId, context),
      },
      { code, target, windowDays: this.config.CLAIM_WINDOW_DAYS, conversions: this.config.CONVERSIONS_FROM },
    );
    await this.commands.afterCommit(executed.position, context, appUserId, executed.result.granted);
    const claimed = executed.state.referred_by?.claim_id;
    if (executed.position !== null && claimed) {
      await this.slots.releaseStaleOf(appUserId, claimed, context).catch((error: unknown) => {
        // The claim is recorded: answering an error would make the client retry into ALREADY_CLAIMED.
        this.logger.warn({ err: error, app_user_id: appUserId }, 'stale claim slots not released; the claim repair will');
      });
    }
    return { granted: executed.result.granted };
  }
}
