import type { Evolver } from '../decider.js';
import type { DomainEvent } from '../events/index.js';
import type { Affiliate, Program, PromoCode } from '../events/config-events.js';
import type { RewardDefinition } from '../rewards/reward-schemas.js';

/** A configuration stream folds to its latest definition (null before the first). */
function latest<T>(name: string, pick: (event: DomainEvent) => T | undefined): Evolver<T | null> {
  return { name, version: 1, initialState: () => null, evolve: (state, event) => pick(event) ?? state };
}

export const rewardConfigEvolver = latest<RewardDefinition>('reward', (event) =>
  event.type === 'RewardCreated' || event.type === 'RewardUpdated' ? event.data.reward : undefined,
);
export const programConfigEvolver = latest<Program>('program', (event) =>
  event.type === 'ProgramCreated' || event.type === 'ProgramUpdated' ? event.data.program : undefined,
);
export const promoConfigEvolver = latest<PromoCode>('promo', (event) =>
  event.type === 'PromoCodeCreated' || event.type === 'PromoCodeUpdated' ? event.data.promo_code : undefined,
);
export const affiliateConfigEvolver = latest<Affiliate>('affiliate', (event) =>
  event.type === 'AffiliateCreated' || event.type === 'AffiliateUpdated' ? event.data.affiliate : undefined,
);

/** created_at of a new definition, or the one it keeps. */
export function timestamps(existing: { created_at: string } | null, now: Date) {
  return { created_at: existing?.created_at ?? now.toISOString(), updated_at: existing ? now.toISOString() : null };
}
