import type { Decision } from '../decider.js';
import { DomainError } from '../domain-error.js';
import type { RewardDefinition } from '../rewards/reward-schemas.js';
import { timestamps } from './config-state.js';

export type RewardInput = Omit<RewardDefinition, 'created_at' | 'updated_at'>;

const IMMUTABLE = ['kind', 'credits', 'offer_code_id'] as const;

/** PUT /admin/rewards/{key}: create, or update everything but kind, credits and offer_code_id. */
export function decideDefineReward(existing: RewardDefinition | null, input: RewardInput, now: Date): Decision<{ created: boolean; reward: RewardDefinition }> {
  if (existing) {
    for (const field of IMMUTABLE) {
      if (existing[field] !== input[field]) {
        throw new DomainError('REWARD.IMMUTABLE_FIELD', `${field} of a reward cannot change (was ${String(existing[field])})`, `/${field}`);
      }
    }
  }
  const reward: RewardDefinition = { ...input, ...timestamps(existing, now) };
  return {
    events: [{ type: existing ? 'RewardUpdated' : 'RewardCreated', data: { reward } }],
    result: { created: existing === null, reward },
  };
}
