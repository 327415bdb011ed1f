/**
 * TRANSITIONAL: the users read model's document, folded from the user stream as the write side
 * folded it before its state became bounded (issue #10). The read-model redesign replaces it.
 */
import type { DomainEvent } from '../../domain/events/index.js';
import type { PooledValue, ReferredByFact } from '../../domain/events/user-events.js';
import type { RewardKind } from '../../domain/rewards/reward-kinds.js';
import { isActiveAt } from '../../domain/rewards/expiry.js';

export interface GrantState {
  grant_id: string;
  reward_key: string;
  kind: RewardKind;
  /** Credits left in a credit entry (null for other kinds). */
  credits: number | null;
  value: PooledValue | null;
  expires_at: string | null;
  created_at: string;
  updated_at: string | null;
  /** An expiry has been recorded as an event. */
  expired: boolean;
}

export interface OperationRecord {
  kind: 'withdraw' | 'grant';
  key: string;
  amount: number | null;
  result: Record<string, unknown>;
}

export interface UserDocument {
  exists: boolean;
  app_user_id: string;
  created_at: string | null;
  is_trial: boolean | null;
  is_premium: boolean | null;
  /** Earliest first_seen_at ever received; null when never sent. */
  first_seen_at: string | null;
  metadata: Record<string, unknown> | null;
  payment_customer_id: string | null;
  program_id: string | null;
  referral_code: string | null;
  referred_by: (ReferredByFact & { claimed_at: string }) | null;
  converted_at: string | null;
  churned_at: string | null;
  stats: { claims: number; conversions: number; churns: number };
  /** Global position of the last claimer event counted into `stats` (decimal string). */
  last_cause_position: string | null;
  grants: GrantState[];
  operations: Record<string, OperationRecord>;
  abandoned_claims: string[];
}

export function initialUserDocument(): UserDocument {
  return {
    exists: false,
    app_user_id: '',
    created_at: null,
    is_trial: null,
    is_premium: null,
    first_seen_at: null,
    metadata: null,
    payment_customer_id: null,
    program_id: null,
    referral_code: null,
    referred_by: null,
    converted_at: null,
    churned_at: null,
    stats: { claims: 0, conversions: 0, churns: 0 },
    last_cause_position: null,
    grants: [],
    operations: {},
    abandoned_claims: [],
  };
}

/**
 * A private working copy of a user state for one fold: nested parts (grants, operations,
 * stats, abandoned claims) are copied the first time the fold changes them, so folding many
 * events costs one copy of each part, not one per event. The input state is never changed.
 */
class UserDraft {
  readonly state: UserDocument;
  private readonly owned = new Set<'grants' | 'operations' | 'stats' | 'abandoned_claims'>();

  constructor(state: UserDocument) {
    this.state = { ...state };
  }

  grants(): GrantState[] {
    if (!this.owned.has('grants')) {
      this.state.grants = this.state.grants.slice();
      this.owned.add('grants');
    }
    return this.state.grants;
  }

  updateGrant(grantId: string, change: (grant: GrantState) => GrantState): void {
    const grants = this.grants();
    const index = grants.findIndex((grant) => grant.grant_id === grantId);
    if (index >= 0) grants[index] = change(grants[index]!);
  }

  operations(): Record<string, OperationRecord> {
    if (!this.owned.has('operations')) {
      this.state.operations = { ...this.state.operations };
      this.owned.add('operations');
    }
    return this.state.operations;
  }

  stats(): UserDocument['stats'] {
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

/** Applies one event to the draft: the user stream's whole meaning, in one place. */
function applyUserEvent(draft: UserDraft, event: DomainEvent): void {
  const state = draft.state;
  switch (event.type) {
    case 'UserRegistered': {
      const { app_user_id, registered_at, ...profile } = event.data;
      Object.assign(state, profile, { exists: true, app_user_id, created_at: registered_at });
      return;
    }
    case 'UserProfileUpdated':
      Object.assign(state, event.data.changes);
      return;
    case 'ReferralProgramAssigned':
      state.program_id = event.data.program_id;
      state.referral_code = event.data.referral_code;
      return;
    case 'CodeClaimed': {
      const { claimed_at, program_id: _program, ...referredBy } = event.data;
      state.referred_by = { ...referredBy, claimed_at };
      return;
    }
    case 'ClaimAbandoned':
      draft.abandonedClaims().push(event.data.claim_id);
      return;
    case 'UserConverted':
      state.converted_at = event.data.converted_at;
      return;
    case 'UserChurned':
      state.churned_at = event.data.churned_at;
      return;
    case 'RewardGranted': {
      const data = event.data;
      if (data.entry_id !== data.grant_id) {
        // SPEC §5.3: a credit grant adding to an entry of the same reward and expiry.
        draft.updateGrant(data.entry_id, (grant) => ({ ...grant, credits: (grant.credits ?? 0) + (data.credits ?? 0), updated_at: data.granted_at }));
        return;
      }
      draft.grants().push({
        grant_id: data.grant_id,
        reward_key: data.reward_key,
        kind: data.kind,
        credits: data.credits,
        value: null,
        expires_at: data.expires_at,
        created_at: data.granted_at,
        updated_at: null,
        expired: false,
      });
      if (data.cause.type === 'manual' && data.cause.operation_id !== null) {
        draft.operations()[data.cause.operation_id] = { kind: 'grant', key: data.reward_key, amount: null, result: { created: true, granted: [data] } };
      }
      return;
    }
    case 'RewardGrantSkipped':
      draft.operations()[event.data.operation_id] = { kind: 'grant', key: event.data.reward_key, amount: null, result: { created: false, granted: [] } };
      return;
    case 'RewardValueAssigned':
      draft.updateGrant(event.data.grant_id, (grant) => ({ ...grant, value: event.data.value, updated_at: event.data.assigned_at }));
      return;
    case 'RewardExpired':
      draft.updateGrant(event.data.grant_id, (grant) => ({ ...grant, expired: true }));
      return;
    case 'CreditsWithdrawn': {
      const data = event.data;
      for (const debit of data.debits) {
        draft.updateGrant(debit.grant_id, (grant) => ({ ...grant, credits: (grant.credits ?? 0) - debit.credits, updated_at: data.withdrawn_at }));
      }
      if (data.operation_id !== null) {
        draft.operations()[data.operation_id] = { kind: 'withdraw', key: data.key, amount: data.credits_requested_to_withdraw, result: withdrawResultOf(data) };
      }
      return;
    }
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
    default:
      return;
  }
}

/** The state after `events`, folded on one private copy (the input is not changed). */
export function foldUserDocument(state: UserDocument, events: readonly DomainEvent[]): UserDocument {
  const draft = new UserDraft(state);
  for (const event of events) applyUserEvent(draft, event);
  return draft.state;
}

export function evolveUserDocument(state: UserDocument, event: DomainEvent): UserDocument {
  return foldUserDocument(state, [event]);
}

export function withdrawResultOf(data: {
  credits_available_at_start: number;
  credits_available_at_end: number;
  credits_requested_to_withdraw: number;
  credits_withdrawn: number;
}) {
  return {
    credits_available_at_start: data.credits_available_at_start,
    credits_available_at_end: data.credits_available_at_end,
    credits_requested_to_withdraw: data.credits_requested_to_withdraw,
    credits_withdrawn: data.credits_withdrawn,
  };
}


/** Grants that are active at `now` (not expired by time, not recorded as expired). */
export function activeGrants(state: UserDocument, now: Date): GrantState[] {
  return state.grants.filter((grant) => !grant.expired && isActiveAt(grant.expires_at, now));
}

export function creditBalance(state: UserDocument, key: string, now: Date): number {
  return activeGrants(state, now)
    .filter((grant) => grant.reward_key === key && grant.kind === 'credit')
    .reduce((sum, grant) => sum + (grant.credits ?? 0), 0);
}

/** The moment the claim window closes: CLAIM_WINDOW_DAYS after first_seen_at (or creation). */
export function documentClaimWindowEnd(state: UserDocument, windowDays: number): Date {
  const start = state.first_seen_at ?? state.created_at!;
  return new Date(Date.parse(start) + windowDays * 86_400_000);
}
