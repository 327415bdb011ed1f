import type { RewardEntryDoc, UserDoc } from '../../../projections/users.js';
import type { OpenedProfile } from '../privacy/personal-read-models.js';
import { referralLink } from '../../domain/codes/referral-code.js';
import { claimWindowEnd, claimWindowOpen } from '../../domain/users/user-state.js';
import type { Program } from '../../domain/events/config-events.js';
import type { GrantedFact } from '../../domain/events/user-events.js';
import { isActiveAt } from '../../domain/rewards/expiry.js';
import { type ByKind, emptyByKind, POOLED_KINDS } from '../../domain/rewards/reward-kinds.js';
import type { RewardDefinition } from '../../domain/rewards/reward-schemas.js';
import type { ActiveEntryOut, ExpiredEntryOut } from '../../http/schemas/rewards.js';
import type { UserOut } from '../../http/schemas/users.js';
import { programView, rewardView } from './reward-views.js';

/** SPEC §5.3: `rewards.expired` lists per kind at most this many, the most recently expired. */
export const EXPIRED_PER_KIND = 100;

export interface UserViewContext {
  now: Date;
  windowDays: number;
  linkBase: string | null;
  rewards: Map<string, RewardDefinition>;
  program: Program | null;
}

export type RewardEntryView = ActiveEntryOut;

/** What the active-entry shape shows of an entry or of a grant. */
interface ActiveEntryFields {
  kind: RewardEntryDoc['kind'];
  credits: number | null;
  value: RewardEntryDoc['value'];
  expires_at: string | null;
  created_at: string;
  updated_at: string | null;
}

/** An entry as listed under `rewards.active` / `rewards_granted`. */
function activeEntryView(entry: ActiveEntryFields, reward: RewardDefinition): RewardEntryView {
  return {
    reward: rewardView(reward),
    expires_at: entry.expires_at,
    ...(entry.kind === 'credit' ? { credits: entry.credits ?? 0 } : {}),
    ...(entry.kind === 'offer_code' ? { value: entry.value && { value: entry.value.value, link: entry.value.link, expires_at: entry.value.expires_at } } : {}),
    ...(entry.kind === 'store_promo_code' ? { value: entry.value && { value: entry.value.value, expires_at: entry.value.expires_at } } : {}),
    created_at: entry.created_at,
    updated_at: entry.updated_at,
  };
}

function expiredEntryView(entry: RewardEntryDoc, reward: RewardDefinition): ExpiredEntryOut {
  return { reward: rewardView(reward), expired_at: entry.expires_at, created_at: entry.created_at, updated_at: entry.updated_at };
}

function bySeq(a: RewardEntryDoc, b: RewardEntryDoc): number {
  return a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0;
}

/**
 * Active vs expired is decided here, at read time, from `expires_at` and the clock. `live` are
 * the entries without a recorded expiry; `recordedExpired` the most recently expired recorded
 * ones (up to EXPIRED_PER_KIND per kind). Each list is shown in grant order.
 */
function rewardsView(live: readonly RewardEntryDoc[], recordedExpired: readonly RewardEntryDoc[], context: UserViewContext) {
  const active = emptyByKind<RewardEntryView>();
  const expired = emptyByKind<RewardEntryDoc>();
  for (const entry of [...live].sort(bySeq)) {
    if (isActiveAt(entry.expires_at, context.now)) {
      const reward = context.rewards.get(entry.reward_key);
      if (reward) active[entry.kind].push(activeEntryView(entry, reward));
    } else {
      expired[entry.kind].push(entry);
    }
  }
  for (const entry of recordedExpired) expired[entry.kind].push(entry);
  const expiredViews = emptyByKind<ExpiredEntryOut>();
  for (const [kind, entries] of Object.entries(expired) as [keyof ByKind<unknown>, RewardEntryDoc[]][]) {
    const recent = entries
      .sort((a, b) => (a.expires_at ?? '').localeCompare(b.expires_at ?? '') || bySeq(a, b))
      .slice(-EXPIRED_PER_KIND)
      .sort(bySeq);
    for (const entry of recent) {
      const reward = context.rewards.get(entry.reward_key);
      if (reward) expiredViews[kind].push(expiredEntryView(entry, reward));
    }
  }
  return { active, expired: expiredViews };
}

/**
 * `rewards_granted`: each grant as granted (SPEC §5.3) — its own credits, expires_at and
 * created_at — grouped by kind; pooled kinds show the entry's current value (and when it came).
 */
export function grantedView(
  granted: readonly GrantedFact[],
  entries: Map<string, RewardEntryDoc>,
  rewards: Map<string, RewardDefinition>,
): ByKind<RewardEntryView> {
  const view = emptyByKind<RewardEntryView>();
  for (const grant of granted) {
    const reward = rewards.get(grant.reward_key);
    if (!reward) continue;
    const entry = POOLED_KINDS.includes(grant.kind) ? entries.get(grant.entry_id) : undefined;
    view[grant.kind].push(
      activeEntryView(
        {
          kind: grant.kind,
          credits: grant.credits,
          value: entry?.value ?? null,
          expires_at: grant.expires_at,
          created_at: grant.granted_at,
          updated_at: entry?.updated_at ?? null,
        },
        reward,
      ),
    );
  }
  return view;
}

/** The seed's User object. */
export function userView(
  user: UserDoc,
  profile: OpenedProfile,
  live: readonly RewardEntryDoc[],
  recordedExpired: readonly RewardEntryDoc[],
  context: UserViewContext,
): UserOut {
  const claimed = user.referred_by !== null;
  const windowEnd = claimWindowEnd(user, context.windowDays);
  return {
    app_user_id: user.app_user_id,
    referral_code: user.referral_code,
    referral_code_link: referralLink(context.linkBase, user.referral_code),
    is_trial: user.is_trial,
    is_premium: user.is_premium,
    first_seen_at: user.first_seen_at ?? user.created_at,
    last_seen_at: null,
    metadata: profile.metadata,
    payment_customer_id: profile.payment_customer_id,
    claim_code_eligibility: {
      eligible: !claimed && claimWindowOpen(user, context.windowDays, context.now),
      eligible_until: claimed ? null : windowEnd.toISOString(),
    },
    referred_by: user.referred_by && {
      code: user.referred_by.code,
      type: user.referred_by.type,
      claimed_at: user.referred_by.claimed_at,
    },
    stats: { claims: user.stats.claims, conversions: user.stats.conversions, churns: user.stats.churns },
    rewards: rewardsView(live, recordedExpired, context),
    referral_program: context.program && programView(context.program, context.rewards),
  };
}
