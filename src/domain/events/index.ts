import type { z } from 'zod';
import { codeEvents } from './code-events.js';
import { configEvents } from './config-events.js';
import { poolEvents } from './pool-events.js';
import { storeEvents } from './store-events.js';
import { userEvents } from './user-events.js';
import { webhookEvents } from './webhook-events.js';

/** Every event type of the service with the zod schema of its data. */
export const eventSchemas = { ...userEvents, ...codeEvents, ...configEvents, ...poolEvents, ...storeEvents, ...webhookEvents };

export type EventType = keyof typeof eventSchemas;
export type EventDataOf<T extends EventType> = z.infer<(typeof eventSchemas)[T]>;

/** A domain event as deciders produce and evolvers consume it. */
export type DomainEvent = { [T in EventType]: { type: T; data: EventDataOf<T> } }[EventType];
export type EventOf<T extends EventType> = Extract<DomainEvent, { type: T }>;

/** Current schema version of every event type; bump it and add an upcaster when a shape changes. */
export const SCHEMA_VERSION = 2;

export function isKnownEventType(type: string): type is EventType {
  return Object.hasOwn(eventSchemas, type);
}

export class InvalidEventError extends Error {
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

export const streams = {
  user: (appUserId: string) => `user-${appUserId}`,
  code: (code: string) => `code-${code}`,
  reward: (key: string) => `reward-${key}`,
  program: (id: string) => `program-${id}`,
  promo: (code: string) => `promo-${code}`,
  affiliate: (id: string) => `affiliate-${id}`,
  pool: (rewardKey: string) => `pool-${rewardKey}`,
  offerCode: (id: string) => `offer-code-${id}`,
  webhook: (id: string) => `webhook-${id}`,
} as const;

/** The app_user_id of a `user-{app_user_id}` stream; null for every other stream. */
export function appUserIdOf(stream: string): string | null {
  return stream.startsWith('user-') ? stream.slice('user-'.length) : null;
}
