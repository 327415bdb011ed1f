import type { Evolver } from '../decider.js';
import type { DomainEvent } from '../events/index.js';
import type { PooledValue, ReferredByFact } from '../events/user-events.js';
import type { RewardKind } from '../rewards/reward-kinds.js';
import { isActiveAt } from '../rewards/expiry.js';

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

function updateGrant(state: UserState, grantId: string, change: (grant: GrantState) => GrantState): UserState {
  return { ...state, grants: state.grants.map((grant) => (grant.grant_id === grantId ? change(grant) : grant)) };
}

export function evolveUser(state: UserState, event: DomainEvent): UserState {
  switch (event.type) {
    case 'UserRegistered': {
      const { app_user_id, registered_at, ...profile } = event.data;
      return { ...state, ...profile, exists: true, app_user_id, created_at: registered_at };
    }
    case 'UserProfileUpdated':
      return { ...state, ...event.data.changes };
    case 'ReferralProgramAssigned':
      return { ...state, program_id: event.data.program_id, referral_code: event.data.referral_code };
    case 'CodeClaimed': {
      const { claimed_at, program_id: _program, ...referredBy } = event.data;
      return { ...state, referred_by: { ...referredBy, claimed_at } };
    }
    case 'ClaimAbandoned':
      return { ...state, abandoned_claims: [...state.abandoned_claims, event.data.claim_id] };
    case 'UserConverted':
      return { ...state, converted_at: event.data.converted_at };
    case 'UserChurned':
      return { ...state, churned_at: event.data.churned_at };
    case 'RewardGranted': {
      const data = event.data;
      const grant: GrantState = {
        grant_id: data.grant_id,
        reward_key: data.reward_key,
        kind: data.kind,
        credits: data.credits,
        value: null,
        expires_at: data.expires_at,
        created_at: data.granted_at,
        updated_at: null,
        expired: false,
      };
      const operations =
        data.cause.type === 'manual' && data.cause.operation_id !== null
          ? {
              ...state.operations,
              [data.cause.operation_id]: { kind: 'grant' as const, key: data.reward_key, amount: null, result: { created: true, granted: [data.grant_id] } },
            }
          : state.operations;
      return { ...state, grants: [...state.grants, grant], operations };
    }
    case 'RewardGrantSkipped':
      return {
        ...state,
        operations: {
          ...state.operations,
          [event.data.operation_id]: { kind: 'grant', key: event.data.reward_key, amount: null, result: { created: false, granted: [] } },
        },
      };
    case 'RewardValueAssigned':
      return updateGrant(state, event.data.grant_id, (grant) => ({
        ...grant,
        value: event.data.value,
        updated_at: event.data.assigned_at,
      }));
    case 'RewardExpired':
      return updateGrant(state, event.data.grant_id, (grant) => ({ ...grant, expired: true }));
    case 'CreditsWithdrawn': {
      const data = event.data;
      const debits = new Map(data.debits.map((debit) => [debit.grant_id, debit.credits]));
      const grants = state.grants.map((grant) => {
        const debit = debits.get(grant.grant_id);
        return debit === undefined
          ? grant
          : { ...grant, credits: (grant.credits ?? 0) - debit, updated_at: data.withdrawn_at };
      });
      const operations =
        data.operation_id === null
          ? state.operations
          : {
              ...state.operations,
              [data.operation_id]: {
                kind: 'withdraw' as const,
                key: data.key,
                amount: data.credits_requested_to_withdraw,
                result: withdrawResultOf(data),
              },
            };
      return { ...state, grants, operations };
    }
    case 'ReferralClaimCounted':
      return { ...state, stats: { ...state.stats, claims: event.data.claims }, last_cause_position: event.data.cause_position };
    case 'ReferralConversionCounted':
      return {
        ...state,
        stats: { ...state.stats, conversions: event.data.conversions },
        last_cause_position: event.data.cause_position,
      };
    case 'ReferralChurnCounted':
      return { ...state, stats: { ...state.stats, churns: event.data.churns }, last_cause_position: event.data.cause_position };
    default:
      return state;
  }
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

export const userEvolver: Evolver<UserState> = {
  name: 'user',
  version: 1,
  initialState: initialUserState,
  evolve: evolveUser,
};

/** Grants that are active at `now` (not expired by time, not recorded as expired). */
export function activeGrants(state: UserState, now: Date): GrantState[] {
  return state.grants.filter((grant) => !grant.expired && isActiveAt(grant.expires_at, now));
}

export function creditBalance(state: UserState, key: string, now: Date): number {
  return activeGrants(state, now)
    .filter((grant) => grant.reward_key === key && grant.kind === 'credit')
    .reduce((sum, grant) => sum + (grant.credits ?? 0), 0);
}

/** The moment the claim window closes: CLAIM_WINDOW_DAYS after first_seen_at (or creation). */
export function claimWindowEnd(state: UserState, windowDays: number): Date {
  const start = state.first_seen_at ?? state.created_at!;
  return new Date(Date.parse(start) + windowDays * 86_400_000);
}
