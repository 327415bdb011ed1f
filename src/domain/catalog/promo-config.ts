import type { Decision } from '../decider.js';
import type { PromoCode } from '../events/config-events.js';
import type { RewardKind } from '../rewards/reward-kinds.js';
import { timestamps } from './config-state.js';
import { checkConfiguredRewards } from './configured-rewards.js';

export type PromoCodeInput = Omit<PromoCode, 'created_at' | 'updated_at'>;

/** PUT /admin/promo-codes/{code} (the code itself is reserved in the namespace first). */
export function decideDefinePromoCode(
  existing: PromoCode | null,
  input: PromoCodeInput,
  rewardKinds: Map<string, RewardKind>,
  now: Date,
): Decision<{ created: boolean; promo_code: PromoCode }> {
  checkConfiguredRewards(input.rewards, rewardKinds, 'receiver', 'CODE', '/rewards');
  const promo: PromoCode = { ...input, ...timestamps(existing, now) };
  return {
    events: [{ type: existing ? 'PromoCodeUpdated' : 'PromoCodeCreated', data: { promo_code: promo } }],
    result: { created: existing === null, promo_code: promo },
  };
}
