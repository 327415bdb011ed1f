import type { CodeType } from '../src/domain/events/code-events.js';
import type { LoggedEvent } from '../src/application/event-log.js';
import type { EventType } from '../src/domain/events/index.js';
import type { RewardKind } from '../src/domain/rewards/reward-kinds.js';
import { type Doc, type DocumentRef, type Projection, sortablePosition } from './projection.js';
import { appUserIdOf } from '../src/domain/events/index.js';
import { PERSONAL_PROFILE_FIELDS, type Stored, storedValue } from '../src/domain/privacy/personal-fields.js';
import { entriesChangedBy, entryAfter, entryOpenedBy, type RewardEntry } from '../src/domain/rewards/reward-entry.js';

export const USERS = 'users';
export const USER_REWARDS = 'user_rewards';

/**
 * One small document per user: profile, program, referral code, the claim and its
 * conversion/churn, referrer stats. Its size does not grow with the user's history: reward
 * entries live in USER_REWARDS, one row each.
 */
export interface UserDoc {
  [key: string]: unknown;
  exists: boolean;
  app_user_id: string;
  created_at: string | null;
  is_trial: boolean | null;
  is_premium: boolean | null;
  /** Earliest first_seen_at ever received; null when never sent. */
  first_seen_at: string | null;
  /** Personal fields, sealed as the log holds them (readers open them: src/application/privacy/personal-read-models.ts). */
  metadata: Stored<Record<string, unknown>> | null;
  payment_customer_id: Stored<string> | null;
  program_id: string | null;
  referral_code: string | null;
  referred_by: { claim_id: string; code: string; type: CodeType; owner_id: string; claimed_at: string } | null;
  converted_at: string | null;
  churned_at: string | null;
  stats: { claims: number; conversions: number; churns: number };
  /** Kinds that have at least one entry with a recorded expiry (the view queries only these). */
  expired_kinds: RewardKind[];
}

/**
 * One reward entry (SPEC §5.3; its fields and how events change them:
 * src/domain/rewards/reward-entry.ts), with its user, its place in grant order and its
 * recorded expiry. Active or expired is decided at read time from `expires_at` and the clock;
 * `expired` says the expiry has been recorded (RewardExpired), which moves it to the bounded
 * "recently expired" query.
 */
export interface RewardEntryDoc extends RewardEntry {
  [key: string]: unknown;
  app_user_id: string;
  expired: boolean;
  /** Log position of the first grant, zero-padded: the entries' grant order. */
  seq: string;
}

/** A user document before its first event (the users projection folds from it). */
export function initialUserDoc(appUserId: string): UserDoc {
  return {
    exists: false,
    app_user_id: appUserId,
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
    expired_kinds: [],
  };
}

/** Id of an entry row: unambiguous for any app_user_id and entry id. */
export function rewardEntryId(appUserId: string, entryId: string): string {
  return JSON.stringify([appUserId, entryId]);
}

const USER_EVENTS: readonly EventType[] = [
  'UserRegistered',
  'UserProfileUpdated',
  'ReferralProgramAssigned',
  'CodeClaimed',
  'UserConverted',
  'UserChurned',
  'ReferralClaimCounted',
  'ReferralConversionCounted',
  'ReferralChurnCounted',
  'UserErased',
];

const ENTRY_EVENTS: readonly EventType[] = ['RewardGranted', 'RewardValueAssigned', 'RewardExpired', 'CreditsWithdrawn', 'RewardRevoked'];

function userOf(event: LoggedEvent): string {
  return appUserIdOf(event.stream)!;
}

/** The documents one event changes: never more than the event itself names. */
function targets(event: LoggedEvent): DocumentRef[] {
  const appUserId = appUserIdOf(event.stream);
  if (appUserId === null) return [];
  const entry = (entryId: string): DocumentRef => ({ collection: USER_REWARDS, id: rewardEntryId(appUserId, entryId) });
  switch (event.type) {
    case 'RewardGranted':
      return [entry(event.data.entry_id)];
    case 'RewardExpired':
      return [entry(event.data.grant_id), { collection: USERS, id: appUserId }];
    case 'RewardRevoked':
      // Clawback (SPEC §11): credits come back from the entries debited; any other kind ends now.
      if (event.data.kind !== 'credit') return [entry(event.data.entry_id), { collection: USERS, id: appUserId }];
      return entriesChangedBy(event).map(entry);
    case 'RewardValueAssigned':
    case 'CreditsWithdrawn':
      return entriesChangedBy(event).map(entry);
    default:
      return USER_EVENTS.includes(event.type) ? [{ collection: USERS, id: appUserId }] : [];
  }
}

function evolveUserDoc(current: UserDoc | null, event: LoggedEvent): UserDoc {
  // One private copy per event, changed in place: the input document is never modified.
  const doc: UserDoc = current === null ? initialUserDoc(userOf(event)) : { ...current };
  switch (event.type) {
    case 'UserRegistered': {
      const data = event.data;
      doc.exists = true;
      doc.app_user_id = data.app_user_id;
      doc.created_at = data.registered_at;
      doc.is_trial = data.is_trial;
      doc.is_premium = data.is_premium;
      doc.first_seen_at = data.first_seen_at;
      doc.metadata = storedValue(event, 'metadata', data.metadata);
      doc.payment_customer_id = storedValue(event, 'payment_customer_id', data.payment_customer_id);
      return doc;
    }
    case 'UserProfileUpdated': {
      const { changes } = event.data;
      Object.assign(doc, changes);
      if (changes.metadata !== undefined) doc.metadata = storedValue(event, 'changes.metadata', changes.metadata);
      if (changes.payment_customer_id !== undefined) doc.payment_customer_id = storedValue(event, 'changes.payment_customer_id', changes.payment_customer_id);
      return doc;
    }
    case 'UserErased':
      for (const field of PERSONAL_PROFILE_FIELDS) doc[field] = null;
      return doc;
    case 'ReferralProgramAssigned':
      doc.program_id = event.data.program_id;
      doc.referral_code = event.data.referral_code;
      return doc;
    case 'CodeClaimed': {
      const { claim_id, code, type, owner_id, claimed_at } = event.data;
      doc.referred_by = { claim_id, code, type, owner_id, claimed_at };
      return doc;
    }
    case 'UserConverted':
      doc.converted_at = event.data.converted_at;
      return doc;
    case 'UserChurned':
      doc.churned_at = event.data.churned_at;
      return doc;
    case 'ReferralClaimCounted':
      doc.stats = { ...doc.stats, claims: event.data.claims };
      return doc;
    case 'ReferralConversionCounted':
      doc.stats = { ...doc.stats, conversions: event.data.conversions };
      return doc;
    case 'ReferralChurnCounted':
      doc.stats = { ...doc.stats, churns: event.data.churns };
      return doc;
    case 'RewardExpired':
    case 'RewardRevoked':
      if (!doc.expired_kinds.includes(event.data.kind)) doc.expired_kinds = [...doc.expired_kinds, event.data.kind];
      return doc;
    default:
      return doc;
  }
}

function evolveEntry(current: RewardEntryDoc | null, event: LoggedEvent): RewardEntryDoc | null {
  switch (event.type) {
    case 'RewardGranted': {
      const opened = entryOpenedBy(event.data);
      if (opened === null) return current && entryAfter(current, event);
      return { app_user_id: userOf(event), ...opened, expired: false, seq: sortablePosition(event.position) };
    }
    case 'RewardExpired':
      return current && { ...current, expired: true };
    case 'RewardRevoked':
      if (!current) return null;
      if (event.data.kind !== 'credit') return { ...current, expired: true, expires_at: event.data.revoked_at, updated_at: event.data.revoked_at };
      return entryAfter(current, event);
    default:
      return current && entryAfter(current, event);
  }
}

/**
 * Users and their reward entries. Applying one event reads and writes only the documents it
 * names — the user document, or the entries it opens, adds to, drains, fills or expires — so
 * its cost does not depend on how long the user's history is.
 */
export const usersProjection: Projection = {
  name: 'users',
  // 3: personal fields kept sealed (2026-11-26).
  version: 3,
  collections: [
    { name: USERS, indexes: ['referral_code'] },
    {
      name: USER_REWARDS,
      indexes: [
        // Live entries of a user, in grant order.
        ['app_user_id', 'expired', 'seq'],
        // The most recently expired entries of a user, per kind.
        ['app_user_id', 'expired', 'kind', 'expires_at'],
      ],
    },
  ],
  eventTypes: [...USER_EVENTS, ...ENTRY_EVENTS],
  targets,
  evolve: (ref, doc, event) =>
    ref.collection === USERS ? evolveUserDoc(doc as UserDoc | null, event) : (evolveEntry(doc as RewardEntryDoc | null, event) as Doc | null),
};
