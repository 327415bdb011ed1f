import { inject, injectable } from 'tsyringe';
import type { Config } from '../../config.js';
import { normalizeCode } from '../../domain/codes/referral-code.js';
import { DomainError } from '../../domain/domain-error.js';
import { NO_VERDICT, RejectedByRule, type RuleHit } from '../../domain/fraud/claim-rules.js';
import { streams } from '../../domain/events/index.js';
import type { GrantedFact } from '../../domain/events/user-events.js';
import { POOLED_KINDS } from '../../domain/rewards/reward-kinds.js';
import { checkClaim, decideClaimCode } from '../../domain/users/claim-code.js';
import { type UserState, userEvolver } from '../../domain/users/user-state.js';
import type { Clock } from '../../ports/clock.js';
import type { Ids } from '../../ports/ids.js';
import { TOKENS } from '../../ports/tokens.js';
import type { CommandContext } from '../event-log.js';
import { CodeResolver } from '../queries/code-resolver.js';
import { ReadYourWrites } from '../read-your-writes.js';
import { StreamExecutor } from '../stream-executor.js';
import { ClaimFraudChecks } from '../fraud/claim-fraud-checks.js';
import { ClaimSlots } from '../shared-resources/claim-slots.js';
import { PoolAssignments } from '../shared-resources/pool-assignments.js';

const ATTEMPTS = 3;

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
    @inject(PoolAssignments) private readonly pools: PoolAssignments,
    @inject(ReadYourWrites) private readonly readYourWrites: ReadYourWrites,
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
        if (!slotLost || attempt >= ATTEMPTS) throw error;
        continue;
      }
      const pooled = executed.result.granted.filter((grant) => POOLED_KINDS.includes(grant.kind));
      for (const grant of pooled) await this.pools.request(grant.reward_key, grant.grant_id, appUserId, context);
      // A reaction may hand out the pooled codes concurrently: then wait for everything so far.
      await this.readYourWrites.after(pooled.length > 0 ? null : executed.position);
      return { granted: executed.result.granted };
    }
  }
}
