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

function messageType(event: DomainEvent): { type: MessageType; fields: Record<string, unknown> } | null {
  switch (event.type) {
    case 'UserRegistered':
      return { type: 'user.created', fields: event.data };
    case 'CodeClaimed':
      return { type: 'code.claimed', fields: event.data };
    case 'ReferralClaimCounted':
      return { type: 'referral.counted', fields: { variant: 'claim', ...event.data } };
    case 'ReferralConversionCounted':
      return { type: 'referral.counted', fields: { variant: 'conversion', ...event.data } };
    case 'RewardGranted':
      return { type: 'reward.granted', fields: event.data };
    case 'RewardExpired':
      return { type: 'reward.expired', fields: event.data };
    case 'RewardRevoked':
      return { type: 'reward.revoked', fields: event.data };
    case 'CreditsWithdrawn':
      return { type: 'credits.withdrawn', fields: event.data };
    case 'UserConverted':
      return { type: 'conversion.recorded', fields: event.data };
    default:
      return null;
  }
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
