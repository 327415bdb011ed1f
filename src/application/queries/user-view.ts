import { referralLink } from '../../domain/codes/referral-code.js';
import type { Program } from '../../domain/events/config-events.js';
import { isActiveAt } from '../../domain/rewards/expiry.js';
import { type ByKind, emptyByKind } from '../../domain/rewards/reward-kinds.js';
import type { RewardDefinition } from '../../domain/rewards/reward-schemas.js';
import { documentClaimWindowEnd as claimWindowEnd, type GrantState, type UserDocument as UserState } from './legacy-user-document.js';
import { programView, rewardView } from './reward-views.js';

export interface UserViewContext {
  now: Date;
  windowDays: number;
  linkBase: string | null;
  rewards: Map<string, RewardDefinition>;
  program: Program | null;
}

export type RewardEntryView = Record<string, unknown>;

/** An entry as listed under `rewards.active` / `rewards_granted`. */
export function activeEntryView(grant: GrantState, reward: RewardDefinition): RewardEntryView {
  const entry: RewardEntryView = { reward: rewardView(reward), expires_at: grant.expires_at };
  if (grant.kind === 'credit') entry.credits = grant.credits ?? 0;
  if (grant.kind === 'offer_code') entry.value = grant.value && { value: grant.value.value, link: grant.value.link, expires_at: grant.value.expires_at };
  if (grant.kind === 'store_promo_code') entry.value = grant.value && { value: grant.value.value, expires_at: grant.value.expires_at };
  entry.created_at = grant.created_at;
  entry.updated_at = grant.updated_at;
  return entry;
}

function expiredEntryView(grant: GrantState, reward: RewardDefinition): RewardEntryView {
  return { reward: rewardView(reward), expired_at: grant.expires_at, created_at: grant.created_at, updated_at: grant.updated_at };
}

/** Active vs expired is decided here, at read time, from `expires_at` and the clock. */
export function rewardsView(state: UserState, context: UserViewContext) {
  const active = emptyByKind<RewardEntryView>();
  const expired = emptyByKind<RewardEntryView>();
  for (const grant of state.grants) {
    const reward = context.rewards.get(grant.reward_key);
    if (!reward) continue;
    if (!grant.expired && isActiveAt(grant.expires_at, context.now)) active[grant.kind].push(activeEntryView(grant, reward));
    else expired[grant.kind].push(expiredEntryView(grant, reward));
  }
  return { active, expired };
}

/** The given grants in the active-entry shape, grouped by kind (`rewards_granted`). */
export function grantedView(state: UserState, grantIds: readonly string[], rewards: Map<string, RewardDefinition>): ByKind<RewardEntryView> {
  const granted = emptyByKind<RewardEntryView>();
  const wanted = new Set(grantIds);
  for (const grant of state.grants) {
    const reward = rewards.get(grant.reward_key);
    if (wanted.has(grant.grant_id) && reward) granted[grant.kind].push(activeEntryView(grant, reward));
  }
  return granted;
}

/** The seed's User object. */
export function userView(state: UserState, context: UserViewContext): Record<string, unknown> {
  const claimed = state.referred_by !== null;
  const windowEnd = claimWindowEnd(state, context.windowDays);
  return {
    app_user_id: state.app_user_id,
    referral_code: state.referral_code,
    referral_code_link: referralLink(context.linkBase, state.referral_code),
    is_trial: state.is_trial,
    is_premium: state.is_premium,
    first_seen_at: state.first_seen_at ?? state.created_at,
    last_seen_at: null,
    metadata: state.metadata,
    payment_customer_id: state.payment_customer_id,
    claim_code_eligibility: {
      eligible: !claimed && context.now.getTime() < windowEnd.getTime(),
      eligible_until: claimed ? null : windowEnd.toISOString(),
    },
    referred_by: state.referred_by && {
      code: state.referred_by.code,
      type: state.referred_by.type,
      claimed_at: state.referred_by.claimed_at,
    },
    stats: { ...state.stats },
    rewards: rewardsView(state, context),
    referral_program: context.program && programView(context.program, context.rewards),
  };
}
