import type { z } from 'zod';
import { codeEvents } from './code-events.js';
import { configEvents } from './config-events.js';
import { fraudEvents } from './fraud-events.js';
import { poolEvents } from './pool-events.js';
import { inboundEvents } from './revenue-events.js';
import { storeEvents } from './store-events.js';
import { transactionEvents } from './transaction-events.js';
import { userEvents } from './user-events.js';
import { webhookEvents } from './webhook-events.js';

/** Every event type of the service with the zod schema of its data. */
export const eventSchemas = {
  ...userEvents,
  ...codeEvents,
  ...configEvents,
  ...poolEvents,
  ...storeEvents,
  ...inboundEvents,
  ...webhookEvents,
  ...transactionEvents,
  ...fraudEvents,
};

export type EventType = keyof typeof eventSchemas;
export type EventDataOf<T extends EventType> = z.infer<(typeof eventSchemas)[T]>;

/** A domain event as deciders produce and evolvers consume it. */
export type DomainEvent = { [T in EventType]: { type: T; data: EventDataOf<T> } }[EventType];
export type EventOf<T extends EventType> = Extract<DomainEvent, { type: T }>;

/** Current schema version of every event type; bump it and add an upcaster when a shape changes. */
export const SCHEMA_VERSION = 7;

export function isKnownEventType(type: string): type is EventType {
  return Object.hasOwn(eventSchemas, type);
}

class InvalidEventError extends Error {
  constructor(type: string, detail: string) {
    super(`Event ${type} does not match its schema: ${detail}`);
    this.name = 'InvalidEventError';
  }
}

/** Validates event data against its schema (on append and on read). */
export function parseEvent(type: string, data: unknown): DomainEvent {
  if (!isKnownEventType(type)) throw new InvalidEventError(type, 'unknown event type');
  const result = eventSchemas[type].safeParse(data);
  if (!result.success) throw new InvalidEventError(type, result.error.message);
  return { type, data: result.data } as DomainEvent;
}

/** One prefix per stream type, so a prefix filter selects a type on every backend. */
const STREAM_PREFIXES = {
  user: 'user-',
  code: 'code-',
  reward: 'reward-',
  program: 'program-',
  promo: 'promo-',
  affiliate: 'affiliate-',
  pool: 'pool-',
  offerCode: 'offer-code-',
  webhook: 'webhook-',
  inbound: 'inbound-',
  transaction: 'transaction-',
  rule: 'rule-',
  review: 'review-',
  paymentCustomer: 'payment-customer-',
} as const;

export type StreamType = keyof typeof STREAM_PREFIXES;

/** Stream names: built here and parsed here, nowhere else. */
export const streams = {
  user: (appUserId: string) => `${STREAM_PREFIXES.user}${appUserId}`,
  code: (code: string) => `${STREAM_PREFIXES.code}${code}`,
  reward: (key: string) => `${STREAM_PREFIXES.reward}${key}`,
  program: (id: string) => `${STREAM_PREFIXES.program}${id}`,
  promo: (code: string) => `${STREAM_PREFIXES.promo}${code}`,
  affiliate: (id: string) => `${STREAM_PREFIXES.affiliate}${id}`,
  pool: (rewardKey: string) => `${STREAM_PREFIXES.pool}${rewardKey}`,
  offerCode: (id: string) => `${STREAM_PREFIXES.offerCode}${id}`,
  webhook: (id: string) => `${STREAM_PREFIXES.webhook}${id}`,
  /** One verified inbound notification: its uniqueness is the deduplication (SPEC §11). */
  inbound: (provider: string, notificationId: string) => `${STREAM_PREFIXES.inbound}${provider}-${notificationId}`,
  /** One refused inbound notification (recorded without its payload). */
  inboundRejected: (id: string) => `${STREAM_PREFIXES.inbound}rejected-${id}`,
  /** One store transaction linked to its user (SPEC §15); `key` from `transactionKey` (domain/transactions). */
  transaction: (provider: string, key: string) => `${STREAM_PREFIXES.transaction}${provider}-${key}`,
  /** A fraud rule's configuration (SPEC §13). */
  rule: (id: string) => `${STREAM_PREFIXES.rule}${id}`,
  /** One held claim or conversion and its review decision. */
  review: (id: string) => `${STREAM_PREFIXES.review}${id}`,
  /** Claims counted for one payment customer, named by its keyed digest (never the plaintext id). */
  paymentCustomer: (digest: string) => `${STREAM_PREFIXES.paymentCustomer}${digest}`,
  prefix: (type: StreamType) => STREAM_PREFIXES[type],
  /** The id in a stream name of `type` (`user-ann` → `ann`); null for a stream of another type. */
  idOf: (type: StreamType, stream: string): string | null => (stream.startsWith(STREAM_PREFIXES[type]) ? stream.slice(STREAM_PREFIXES[type].length) : null),
} as const;

/** The app_user_id of a `user-{app_user_id}` stream; null for every other stream. */
export function appUserIdOf(stream: string): string | null {
  return streams.idOf('user', stream);
}
