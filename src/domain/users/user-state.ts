import { isOwnPayment } from '../revenue/own-payment.js';
import type { Evolver } from '../decider.js';
import type { DomainEvent, EventDataOf } from '../events/index.js';
import type { PurchaseRef } from '../events/revenue-events.js';
import { refundsPurchase } from '../revenue/refunds-purchase.js';
import type { ReferredByFact } from '../events/user-events.js';
import { PERSONAL_PROFILE_FIELDS } from '../privacy/personal-fields.js';
import { isActiveAt } from '../rewards/expiry.js';
import { entriesChangedBy, entryAfter, entryOpenedBy, type RewardEntry } from '../rewards/reward-entry.js';

/**
 * A reward entry the user still holds: granted and not yet recorded as expired. Credit grants
 * of one reward with the same `expires_at` share one entry (SPEC §5.3), so a user's entries are
 * bounded by what is live, not by how many grants or withdrawals it has had.
 */
export type HeldEntry = RewardEntry;

/**
 * What decisions about one user need, and nothing more: the profile (to detect changes), the
 * claim facts, the referrer counters and the live reward entries. The history itself (every
 * grant, every withdrawal, every remembered operation_id) lives in the log and the read models;
 * operation ids are looked up through the operations index (src/application/operation-index.ts).
 */
export interface UserState {
  exists: boolean;
  app_user_id: string;
  created_at: string | null;
  is_trial: boolean | null;
  is_premium: boolean | null;
  /** Earliest first_seen_at ever received; null when never sent. */
  first_seen_at: string | null;
  metadata: Record<string, unknown> | null;
  payment_customer_id: string | null;
  /** Erased (SPEC §13) and no personal field received since: a new erasure has nothing to do. */
  erased: boolean;
  program_id: string | null;
  referral_code: string | null;
  referred_by: (ReferredByFact & { claimed_at: string; program_id?: string | null }) | null;
  converted_at: string | null;
  /** Verified revenue (SPEC §11): true while a paid purchase/renewal runs, false after it expired; null: never any. */
  verified_premium: boolean | null;
  /** The latest verified paid purchase or renewal. */
  verified_purchase: PurchaseRef | null;
  /** The verified purchase that converted the user (null when the client's is_premium did). */
  converted_purchase: PurchaseRef | null;
  /**
   * The verified expiry that happened last, of which subscription and when: a purchase
   * or renewal of that subscription from before it that arrives after it (stores do not promise
   * order) is one that has already ended.
   */
  latest_expiry: LatestExpiry | null;
  churned_at: string | null;
  stats: { claims: number; conversions: number; churns: number };
  /** Global position of the last claimer event counted into `stats` (decimal string). */
  last_cause_position: string | null;
  entries: HeldEntry[];
  /** Claims whose slot was released by the claim repair (a crash between the two steps). */
  abandoned_claims: string[];
  /** Referrer: sender rewards waiting for a review (fraud rules, SPEC §13), until it is decided. */
  held_rewards: HeldRewards[];
}

type HeldRewards = EventDataOf<'SenderRewardsHeld'>;

interface LatestExpiry {
  provider: string;
  original_transaction_id: string | null;
  occurred_at: string;
}

export function initialUserState(): UserState {
  return {
    exists: false,
    app_user_id: '',
    created_at: null,
    is_trial: null,
    is_premium: null,
    first_seen_at: null,
    metadata: null,
    payment_customer_id: null,
    erased: false,
    program_id: null,
    referral_code: null,
    referred_by: null,
    converted_at: null,
    verified_premium: null,
    verified_purchase: null,
    converted_purchase: null,
    latest_expiry: null,
    churned_at: null,
    stats: { claims: 0, conversions: 0, churns: 0 },
    last_cause_position: null,
    entries: [],
    abandoned_claims: [],
    held_rewards: [],
  };
}

/**
 * A private working copy of a user state for one fold: the entries, stats and abandoned claims
 * are copied the first time the fold changes them, so folding many events costs one copy of
 * each part, not one per event. The input state is never changed.
 */
class UserDraft {
  readonly state: UserState;
  private readonly owned = new Set<'entries' | 'stats' | 'abandoned_claims'>();

  constructor(state: UserState) {
    this.state = { ...state };
  }

  entries(): HeldEntry[] {
    if (!this.owned.has('entries')) {
      this.state.entries = this.state.entries.slice();
      this.owned.add('entries');
    }
    return this.state.entries;
  }

  /** Applies the event to every entry it changes (src/domain/rewards/reward-entry.ts). */
  changeEntries(event: DomainEvent): void {
    const entries = this.entries();
    for (const entryId of entriesChangedBy(event)) {
      const index = entries.findIndex((entry) => entry.entry_id === entryId);
      if (index >= 0) entries[index] = entryAfter(entries[index]!, event);
    }
  }

  removeEntry(entryId: string): void {
    const entries = this.entries();
    const index = entries.findIndex((entry) => entry.entry_id === entryId);
    if (index >= 0) entries.splice(index, 1);
  }

  stats(): UserState['stats'] {
    if (!this.owned.has('stats')) {
      this.state.stats = { ...this.state.stats };
      this.owned.add('stats');
    }
    return this.state.stats;
  }

  abandonedClaims(): string[] {
    if (!this.owned.has('abandoned_claims')) {
      this.state.abandoned_claims = this.state.abandoned_claims.slice();
      this.owned.add('abandoned_claims');
    }
    return this.state.abandoned_claims;
  }
}

/** Applies one event to the draft: the user stream's meaning for decisions, in one place. */
function applyUserEvent(draft: UserDraft, event: DomainEvent): void {
  const state = draft.state;
  switch (event.type) {
    case 'UserRegistered': {
      const { app_user_id, registered_at, ...profile } = event.data;
      Object.assign(state, profile, { exists: true, app_user_id, created_at: registered_at });
      if (profile.metadata !== null || profile.payment_customer_id !== null) state.erased = false;
      return;
    }
    case 'UserProfileUpdated':
      Object.assign(state, event.data.changes);
      if (event.data.changes.metadata != null || event.data.changes.payment_customer_id != null) state.erased = false;
      return;
    case 'UserErased':
      for (const field of PERSONAL_PROFILE_FIELDS) state[field] = null;
      state.erased = true;
      return;
    case 'ReferralProgramAssigned':
      state.program_id = event.data.program_id;
      state.referral_code = event.data.referral_code;
      return;
    case 'CodeClaimed': {
      const { claimed_at, hold: _hold, ...referredBy } = event.data;
      state.referred_by = { ...referredBy, claimed_at };
      return;
    }
    case 'ClaimAbandoned':
      draft.abandonedClaims().push(event.data.claim_id);
      return;
    case 'UserConverted':
      state.converted_at = event.data.converted_at;
      state.converted_purchase = event.data.purchase;
      return;
    case 'PurchaseRecorded':
    case 'RenewalRecorded':
      if (!event.data.is_trial && !event.data.refunded_before && !event.data.expired_before && isOwnPayment(event.data)) {
        state.verified_premium = true;
        const { provider, notification_id, transaction_id, original_transaction_id } = event.data;
        state.verified_purchase = { provider, notification_id, transaction_id, original_transaction_id };
      }
      return;
    case 'SubscriptionExpired': {
      // The end of access the user did not pay for (a trial, a promotional grant, a family
      // member's share) says nothing of a subscription they pay for.
      if (!event.data.is_trial) state.verified_premium = false;
      const { provider, original_transaction_id, occurred_at } = event.data;
      // The latest by when it happened: an older expiry arriving late does not hide a later one.
      if (state.latest_expiry === null || Date.parse(occurred_at) > Date.parse(state.latest_expiry.occurred_at)) {
        state.latest_expiry = { provider, original_transaction_id, occurred_at };
      }
      return;
    }
    case 'RefundRecorded':
      // The purchase that made the user premium is refunded: it proves nothing any more (a claim
      // made afterwards must not convert on it). Neither premium nor churned until the next fact.
      if (event.data.repeats_refund !== true && refundsPurchase(event.data, state.verified_purchase)) {
        state.verified_premium = null;
        state.verified_purchase = null;
      }
      return;
    case 'RewardRevoked':
      // Clawback (SPEC §11): credits come back from the entries debited; any other kind ends now.
      if (event.data.kind === 'credit') draft.changeEntries(event);
      else draft.removeEntry(event.data.entry_id);
      return;
    case 'UserChurned':
      state.churned_at = event.data.churned_at;
      return;
    case 'RewardGranted': {
      const opened = entryOpenedBy(event.data);
      if (opened) draft.entries().push(opened);
      else draft.changeEntries(event);
      return;
    }
    case 'RewardValueAssigned':
    case 'CreditsWithdrawn':
      draft.changeEntries(event);
      return;
    case 'RewardExpired':
      draft.removeEntry(event.data.grant_id);
      return;
    case 'ReferralClaimCounted':
      draft.stats().claims = event.data.claims;
      state.last_cause_position = event.data.cause_position;
      return;
    case 'ReferralConversionCounted':
      draft.stats().conversions = event.data.conversions;
      state.last_cause_position = event.data.cause_position;
      return;
    case 'ReferralChurnCounted':
      draft.stats().churns = event.data.churns;
      state.last_cause_position = event.data.cause_position;
      return;
    case 'SenderRewardsHeld':
      state.held_rewards = [...state.held_rewards, event.data];
      return;
    case 'HeldRewardsReleased':
      state.held_rewards = state.held_rewards.filter((held) => held.review_id !== event.data.review_id);
      return;
    default:
      return;
  }
}

/** The state after `events`, folded on one private copy (the input is not changed). */
export function foldUserEvents(state: UserState, events: readonly DomainEvent[]): UserState {
  const draft = new UserDraft(state);
  for (const event of events) applyUserEvent(draft, event);
  return draft.state;
}

export function evolveUser(state: UserState, event: DomainEvent): UserState {
  return foldUserEvents(state, [event]);
}

export const userEvolver: Evolver<UserState> = {
  name: 'user',
  // 2: bounded state (live entries only, credit grants merged; no operation map).
  // 3: verified revenue (SPEC §11): verified_premium, verified_purchase, converted_purchase, revocations.
  // 4: held sender rewards (fraud rules, SPEC §13).
  // 5: erasure (SPEC §13): `erased`, personal fields null after UserErased.
  // 6: a refund of the verified purchase clears verified_premium and verified_purchase.
  // 7: latest_expiry (a purchase older than an expiry already recorded has ended).
  // 8: the expiry of unpaid access (is_trial) leaves verified_premium as it is.
  version: 8,
  initialState: initialUserState,
  evolve: evolveUser,
  fold: foldUserEvents,
};

/** Entries that are active at `now` (their expiry may not be recorded yet). */
export function activeEntries(state: UserState, now: Date): HeldEntry[] {
  return state.entries.filter((entry) => isActiveAt(entry.expires_at, now));
}

/**
 * Credits of `key` in entries whose expiry is not recorded yet: the running balance of the
 * credit ledger. Deciders record due expiries first, so it equals the active balance.
 */
export function ledgerBalance(state: UserState, key: string): number {
  return state.entries.filter((entry) => entry.reward_key === key && entry.kind === 'credit').reduce((sum, entry) => sum + (entry.credits ?? 0), 0);
}

/** The moment the claim window closes: CLAIM_WINDOW_DAYS after first_seen_at (or creation). */
export function claimWindowEnd(user: { first_seen_at: string | null; created_at: string | null }, windowDays: number): Date {
  const start = user.first_seen_at ?? user.created_at!;
  return new Date(Date.parse(start) + windowDays * 86_400_000);
}

/** Whether the claim window is still open at `now` (SPEC §3: now < window end); the decider's and the User view's. */
export function claimWindowOpen(user: { first_seen_at: string | null; created_at: string | null }, windowDays: number, now: Date): boolean {
  return now.getTime() < claimWindowEnd(user, windowDays).getTime();
}

/** The credit entries of `key` the user can spend at `now`, in grant order. */
export function spendableCreditEntries(state: UserState, key: string, now: Date): HeldEntry[] {
  return activeEntries(state, now).filter((entry) => entry.reward_key === key && entry.kind === 'credit');
}

/** Credits of `key` the user can spend at `now`. */
export function creditBalance(state: UserState, key: string, now: Date): number {
  return spendableCreditEntries(state, key, now).reduce((sum, entry) => sum + (entry.credits ?? 0), 0);
}
