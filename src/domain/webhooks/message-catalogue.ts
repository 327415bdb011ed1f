import { type DomainEvent, streams } from '../events/index.js';

/**
 * The outgoing message catalogue (v1): which domain events become which webhook messages.
 * The one home of this mapping; the README documents it. Shapes are stable: a field may be
 * added, never renamed or removed (a breaking change gets a new type name).
 */
export const MESSAGE_TYPES = [
  'user.created',
  'code.claimed',
  'referral.counted',
  'reward.granted',
  'reward.expired',
  'reward.revoked',
  'credits.withdrawn',
  'conversion.recorded',
  'user.erased',
] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];

/** The event's identity in the log, added to every message's `data`. */
export interface EventIdentity {
  id: string;
  stream: string;
  position: bigint;
  recordedAt: Date;
}

export interface WebhookMessage {
  type: MessageType;
  timestamp: string;
  data: Record<string, unknown> & { app_user_id: string; event_id: string; position: string };
}

/** The events that become messages: the one place an event type is mapped to its message. */
const MESSAGE_OF = {
  UserRegistered: { type: 'user.created', fields: (data) => data },
  CodeClaimed: { type: 'code.claimed', fields: (data) => data },
  ReferralClaimCounted: { type: 'referral.counted', fields: (data) => ({ variant: 'claim', ...data }) },
  ReferralConversionCounted: { type: 'referral.counted', fields: (data) => ({ variant: 'conversion', ...data }) },
  RewardGranted: { type: 'reward.granted', fields: (data) => data },
  RewardExpired: { type: 'reward.expired', fields: (data) => data },
  RewardRevoked: { type: 'reward.revoked', fields: (data) => data },
  CreditsWithdrawn: { type: 'credits.withdrawn', fields: (data) => data },
  UserConverted: { type: 'conversion.recorded', fields: (data) => data },
  // Receivers hold copies of what user.created sent (SPEC §13): told to erase theirs. The ids of
  // the events erased are the log's business, and can be many.
  UserErased: { type: 'user.erased', fields: ({ erased_at, fields }) => ({ erased_at, fields }) },
} satisfies {
  [T in DomainEvent['type']]?: { type: MessageType; fields: (data: Extract<DomainEvent, { type: T }>['data']) => Record<string, unknown> };
};

/** The event types a message or a fulfilment comes from (the webhook feeder reads no others). */
export const MESSAGE_SOURCE_EVENTS = Object.keys(MESSAGE_OF) as (keyof typeof MESSAGE_OF)[];

/** The event types whose messages are of these types (an endpoint's filter; null: every message). */
export function messageSourcesOf(types: readonly string[] | null): string[] {
  return MESSAGE_SOURCE_EVENTS.filter((source) => types === null || types.includes(MESSAGE_OF[source].type));
}

function messageType(event: DomainEvent): { type: MessageType; fields: Record<string, unknown> } | null {
  if (!Object.hasOwn(MESSAGE_OF, event.type)) return null;
  const message = MESSAGE_OF[event.type as keyof typeof MESSAGE_OF] as { type: MessageType; fields: (data: unknown) => Record<string, unknown> };
  return { type: message.type, fields: message.fields(event.data) };
}

/** The message an event of a `user-{app_user_id}` stream becomes; null when it is not in the catalogue. */
export function toWebhookMessage(event: DomainEvent & EventIdentity): WebhookMessage | null {
  const appUserId = streams.idOf('user', event.stream);
  if (appUserId === null) return null;
  const mapped = messageType(event);
  if (!mapped) return null;
  const { cause_position: _internal, ...fields } = mapped.fields as Record<string, unknown>;
  return {
    type: mapped.type,
    timestamp: event.recordedAt.toISOString(),
    data: { app_user_id: appUserId, ...fields, event_id: event.id, position: event.position.toString() },
  };
}

/** A partner fulfilment the event calls for: a `partner_entitlement` granted or ended. */
export interface FulfilmentAction {
  action: 'grant' | 'revoke';
  app_user_id: string;
  reward_key: string;
  grant_id: string;
  /** When the entitlement ends (grant); null = lifetime. */
  expires_at: string | null;
}

export function toFulfilment(event: DomainEvent & EventIdentity): FulfilmentAction | null {
  const app_user_id = streams.idOf('user', event.stream);
  if (app_user_id === null) return null;
  if (event.type === 'RewardGranted' && event.data.kind === 'partner_entitlement') {
    return { action: 'grant', app_user_id, reward_key: event.data.reward_key, grant_id: event.data.grant_id, expires_at: event.data.expires_at };
  }
  if ((event.type === 'RewardExpired' || event.type === 'RewardRevoked') && event.data.kind === 'partner_entitlement') {
    return { action: 'revoke', app_user_id, reward_key: event.data.reward_key, grant_id: event.data.grant_id, expires_at: null };
  }
  return null;
}
