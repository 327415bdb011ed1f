import { inject, injectable } from 'tsyringe';
import { decideReleaseSlot, decideTakeSlot, slotsTaken } from '../../domain/codes/claim-slots.js';
import { streams } from '../../domain/events/index.js';
import { decideAbandonClaim } from '../../domain/users/maintenance.js';
import { userEvolver } from '../../domain/users/user-state.js';
import type { Ids } from '../../ports/ids.js';
import { TOKENS } from '../../ports/tokens.js';
import type { CommandContext } from '../event-log.js';
import { StreamExecutor } from '../stream-executor.js';

/**
 * Claim slots in `code-{CODE}`: the limit guard of a claim. A slot is taken before the claim
 * is recorded in the claimer's stream; a claim that does not make it releases its slot.
 */
@injectable()
export class ClaimSlots {
  constructor(
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(TOKENS.Ids) private readonly ids: Ids,
  ) {}

  async take(code: string, claimId: string, claimer: string, limit: number, context: CommandContext): Promise<void> {
    await this.executor.executeOnLatest(streams.code(code), (latest) => decideTakeSlot(slotsTaken(latest), limit, claimId, claimer), context);
  }

  /**
   * Gives up a claim whose slot is taken. The claimer's stream arbitrates: `ClaimAbandoned` is
   * appended there only if the claim was not recorded, and only then is the slot released —
   * so a late claim and a release can never both happen.
   */
  async abandon(code: string, claimId: string, claimer: string, context: CommandContext): Promise<'claimed' | 'abandoned'> {
    const { result } = await this.executor.execute(streams.user(claimer), userEvolver, (state) => decideAbandonClaim(state, claimId, code), context);
    if (result === 'abandoned') {
      await this.executor.executeOnLatest(
        streams.code(code),
        (latest) => {
          const decision = decideReleaseSlot(slotsTaken(latest), claimId, claimer);
          return { ...decision, events: decision.events.map((event) => ({ ...event, id: this.ids.derived('release', claimId) })) };
        },
        context,
      );
    }
    return result;
  }
}
