import { inject, injectable } from 'tsyringe';
import { CLAIM_SLOTS } from '../../../projections/claim-slots.js';
import type { Clock } from '../../ports/clock.js';
import type { ReadStore } from '../../ports/read-store.js';
import { TOKENS } from '../../ports/tokens.js';
import { ClaimSlots } from '../shared-resources/claim-slots.js';

/** A claim slot held this long without its claim is taken to be from a crashed request. */
const ABANDONED_AFTER_MS = 60_000;

/**
 * Repairs claims that died between taking a code's slot and recording the claim: the
 * claimer's stream decides (claim recorded → keep; otherwise `ClaimAbandoned`) and an
 * abandoned claim's slot is released. A slot younger than the grace period is released only
 * when its claim is already settled (`decideAbandonClaim`'s `mayBeInFlight`): abandoned by a
 * request killed before it released the slot, or of a claimer since claimed with another claim.
 */
@injectable()
export class ClaimRepair {
  constructor(
    @inject(ClaimSlots) private readonly slots: ClaimSlots,
    @inject(TOKENS.ReadStore) private readonly readStore: ReadStore,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  /** Returns the number of slots released. */
  async run(): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - ABANDONED_AFTER_MS).toISOString();
    const held = await this.readStore.find<{ claim_id: string; code: string; claimer: string; taken_at: string }>(CLAIM_SLOTS, {
      orderBy: { field: 'taken_at', direction: 'asc' },
      limit: 500,
    });
    let released = 0;
    for (const slot of held) {
      const context = { correlation_id: `repair-${slot.claim_id}`, causation_id: slot.claim_id, actor: 'process:claim-repair' };
      const outcome = await this.slots.abandon(slot.code, slot.claim_id, slot.claimer, context, { mayBeInFlight: slot.taken_at > cutoff });
      if (outcome === 'abandoned') released += 1;
    }
    return released;
  }
}
