import type { Decision, Evolver } from '../decider.js';
import type { RevenueNotification } from './revenue-notification.js';

/** A notification's own stream (`inbound-{provider}-{id}`): whether it was received, and the user it was matched to then. */
export interface InboundState {
  received: boolean;
  app_user_id: string | null;
}

export const inboundEvolver: Evolver<InboundState> = {
  name: 'inbound',
  version: 2,
  initialState: () => ({ received: false, app_user_id: null }),
  evolve: (state, event) => (event.type === 'NotificationReceived' ? { received: true, app_user_id: event.data.app_user_id } : state),
};

/**
 * Keeps a verified notification (SPEC §11), matched to `appUserId` (null: no user yet), under
 * the event id `eventId` derived from the provider's notification id: a repeat, or a concurrent
 * copy, finds it kept and changes nothing (`first` false, with the user it was matched to then).
 */
export function decideReceiveNotification(
  state: InboundState,
  notification: RevenueNotification,
  appUserId: string | null,
  eventId: string,
  now: Date,
): Decision<{ first: boolean; app_user_id: string | null }> {
  if (state.received) return { events: [], result: { first: false, app_user_id: state.app_user_id } };
  return {
    events: [{ id: eventId, type: 'NotificationReceived', data: { received_at: now.toISOString(), notification, app_user_id: appUserId } }],
    result: { first: true, app_user_id: appUserId },
  };
}
