import type { Doc, Projection } from '../../projections/projection.js';
import type { LoggedEvent } from '../../src/application/event-log.js';
import type { DomainEvent, EventDataOf, EventOf, EventType } from '../../src/domain/events/index.js';
import type { RevenueNotification } from '../../src/domain/revenue/revenue-notification.js';
import type { ClaimTarget } from '../../src/domain/users/claim-code.js';
import type { GrantSpec } from '../../src/domain/rewards/grant-and-expire.js';
import type { RewardKind } from '../../src/domain/rewards/reward-kinds.js';
import type { Deactivation } from '../../src/domain/rewards/reward-schemas.js';

/* ------------------------------------------------------------------ time */

export const SECOND = 1_000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** The fixed "now" of the unit tests; nothing reads the real clock. */
export const T0 = new Date('2026-03-10T12:00:00.000Z');

/** T0 moved by `ms` (negative = earlier). */
export function at(ms: number): Date {
  return new Date(T0.getTime() + ms);
}

export function iso(ms: number): string {
  return at(ms).toISOString();
}

/* ------------------------------------------------------------------ domain events */

/** A typed domain event. */
export function event<T extends EventType>(type: T, data: EventDataOf<T>): EventOf<T> {
  return { type, data } as EventOf<T>;
}

export function registered(appUserId: string, overrides: Partial<EventDataOf<'UserRegistered'>> = {}): EventOf<'UserRegistered'> {
  return event('UserRegistered', {
    app_user_id: appUserId,
    registered_at: T0.toISOString(),
    is_trial: null,
    is_premium: null,
    first_seen_at: null,
    metadata: null,
    payment_customer_id: null,
    ...overrides,
  });
}

export function programAssigned(programId: string, referralCode: string): EventOf<'ReferralProgramAssigned'> {
  return event('ReferralProgramAssigned', { program_id: programId, referral_code: referralCode });
}

export function codeClaimed(overrides: Partial<EventDataOf<'CodeClaimed'>> = {}): EventOf<'CodeClaimed'> {
  return event('CodeClaimed', {
    claim_id: 'claim-1',
    code: 'REF123',
    type: 'referral',
    owner_id: 'referrer',
    program_id: 'prog',
    claimed_at: T0.toISOString(),
    ...overrides,
  });
}

export function rewardGranted(overrides: Partial<EventDataOf<'RewardGranted'>> & { grant_id: string }): EventOf<'RewardGranted'> {
  const kind = overrides.kind ?? 'credit';
  return event('RewardGranted', {
    entry_id: overrides.grant_id,
    reward_key: 'coins',
    kind,
    credits: kind === 'credit' ? 10 : null,
    granted_at: T0.toISOString(),
    expires_at: null,
    cause: { type: 'manual', operation_id: null },
    clawback: 'none',
    balance_after: kind === 'credit' ? 10 : null,
    ...overrides,
  });
}

/** A withdrawal of `key` coins taking these debits, from a balance of 100. */
export function creditsWithdrawn(debits: { grant_id: string; credits: number }[], at: string): EventOf<'CreditsWithdrawn'> {
  const total = debits.reduce((sum, debit) => sum + debit.credits, 0);
  return event('CreditsWithdrawn', {
    operation_id: null,
    key: 'coins',
    withdrawn_at: at,
    credits_requested_to_withdraw: total,
    credits_withdrawn: total,
    credits_available_at_start: 100,
    credits_available_at_end: 100 - total,
    debits,
  });
}

/** A non-credit grant taken back by a refund's clawback (SPEC §11): the entry ends at once. */
export function rewardRevoked(
  overrides: Partial<EventDataOf<'RewardRevoked'>> & { grant_id: string; kind: EventDataOf<'RewardRevoked'>['kind'] },
): EventOf<'RewardRevoked'> {
  return event('RewardRevoked', {
    entry_id: overrides.grant_id,
    reward_key: 'coins',
    revoked_at: T0.toISOString(),
    credits_granted: null,
    debits: [],
    shortfall: null,
    balance_after: null,
    claimer: 'claimer',
    refund: { provider: 'stripe', notification_id: `evt_${overrides.grant_id}`, transaction_id: null, original_transaction_id: null },
    ...overrides,
  });
}

/* ------------------------------------------------------------------ reward specs */

export const NEVER: Deactivation = { variant: 'never' };

export function interval(duration: number, period: 'days' | 'months' | 'years'): Deactivation {
  return { variant: 'interval', duration, period };
}

/** What a decider is told to grant: a reward (key, kind, credits) for a deactivation. */
export function spec(key: string, kind: RewardKind, options: { credits?: number; deactivation?: Deactivation } = {}): GrantSpec {
  const credits = options.credits ?? (kind === 'credit' ? 10 : undefined);
  return {
    reward: credits === undefined ? { key, kind } : { key, kind, credits },
    deactivation: options.deactivation ?? NEVER,
  };
}

/* ------------------------------------------------------------------ logged events */

export interface LoggedOptions {
  id?: string;
  revision?: number;
  position?: bigint;
  recordedAt?: Date;
  metadata?: Record<string, unknown>;
}

/** One recorded event as projections see it. */
export function logged(stream: string, domainEvent: DomainEvent, options: LoggedOptions = {}): LoggedEvent {
  const position = options.position ?? 1n;
  return {
    ...domainEvent,
    id: options.id ?? `event-${position}`,
    stream,
    revision: options.revision ?? 0,
    position,
    metadata: {
      correlation_id: 'request-1',
      causation_id: 'request-1',
      actor: 'process:test',
      schema_version: 1,
      ...options.metadata,
    },
    recordedAt: options.recordedAt ?? T0,
  } as LoggedEvent;
}

/**
 * A global log in commit order: global positions count up from 1, revisions per stream from 0,
 * and each event is recorded one second after the previous one.
 */
export class TestLog {
  readonly events: LoggedEvent[] = [];
  private readonly revisions = new Map<string, number>();

  append(stream: string, ...domainEvents: DomainEvent[]): LoggedEvent[] {
    return domainEvents.map((domainEvent) => {
      const revision = (this.revisions.get(stream) ?? -1) + 1;
      this.revisions.set(stream, revision);
      const position = BigInt(this.events.length + 1);
      const recorded = logged(stream, domainEvent, { revision, position, recordedAt: at(this.events.length * SECOND) });
      this.events.push(recorded);
      return recorded;
    });
  }
}

/* ------------------------------------------------------------------ projection fold */

/** Documents by `collection/id` after folding `events` through `projection` the way the runner does. */
export function project(projection: Projection, events: LoggedEvent[], start: Map<string, Doc> = new Map()): Map<string, Doc> {
  const docs = new Map(start);
  for (const recorded of events) {
    if (!projection.eventTypes.includes(recorded.type)) continue;
    for (const ref of projection.targets(recorded)) {
      const key = `${ref.collection}/${ref.id}`;
      const next = projection.evolve(ref, docs.get(key) ?? null, recorded);
      if (next === null) docs.delete(key);
      else docs.set(key, next);
    }
  }
  return docs;
}

/** The documents of `project` as a plain object (for deep equality). */
export function projected(projection: Projection, events: LoggedEvent[]): Record<string, Doc> {
  return Object.fromEntries(project(projection, events));
}

/** A verified notification as the service normalises it (SPEC §11): by default a Stripe first invoice of 9.99 EUR at T0. */
export function revenueNotification(overrides: Partial<RevenueNotification> = {}): RevenueNotification {
  return {
    provider: 'stripe',
    notification_id: 'evt_1',
    provider_type: 'invoice.paid',
    kind: 'purchase',
    occurred_at: T0.toISOString(),
    transaction_id: 'in_1',
    original_transaction_id: 'sub_1',
    product_id: null,
    price_minor: 999,
    currency: 'EUR',
    period_start: null,
    period_end: null,
    is_trial: false,
    match: { app_user_ids: [], account_token: null, customer_id: 'cus_1', linked_transaction: null },
    ...overrides,
  };
}

/** Bob's referral code BOB234 in program `prog`, active, as a claim finds it. */
export function claimTarget(overrides: Partial<ClaimTarget> = {}): ClaimTarget {
  return {
    code: 'BOB234',
    type: 'referral',
    owner_id: 'bob',
    program_id: 'prog',
    owner_app_user_id: 'bob',
    is_active: true,
    claimRewards: [],
    conversionRewards: [],
    ...overrides,
  };
}
