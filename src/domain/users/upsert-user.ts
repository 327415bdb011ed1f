import type { Decision, NewDomainEvent } from '../decider.js';
import { DomainError } from '../domain-error.js';
import { evolveUser, type UserState } from './user-state.js';
import { type ConversionsFrom, conversionEvents } from './conversion.js';
import { expireDueRewards, type GrantSpec } from '../rewards/grant-and-expire.js';

export interface ProfileFields {
  is_trial: boolean | null;
  is_premium: boolean | null;
  first_seen_at: string | null;
  metadata: Record<string, unknown> | null;
  payment_customer_id: string | null;
}

export interface UpsertUserCommand {
  app_user_id: string;
  /** Only the fields the client sent; an explicit null clears (except first_seen_at). */
  fields: Partial<ProfileFields>;
  now: Date;
  /** Program and referral code to assign when the user has none (decided by bucket). */
  assignment: { program_id: string; referral_code: string } | null;
  /** Receiver rewards with activation "conversion" of the code the user claimed. */
  conversionRewards: GrantSpec[];
  /** CONVERSIONS_FROM (SPEC §11): under `verified` the client's is_premium is stored but counts nothing. */
  conversions?: ConversionsFrom;
}

const FUTURE_TOLERANCE_MS = 5 * 60_000;

/**
 * The earliest first_seen_at ever received. For a user that never sent one the creation time
 * stands in, so a later value cannot extend the claim window.
 */
function keptFirstSeen(current: string | null, createdAt: string, received: string | null | undefined): string | null {
  if (received == null) return current;
  const effective = current ?? createdAt;
  if (Date.parse(received) < Date.parse(effective)) return received;
  return current;
}

export function decideUpsertUser(state: UserState, command: UpsertUserCommand): Decision<{ created: boolean }> {
  const { fields, now } = command;
  if (fields.first_seen_at != null && Date.parse(fields.first_seen_at) > now.getTime() + FUTURE_TOLERANCE_MS) {
    throw new DomainError('USER.FIRST_SEEN_AT_IN_FUTURE', 'first_seen_at is more than 5 minutes in the future', '/first_seen_at');
  }
  const events: NewDomainEvent[] = state.exists ? expireDueRewards(state, now) : [];
  const firstSeenAt = keptFirstSeen(state.first_seen_at, state.created_at ?? now.toISOString(), fields.first_seen_at);
  if (!state.exists) {
    events.push({
      type: 'UserRegistered',
      data: {
        app_user_id: command.app_user_id,
        registered_at: now.toISOString(),
        is_trial: fields.is_trial ?? null,
        is_premium: fields.is_premium ?? null,
        first_seen_at: firstSeenAt,
        metadata: fields.metadata ?? null,
        payment_customer_id: fields.payment_customer_id ?? null,
      },
    });
  } else {
    const changes = changedFields(state, { ...fields, first_seen_at: firstSeenAt });
    if (Object.keys(changes).length > 0) events.push({ type: 'UserProfileUpdated', data: { changes } });
  }
  if (state.program_id === null && command.assignment) {
    events.push({ type: 'ReferralProgramAssigned', data: command.assignment });
  }
  const updated = events.reduce(evolveUser, state);
  events.push(...conversionEvents(updated, command.conversionRewards, now, command.conversions));
  return { events, result: { created: !state.exists } };
}

function changedFields(state: UserState, fields: Partial<ProfileFields>): Partial<ProfileFields> {
  const changes: Partial<ProfileFields> = {};
  for (const key of ['is_trial', 'is_premium', 'first_seen_at', 'metadata', 'payment_customer_id'] as const) {
    const value = fields[key];
    if (value === undefined) continue;
    if (JSON.stringify(value) !== JSON.stringify(state[key])) Object.assign(changes, { [key]: value });
  }
  return changes;
}
