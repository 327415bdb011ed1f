import type { Decision } from '../decider.js';
import { DomainError } from '../domain-error.js';
import type { Affiliate } from '../events/config-events.js';
import type { RewardKind } from '../rewards/reward-kinds.js';
import { timestamps } from './config-state.js';
import { checkConfiguredRewards } from './configured-rewards.js';

export type AffiliateInput = Omit<Affiliate, 'created_at' | 'updated_at'>;

/** PUT /admin/affiliates/{id}. A banned affiliate is final. */
export function decideDefineAffiliate(
  existing: Affiliate | null,
  input: AffiliateInput,
  rewardKinds: Map<string, RewardKind>,
  now: Date,
): Decision<{ created: boolean; affiliate: Affiliate }> {
  if (existing?.status === 'banned') throw new DomainError('AFFILIATE.BANNED', 'A banned affiliate cannot be changed', '/status');
  checkConfiguredRewards(input.rewards, rewardKinds, 'receiver', 'AFFILIATE', '/rewards');
  const affiliate: Affiliate = { ...input, ...timestamps(existing, now) };
  return {
    events: [{ type: existing ? 'AffiliateUpdated' : 'AffiliateCreated', data: { affiliate } }],
    result: { created: existing === null, affiliate },
  };
}
