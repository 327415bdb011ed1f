import { inject, injectable } from 'tsyringe';
import { CLAIM_SLOTS, claimSlotsProjection } from '../../../projections/claim-slots.js';
import { decideSlotRequests, type SlotRequest, slotCounts, type TakeSlot } from '../../domain/codes/claim-slots.js';
import { streams } from '../../domain/events/index.js';
import type { RuleHit } from '../../domain/fraud/claim-rules.js';
import { decideAbandonClaim } from '../../domain/users/abandon-claim.js';
import { userEvolver } from '../../domain/users/user-state.js';
import { StoreUnavailableError } from '../../ports/event-store.js';
import type { Ids } from '../../ports/ids.js';
import { READ_MODELS_WAIT_MS, type ReadConsistency } from '../../ports/read-consistency.js';
import type { ReadStore } from '../../ports/read-store.js';
import { TOKENS } from '../../ports/tokens.js';
import { type CommandContext, EventLog } from '../event-log.js';
import { StreamExecutor } from '../stream-executor.js';

interface Queued {
  request: SlotRequest;
  context: CommandContext;
  resolve(hold: RuleHit | null): void;
  reject(error: unknown): void;
}

/**
 * Claim slots in `code-{CODE}`: the limit guard of a claim. A slot is taken before the claim
 * is recorded in the claimer's stream; a claim that does not make it releases its slot.
 *
 * A popular code is one hot stream, and its writes cannot overlap. So requests arriving while
 * one append is in flight queue up and are decided and appended together, in arrival order
 * (each event keeping its own request's metadata): one commit serves the whole queue.
 */
@injectable()
export class ClaimSlots {
  private readonly queues = new Map<string, Queued[]>();
  /** Releases in flight in this process, by claim: a second abandon joins the first. */
  private readonly releasing = new Map<string, Promise<void>>();

  constructor(
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(EventLog) private readonly log: EventLog,
    @inject(TOKENS.ReadStore) private readonly readStore: ReadStore,
    @inject(TOKENS.ReadConsistency) private readonly consistency: ReadConsistency,
    @inject(TOKENS.Ids) private readonly ids: Ids,
  ) {}

  /**
   * Takes a slot of `code`; `guard` adds the fraud rules judged on the code's counts (SPEC §13)
   * and the claimer's abandoned claims whose slots it releases first (`abandonHeldBy`).
   * Resolves to the `hold` rule the claim triggers, if any.
   */
  take(
    code: string,
    claimId: string,
    claimer: string,
    limit: number,
    context: CommandContext,
    guard: Pick<TakeSlot, 'now' | 'rules' | 'refused' | 'replacing'> = {},
  ): Promise<RuleHit | null> {
    const taking = this.submit(code, { kind: 'take', claim_id: claimId, claimer, limit, ...guard }, context);
    // The claims it replaces are being released: an abandon of one of them meanwhile joins this.
    for (const replaced of guard.replacing ?? []) {
      const release = taking.then(
        () => undefined,
        () => undefined,
      );
      this.releasing.set(replaced, release);
      void release.finally(() => this.releasing.delete(replaced));
    }
    return taking;
  }

  /**
   * Gives up a claim whose slot is taken. The claimer's stream arbitrates: `ClaimAbandoned` is
   * appended there only if the claim was not recorded, and only then is the slot released —
   * so a late claim and a release can never both happen. The slot is released once: a claim
   * abandoned again (the repair and a stalled request, or the repair twice) finds its slot no
   * longer held in the claim-slots index, read once it has passed the code stream's last event.
   * `mayBeInFlight`: see `decideAbandonClaim` (`pending`: nothing done).
   */
  async abandon(
    code: string,
    claimId: string,
    claimer: string,
    context: CommandContext,
    { refusedAt, mayBeInFlight = false }: { refusedAt?: Date; mayBeInFlight?: boolean } = {},
  ): Promise<'claimed' | 'abandoned' | 'pending'> {
    const { result } = await this.executor.execute(
      streams.user(claimer),
      userEvolver,
      (state) => decideAbandonClaim(state, claimId, code, mayBeInFlight),
      context,
    );
    if (result === 'abandoned') {
      let release = this.releasing.get(claimId);
      if (!release) {
        release = this.releaseIfHeld(code, claimId, claimer, context, refusedAt).finally(() => this.releasing.delete(claimId));
        this.releasing.set(claimId, release);
      }
      await release;
    }
    return result;
  }

  /** `refusedAt`: the claim was refused after its slot was taken (it then no longer counts in its hour and day). */
  private async releaseIfHeld(code: string, claimId: string, claimer: string, context: CommandContext, refusedAt?: Date): Promise<void> {
    if (!(await this.indexPassedHeadOf(code))) {
      throw new StoreUnavailableError('The claim-slots index is behind; the claim repair will try again');
    }
    if ((await this.readStore.get(CLAIM_SLOTS, claimId)) === null) return;
    await this.submit(code, { kind: 'release', claim_id: claimId, claimer, ...(refusedAt ? { refused_at: refusedAt } : {}) }, context);
  }

  /**
   * Abandons, in `claimer`'s stream, the claims whose slots of `code` it still holds though they
   * never reached its stream (an earlier attempt that died half-way), read once the claim-slots
   * index has passed the code stream's last event (none while it lags behind). Resolves to
   * those claims, for the next `take` to release as it takes a slot (`replacing`); left
   * unreleased, the claim repair releases them later.
   */
  async abandonHeldBy(code: string, claimer: string, context: CommandContext): Promise<string[]> {
    if (!(await this.indexPassedHeadOf(code))) return [];
    const held = await this.readStore.find<{ claim_id: string }>(CLAIM_SLOTS, { where: { claimer, code }, limit: 100 });
    const abandoned: string[] = [];
    for (const { claim_id } of held) {
      if (this.releasing.has(claim_id)) continue;
      const { result } = await this.executor.execute(streams.user(claimer), userEvolver, (state) => decideAbandonClaim(state, claim_id, code), context);
      if (result === 'abandoned') abandoned.push(claim_id);
    }
    return abandoned;
  }

  /**
   * Gives back the slots `claimer` still holds on any code once its claim `claimed` is recorded:
   * a user claims one code (SPEC §5.1), so they are its earlier attempts that died half-way,
   * which would otherwise keep a limited code full until the claim repair. Read from the
   * claim-slots index (call it after the claim's read-your-writes wait); a slot the index has
   * not seen yet is left to the repair, as is one whose release fails.
   */
  async releaseStaleOf(claimer: string, claimed: string, context: CommandContext): Promise<void> {
    const held = await this.readStore.find<{ claim_id: string; code: string }>(CLAIM_SLOTS, { where: { claimer }, limit: 100 });
    for (const { claim_id, code } of held) {
      if (claim_id !== claimed) await this.abandon(code, claim_id, claimer, context);
    }
  }

  /** Whether the claim-slots index has passed the last event of `code`'s stream (waiting a little for it). */
  private async indexPassedHeadOf(code: string): Promise<boolean> {
    const head = (await this.log.last(streams.code(code)))?.position;
    return head === undefined || (await this.consistency.waitFor(head, READ_MODELS_WAIT_MS, claimSlotsProjection.name));
  }

  private submit(code: string, request: SlotRequest, context: CommandContext): Promise<RuleHit | null> {
    return new Promise((resolve, reject) => {
      const queue = this.queues.get(code);
      if (queue) {
        queue.push({ request, context, resolve, reject });
        return;
      }
      this.queues.set(code, [{ request, context, resolve, reject }]);
      void this.drain(code);
    });
  }

  /** Appends what is queued for `code`, batch after batch, until the queue is empty. */
  private async drain(code: string): Promise<void> {
    const queue = this.queues.get(code)!;
    while (queue.length > 0) {
      const batch = queue.splice(0);
      try {
        const { result } = await this.executor.executeOnLatest(
          streams.code(code),
          (latest) => {
            const decision = decideSlotRequests(
              slotCounts(latest),
              batch.map((queued) => queued.request),
            );
            // A release has a deterministic id: repeating it after a crash cannot release twice.
            const events = decision.events.map((event) =>
              event.type === 'ClaimSlotReleased' ? { ...event, id: this.ids.derived('release', event.data.claim_id) } : event,
            );
            return { events, result: decision.result };
          },
          (decision) => decision.result.requestOfEvent.map((index) => batch[index]!.context),
        );
        result.outcomes.forEach((outcome, index) => {
          if (outcome.ok) batch[index]!.resolve(outcome.hold);
          else batch[index]!.reject(outcome.error);
        });
      } catch (error) {
        for (const queued of batch) queued.reject(error);
      }
    }
    this.queues.delete(code);
  }
}
