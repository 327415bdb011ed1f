import type { NewEvent } from '../../src/ports/event-store.js';

/** Events as an event store takes them (untyped data, own ids): for tests of stores and their wrappers. */
const metadata = { correlation_id: 'c', causation_id: 'c', actor: 'test', schema_version: 3 };
let counter = 0;

export function newEvent(type: string, data: Record<string, unknown>): NewEvent {
  counter += 1;
  return { id: `e-${counter}`, type, data, metadata };
}

/** `UserRegistered` of `id`, every field null but those given. */
export const newRegistered = (id: string, fields: Record<string, unknown>) =>
  newEvent('UserRegistered', {
    app_user_id: id,
    registered_at: '2026-11-23T10:00:00.000Z',
    is_trial: null,
    is_premium: null,
    first_seen_at: null,
    metadata: null,
    payment_customer_id: null,
    ...fields,
  });
