import type { Decision, NewDomainEvent } from '../decider.js';
import type { EventDataOf } from '../events/index.js';
import type { RevenueSource } from '../events/revenue-events.js';
import { refundsPurchase } from './refunds-purchase.js';
import { expireDueRewards, type GrantSpec } from '../rewards/grant-and-expire.js';
import { type ConversionsFrom, conversionEvents } from '../users/conversion.js';
import { foldUserEvents, type UserState } from '../users/user-state.js';
import { RECORDED_TYPE, type RevenueNotification } from './revenue-notification.js';

export interface RecordRevenueCommand {
  notification: RevenueNotification;
  /** The event id the notification's record gets (derived from the notification id). */
  event_id: string;
  /** The revenue index already shows this notification applied to this user. */
  already_recorded: boolean;
  /**
   * An earlier refund names this transaction: for a purchase, its refund came first (out of
   * order); for a refund, it repeats one already recorded.
   */
  already_refunded: boolean;
  /** For a purchase or renewal: one of the same transaction is already recorded (under another notification id, for this user or another). */
  already_paid: boolean;
  /** For a refund that repeats one: the amount the refunds of its transaction recorded so far (null: unknown). */
  refunded_before_minor: number | null;
  /**
   * For a refund: whether the purchase it takes back counted for a code when it was recorded
   * (null: that purchase is not recorded, e.g. the refund came first).
   */
  refunded_purchase_attributed: boolean | null;
  conversions: ConversionsFrom;
  /** Receiver rewards with activation "conversion" of the code the user claimed. */
  conversionRewards: GrantSpec[];
  now: Date;
}

/**
 * What a recorded refund adds to the figures (analytics, attribution), and for which code; null
 * when it counts for none:
 * - for the code its purchase counted for (`attribution`): one refund and its amount; or, when it
 *   repeats an earlier refund of its transaction, no refund and only the amount it refunds
 *   beyond that one;
 * - else, when it reverses a conversion paid before the claim (`conversion_attribution`): that
 *   conversion's refund for its code, and no money, as the purchase counted none.
 */
export function refundFigures(refund: EventDataOf<'RefundRecorded'>): { source: RevenueSource; refunds: number; amount: number | null } | null {
  if (refund.attribution !== null) {
    const { attribution: source } = refund;
    return refund.repeats_refund === true
      ? { source, refunds: 0, amount: refund.adds_refunded_minor ?? 0 }
      : { source, refunds: 1, amount: refund.price_minor };
  }
  return refund.conversion_attribution ? { source: refund.conversion_attribution, refunds: 1, amount: null } : null;
}

function sourceOf(referred: NonNullable<UserState['referred_by']>): RevenueSource {
  return { code: referred.code, type: referred.type, owner_id: referred.owner_id, program_id: referred.program_id ?? null };
}

/**
 * Whether the subscription of this purchase or renewal has already ended: an expiry of it that
 * happened after it was recorded first. Stores and RevenueCat do not promise to send in order.
 */
function endedBefore(state: UserState, notification: RevenueNotification): boolean {
  const expiry = state.latest_expiry;
  return (
    expiry !== null &&
    expiry.provider === notification.provider &&
    expiry.original_transaction_id !== null &&
    expiry.original_transaction_id === notification.original_transaction_id &&
    Date.parse(expiry.occurred_at) > Date.parse(notification.occurred_at)
  );
}

/**
 * A paid purchase whose subscription's expiry came first: the user paid, so it converts as it
 * would have then (with its rewards, and this purchase as the one a refund reverses), and it
 * churns at once when nothing else keeps it premium now.
 */
function paidThenEnded(state: UserState, command: RecordRevenueCommand): NewDomainEvent[] {
  const { provider, notification_id, transaction_id, original_transaction_id } = command.notification;
  const paying: UserState = { ...state, verified_premium: true, verified_purchase: { provider, notification_id, transaction_id, original_transaction_id } };
  const converted = conversionEvents(paying, command.conversionRewards, command.now, command.conversions);
  if (converted.length === 0) return [];
  const afterwards = { ...foldUserEvents(paying, converted), verified_premium: state.verified_premium, verified_purchase: state.verified_purchase };
  return [...converted, ...conversionEvents(afterwards, [], command.now, command.conversions)];
}

/**
 * A first refund of its transaction. One that reverses the user's conversion, of a purchase paid
 * before the claim (no attribution), counts for the claimed code as that conversion's refund.
 */
function firstRefund<T extends { attribution: RevenueSource | null }>(data: T, reversesConversion: boolean, referred: UserState['referred_by']) {
  return reversesConversion && data.attribution === null && referred !== null
    ? { ...data, reverses_conversion: true, conversion_attribution: sourceOf(referred) }
    : { ...data, reverses_conversion: reversesConversion };
}

/**
 * Records what a verified notification means for its user (SPEC §11): the purchase, renewal,
 * refund or expiry, and — when CONVERSIONS_FROM lets verified revenue count — the conversion
 * or churn it causes. A notification is recorded once: a repeat changes nothing.
 */
export function decideRecordRevenue(state: UserState, command: RecordRevenueCommand): Decision<{ status: 'applied' | 'duplicate' }> {
  const { notification, now } = command;
  if (command.already_recorded || notification.kind === 'other') return { events: [], result: { status: 'duplicate' } };
  const events: NewDomainEvent[] = expireDueRewards(state, now);
  const { match: _match, ...fact } = notification;
  const referred = state.referred_by;
  // A refund counts for the code its purchase counted for: none when that purchase came before the claim.
  const unattributed = referred === null || (notification.kind === 'refund' && command.refunded_purchase_attributed === false);
  const attribution = unattributed ? null : sourceOf(referred);
  const data = { ...fact, recorded_at: now.toISOString(), attribution };
  switch (notification.kind) {
    case 'purchase':
    case 'renewal': {
      // A purchase whose refund came first neither makes the user premium nor converts it.
      const expiredBefore = endedBefore(state, notification);
      const recorded = { ...data, refunded_before: command.already_refunded, expired_before: expiredBefore };
      if (command.already_paid) {
        // The same payment sent again under another notification id: recorded, counted once.
        events.push({ id: command.event_id, type: RECORDED_TYPE[notification.kind], data: { ...recorded, repeats_purchase: true } });
        return { events, result: { status: 'applied' } };
      }
      events.push({ id: command.event_id, type: RECORDED_TYPE[notification.kind], data: recorded });
      if (expiredBefore && !command.already_refunded && !notification.is_trial && command.conversions !== 'client') {
        events.push(...paidThenEnded(foldUserEvents(state, events), command));
        return { events, result: { status: 'applied' } };
      }
      break;
    }
    case 'refund':
      // A second refund of one transaction reverses nothing more, and is counted once.
      events.push({
        id: command.event_id,
        type: 'RefundRecorded',
        data: command.already_refunded
          ? {
              ...data,
              reverses_conversion: false,
              repeats_refund: true,
              adds_refunded_minor:
                command.refunded_before_minor === null || notification.price_minor === null
                  ? 0
                  : Math.max(0, notification.price_minor - command.refunded_before_minor),
            }
          : firstRefund(data, refundsPurchase(notification, state.converted_purchase), referred),
      });
      break;
    case 'expiry':
      events.push({ id: command.event_id, type: 'SubscriptionExpired', data });
      break;
  }
  if (command.conversions !== 'client') {
    events.push(...conversionEvents(foldUserEvents(state, events), command.conversionRewards, now, command.conversions));
  }
  return { events, result: { status: 'applied' } };
}
