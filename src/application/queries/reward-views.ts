import type { Program } from '../../domain/events/config-events.js';
import { type ByKind, emptyByKind, REPEATABLE_SENDER_KINDS, type RewardKind } from '../../domain/rewards/reward-kinds.js';
import type { Activation, Deactivation, RewardDefinition, ConfiguredReward } from '../../domain/rewards/reward-schemas.js';
import type { AdminRewardOut } from '../../http/schemas/admin.js';
import type { ProgramEntryOut, ReferralProgramOut, RewardDefinitionOut } from '../../http/schemas/rewards.js';

const KIND_FIELDS: Record<RewardKind, (keyof RewardDefinition)[]> = {
  basic: [],
  credit: ['credits'],
  offer_code: ['offer_code_id', 'offer_code_ref_name', 'subscription_product_id'],
  store_promo_code: [],
  partner_entitlement: ['entitlement_id', 'entitlement_key'],
  partner_offering: ['offering_id', 'offering_key'],
};

/** The seed's reward definition: common fields plus the kind's own, without `kind`. */
export function rewardView(reward: RewardDefinition): RewardDefinitionOut {
  const view: Record<string, unknown> = {
    key: reward.key,
    name: reward.name,
    description: reward.description,
    metadata: reward.metadata,
  };
  for (const field of KIND_FIELDS[reward.kind]) view[field] = reward[field] ?? null;
  return { ...(view as RewardDefinitionOut), created_at: reward.created_at, updated_at: reward.updated_at };
}

/** The admin API's reward: the seed's definition plus `kind`. */
export function adminRewardView(reward: RewardDefinition): AdminRewardOut {
  return { kind: reward.kind, ...rewardView(reward) } as AdminRewardOut;
}

/** Activation in the seed's per-kind shape: receivers show only `variant`. */
function activationView(activation: Activation, kind: RewardKind, role: 'sender' | 'receiver'): ProgramEntryOut['activation'] {
  if (role === 'receiver') return { variant: activation.variant };
  const view: ProgramEntryOut['activation'] = { variant: activation.variant, amount: activation.amount ?? 1 };
  if (REPEATABLE_SENDER_KINDS.includes(kind)) view.limit = activation.limit ?? 0;
  return view;
}

function deactivationView(deactivation: Deactivation): ProgramEntryOut['deactivation'] {
  return deactivation.variant === 'never' ? { variant: 'never' } : { variant: 'interval', duration: deactivation.duration, period: deactivation.period };
}

/** Entries grouped into the six kind arrays of `{reward, activation, deactivation}`. */
export function entriesByKind(entries: ConfiguredReward[], rewards: Map<string, RewardDefinition>, role: 'sender' | 'receiver'): ByKind<ProgramEntryOut> {
  const grouped = emptyByKind<ProgramEntryOut>();
  for (const entry of entries) {
    const reward = rewards.get(entry.reward_key);
    if (!reward) continue;
    grouped[reward.kind].push({
      reward: rewardView(reward),
      activation: activationView(entry.activation, reward.kind, role),
      deactivation: deactivationView(entry.deactivation),
    });
  }
  return grouped;
}

export function programView(program: Program, rewards: Map<string, RewardDefinition>): ReferralProgramOut {
  return {
    id: program.id,
    name: program.name,
    description: program.description,
    metadata: program.metadata,
    distribution_percentage: program.distribution_percentage,
    limit: program.limit,
    rewards: {
      sender: entriesByKind(program.rewards.sender, rewards, 'sender'),
      receiver: entriesByKind(program.rewards.receiver, rewards, 'receiver'),
    },
    created_at: program.created_at,
    updated_at: program.updated_at,
  };
}

export function programRewardKeys(program: Program): string[] {
  return [...program.rewards.sender, ...program.rewards.receiver].map((entry) => entry.reward_key);
}
