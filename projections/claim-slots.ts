import type { Projection } from './projection.js';
import { streams } from '../src/domain/events/index.js';

export const CLAIM_SLOTS = 'claim_slots';

/**
 * Claim slots taken whose claim has not (yet) reached the claimer's stream. A slot left here
 * for long means a claim crashed half-way; the claim repair releases it, or the claimer's next
 * claim: as it takes a slot of a full code, or once it is recorded.
 */
export const claimSlotsProjection: Projection = {
  name: 'claim_slots',
  version: 1,
  collections: [{ name: CLAIM_SLOTS, indexes: ['taken_at', 'claimer'] }],
  eventTypes: ['ClaimSlotTaken', 'ClaimSlotReleased', 'CodeClaimed'],
  targets: (event) => {
    if (event.type === 'ClaimSlotTaken' || event.type === 'ClaimSlotReleased' || event.type === 'CodeClaimed') {
      return [{ collection: CLAIM_SLOTS, id: event.data.claim_id }];
    }
    return [];
  },
  evolve: (_ref, _doc, event) => {
    if (event.type !== 'ClaimSlotTaken') return null;
    return {
      claim_id: event.data.claim_id,
      code: streams.idOf('code', event.stream)!,
      claimer: event.data.claimer,
      taken_at: event.recordedAt.toISOString(),
    };
  },
};
