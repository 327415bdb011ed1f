import { isOwnPayment } from '../src/domain/revenue/own-payment.js';
import { createHash } from 'node:crypto';
import type { LoggedEvent } from '../src/application/event-log.js';
import { appUserIdOf } from '../src/domain/events/index.js';
import type { PurchaseRef } from '../src/domain/events/revenue-events.js';
import { accountToken } from '../src/domain/revenue/account-token.js';
import { type MatchKeys, notificationKey, type RevenueProvider } from '../src/domain/revenue/revenue-notification.js';
import type { Doc, DocumentRef, Projection } from './projection.js';

/** What the revenue notifications need to look up, in one read model (SPEC §11). */
export const INBOUND = 'inbound_notifications';
/** Match keys → app_user_id: account tokens, Stripe customers, transactions (of recorded revenue, or linked by the app). */
export const REVENUE_LINKS = 'revenue_links';
/** Unmatched notifications by each key that could match them later. */
export const REVENUE_PENDING = 'revenue_pending';
/** Grants with clawback `on_refund` made because of a conversion, by the converted user. */
export const CLAWBACK_GRANTS = 'clawback_grants';

export const links = {
  token: (token: string) => `token:${token.toLowerCase()}`,
  /**
   * A payment customer as a match key: a digest, so the read models hold no personal value
   * (SPEC §13). Customer links are found by their `customer` field (RevenueMatcher#customerHolder).
   */
  customer: (customerId: string) => `customer:${createHash('sha256').update(customerId, 'utf8').digest('hex')}`,
  /**
   * The link a user's event made to its payment customer, by user and event: so `UserErased`,
   * naming the events it erased, removes exactly those links (a replay never makes them).
   */
  customerLink: (appUserId: string, eventId: string) => `customer-link:${appUserId}\u001f${eventId}`,
  transaction: (provider: RevenueProvider, id: string) => `txn:${provider}:${id}`,
  user: (appUserId: string) => `user:${appUserId}`,
  /** A recorded refund, by the transaction it names (or, without one, its original transaction). */
  refund: (provider: RevenueProvider, transactionId: string | null, originalId: string | null) =>
    transactionId !== null ? `refund:${provider}:t:${transactionId}` : `refund:${provider}:o:${originalId}`,
  /**
   * A recorded purchase or renewal, by its transaction and by its original transaction (the latest
   * one): whether it counted for a code. A refund looks it up as it names it (refundsPurchase).
   */
  paid: (provider: RevenueProvider, transactionId: string | null, originalId: string | null) =>
    transactionId !== null ? `paid:${provider}:t:${transactionId}` : `paid:${provider}:o:${originalId}`,
  /**
   * The first refund of the purchase that converted `claimer` (its reference and event id): a
   * grant made because of that conversion after the refund (a held reward approved late) is
   * revoked as the refund revoked the others, with the same event ids.
   */
  refundedConversion: (claimer: string) => `refunded-conversion:${claimer}`,
};

/** A `refundedConversion` link. */
export interface RefundedConversion {
  app_user_id: string;
  refund: PurchaseRef;
  event_id: string;
  /** The refund's log position (decimal). */
  position: string;
}

/**
 * The REVENUE_LINKS ids a notification's account token, payment customer and linked transaction
 * are found under, in the order the matcher trusts them (RevenueMatcher#match).
 */
export function linkKeys(provider: RevenueProvider, match: MatchKeys): string[] {
  const keys: string[] = [];
  if (match.account_token) keys.push(links.token(match.account_token));
  if (match.customer_id) keys.push(links.customer(match.customer_id));
  if (match.linked_transaction) keys.push(links.transaction(provider, match.linked_transaction));
  return keys;
}

/** Every key an unmatched notification could be matched by later (as REVENUE_LINKS ids, plus users). */
function pendingKeys(provider: RevenueProvider, match: MatchKeys): string[] {
  return [...new Set([...match.app_user_ids.map(links.user), ...linkKeys(provider, match)])];
}

const pendingId = (key: string, notification: string) => `${key}\u001f${notification}`;
const grantId = (holder: string, grant: string) => `${holder}\u001f${grant}`;

/**
 * The inbox is listed oldest first and paged by position: documents carry `neg_seq` (minus the
 * position of the event that received them), so "after position P" is `neg_seq <= -(P+1)`
 * ordered descending, which every read store answers with an index.
 */
function inboundDoc(event: LoggedEvent, fields: Doc): Doc {
  return {
    received_at: event.recordedAt.toISOString(),
    neg_seq: -Number(event.position),
    seq: event.position.toString(),
    event_ids: [],
    reason: null,
    ...fields,
  };
}

const REVENUE_TYPES = ['PurchaseRecorded', 'RenewalRecorded', 'RefundRecorded', 'SubscriptionExpired'] as const;

export const REVENUE_INDEX = 'revenue-index';

/**
 * The revenue index, its account-token links made in `accountTokenNamespace` (the service's
 * ACCOUNT_TOKEN_NAMESPACE: changing it needs a replay of this read model).
 */
export const revenueIndexProjection = (accountTokenNamespace: string): Projection => ({
  name: REVENUE_INDEX,
  // 2: customer links by digest, erasures noted (SPEC §13).
  // 3: a refund link keeps the amount its transaction's refunds reached (refunded_minor).
  // 4: purchases and renewals say whether they counted for a code (`paid:` links).
  // 5: the refund of a converting purchase is kept by its claimer (`refunded-conversion:` links).
  version: 5,
  collections: [
    { name: INBOUND, indexes: [['provider', 'neg_seq'], ['status', 'neg_seq'], ['app_user_id', 'neg_seq'], 'neg_seq'] },
    { name: REVENUE_LINKS, indexes: [['customer', 'seq']] },
    { name: REVENUE_PENDING, indexes: ['match_key'] },
    { name: CLAWBACK_GRANTS, indexes: ['claimer'] },
  ],
  eventTypes: [
    'NotificationReceived',
    'NotificationRejected',
    ...REVENUE_TYPES,
    'UserRegistered',
    'UserProfileUpdated',
    'TransactionLinked',
    'UserErased',
    'RewardGranted',
    'RewardRevoked',
  ],
  targets: (event) => {
    const user = appUserIdOf(event.stream);
    switch (event.type) {
      case 'NotificationReceived': {
        const { notification, app_user_id } = event.data;
        const key = notificationKey(notification.provider, notification.notification_id);
        const refs: DocumentRef[] = [{ collection: INBOUND, id: key }];
        if (app_user_id === null && notification.kind !== 'other') {
          for (const match of pendingKeys(notification.provider, notification.match)) refs.push({ collection: REVENUE_PENDING, id: pendingId(match, key) });
        }
        return refs;
      }
      case 'NotificationRejected':
        return [{ collection: INBOUND, id: `rejected:${event.id}` }];
      case 'PurchaseRecorded':
      case 'RenewalRecorded':
      case 'RefundRecorded':
      case 'SubscriptionExpired': {
        const refs: DocumentRef[] = [{ collection: INBOUND, id: notificationKey(event.data.provider, event.data.notification_id) }];
        const { provider, transaction_id, original_transaction_id } = event.data;
        if (original_transaction_id) refs.push({ collection: REVENUE_LINKS, id: links.transaction(provider, original_transaction_id) });
        if (event.type === 'RefundRecorded' && (transaction_id ?? original_transaction_id) !== null) {
          refs.push({ collection: REVENUE_LINKS, id: links.refund(provider, transaction_id, original_transaction_id) });
        }
        if (event.type === 'RefundRecorded' && event.data.reverses_conversion && user !== null) {
          refs.push({ collection: REVENUE_LINKS, id: links.refundedConversion(user) });
        }
        // A repeated payment leaves the links of the first record as they are.
        if ((event.type === 'PurchaseRecorded' || event.type === 'RenewalRecorded') && isOwnPayment(event.data)) {
          if (transaction_id !== null) refs.push({ collection: REVENUE_LINKS, id: links.paid(provider, transaction_id, null) });
          if (original_transaction_id !== null) refs.push({ collection: REVENUE_LINKS, id: links.paid(provider, null, original_transaction_id) });
        }
        return refs;
      }
      case 'UserRegistered': {
        if (user === null) return [];
        const refs: DocumentRef[] = [{ collection: REVENUE_LINKS, id: links.token(accountToken(user, accountTokenNamespace)) }];
        if (event.data.payment_customer_id) refs.push({ collection: REVENUE_LINKS, id: links.customerLink(user, event.id) });
        return refs;
      }
      case 'UserProfileUpdated': {
        const customer = event.data.changes.payment_customer_id;
        return user !== null && customer ? [{ collection: REVENUE_LINKS, id: links.customerLink(user, event.id) }] : [];
      }
      case 'TransactionLinked':
        // The app linked it (SPEC §15): the transaction stream's first link, so it never moves.
        return [{ collection: REVENUE_LINKS, id: links.transaction(event.data.provider, event.data.transaction_id) }];
      case 'UserErased':
        return user === null ? [] : event.data.erased_events.map((id) => ({ collection: REVENUE_LINKS, id: links.customerLink(user, id) }));
      case 'RewardGranted': {
        const claimer = clawbackClaimer(event, user);
        return claimer === null || user === null ? [] : [{ collection: CLAWBACK_GRANTS, id: grantId(user, event.data.grant_id) }];
      }
      case 'RewardRevoked':
        return user === null ? [] : [{ collection: CLAWBACK_GRANTS, id: grantId(user, event.data.grant_id) }];
      default:
        return [];
    }
  },
  evolve: (ref: DocumentRef, doc: Doc | null, event: LoggedEvent): Doc | null => {
    const user = appUserIdOf(event.stream);
    if (ref.collection === REVENUE_LINKS) {
      // A transaction a verified notification already recorded for a user keeps that user.
      if (event.type === 'TransactionLinked') return doc ?? { app_user_id: event.data.app_user_id };
      if (user === null) return doc;
      if (event.type === 'UserErased') return null;
      if (event.type === 'RefundRecorded' && ref.id.startsWith('refund:')) {
        // The most refunded so far: Stripe's partial refunds carry the running total, Apple's REFUND and REVOKE the same price.
        const before = (doc as { refunded_minor?: number } | null)?.refunded_minor ?? 0;
        return { app_user_id: user, refunded_minor: Math.max(before, event.data.price_minor ?? 0) };
      }
      if (event.type === 'RefundRecorded' && ref.id.startsWith('refunded-conversion:')) {
        // The first refund stays: its clawback's event ids derive from it.
        const { provider, notification_id, transaction_id, original_transaction_id } = event.data;
        const first: RefundedConversion = {
          app_user_id: user,
          refund: { provider, notification_id, transaction_id, original_transaction_id },
          event_id: event.id,
          position: event.position.toString(),
        };
        return doc ?? (first as unknown as Doc);
      }
      if ((event.type === 'PurchaseRecorded' || event.type === 'RenewalRecorded') && ref.id.startsWith('paid:')) {
        return { app_user_id: user, attributed: event.data.attribution !== null };
      }
      const customer = ref.id.startsWith('customer-link:') ? customerOf(event) : null;
      // The latest link to a customer wins (`seq`), as when one document per customer was overwritten.
      return customer === null ? { app_user_id: user } : { app_user_id: user, customer: links.customer(customer), seq: Number(event.position) };
    }
    if (ref.collection === REVENUE_PENDING && event.type === 'NotificationReceived') {
      const key = notificationKey(event.data.notification.provider, event.data.notification.notification_id);
      const { provider, notification_id } = event.data.notification;
      return { match_key: ref.id.slice(0, ref.id.indexOf('\u001f')), notification_key: key, provider, notification_id };
    }
    if (ref.collection === CLAWBACK_GRANTS) {
      if (event.type === 'RewardGranted') {
        const { grant_id, entry_id, reward_key, kind, credits } = event.data;
        return { holder: user, claimer: clawbackClaimer(event, user), grant_id, entry_id, reward_key, kind, credits, revoked: false };
      }
      if (event.type === 'RewardRevoked') return doc === null ? null : { ...doc, revoked: true };
      return doc;
    }
    if (ref.collection !== INBOUND) return doc;
    switch (event.type) {
      case 'NotificationReceived': {
        const { notification, app_user_id } = event.data;
        const ignored = notification.kind === 'other';
        const base = inboundDoc(event, {
          id: notification.notification_id,
          provider: notification.provider,
          received_at: event.data.received_at,
          kind: notification.kind,
          provider_type: notification.provider_type,
          status: ignored ? 'applied' : app_user_id === null ? 'unmatched' : 'received',
          reason: ignored ? `nothing to record for ${notification.provider_type}` : null,
          app_user_id,
        });
        // A revenue event can only follow its notification; keep what it set if replayed out of order.
        return doc === null ? base : { ...base, ...pick(doc, ['status', 'app_user_id', 'event_ids']) };
      }
      case 'NotificationRejected':
        return inboundDoc(event, {
          id: event.data.notification_id,
          provider: event.data.provider,
          received_at: event.data.received_at,
          kind: null,
          provider_type: null,
          status: 'rejected',
          reason: event.data.reason,
          app_user_id: null,
        });
      default: {
        if (doc === null) return null;
        const eventIds = (doc.event_ids as string[]).includes(event.id) ? doc.event_ids : [...(doc.event_ids as string[]), event.id];
        return { ...doc, status: 'applied', app_user_id: user, event_ids: eventIds };
      }
    }
  },
});

/** The payment customer id a user event sets, else null. */
function customerOf(event: LoggedEvent): string | null {
  if (event.type === 'UserRegistered') return event.data.payment_customer_id;
  if (event.type === 'UserProfileUpdated') return event.data.changes.payment_customer_id ?? null;
  return null;
}

function pick(doc: Doc, keys: string[]): Doc {
  return Object.fromEntries(keys.map((key) => [key, doc[key]]));
}

/** The converted user a clawback-able grant belongs to: the holder (conversion reward) or its claimer (sender reward). */
export function clawbackClaimer(event: LoggedEvent, holder: string | null): string | null {
  if (event.type !== 'RewardGranted' || event.data.clawback !== 'on_refund') return null;
  const { cause } = event.data;
  if (cause.type === 'conversion') return holder;
  if (cause.type === 'referrals' && cause.variant === 'conversion') return cause.claimer;
  return null;
}
