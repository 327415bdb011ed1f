/**
 * The event catalogue (docs/events.md), from the event schemas the store validates every append
 * against: every event type with its stream, what it records and the fields of its data. Written by
 * `npm run docs:generate` (scripts/api-reference.ts).
 */
import { z } from 'zod';
import { olderVersionNotes } from '../../src/application/upcasters.js';
import { codeEvents } from '../../src/domain/events/code-events.js';
import { configEvents } from '../../src/domain/events/config-events.js';
import { fraudEvents } from '../../src/domain/events/fraud-events.js';
import { eventSchemas, SCHEMA_VERSION } from '../../src/domain/events/index.js';
import { poolEvents } from '../../src/domain/events/pool-events.js';
import { inboundEvents } from '../../src/domain/events/revenue-events.js';
import { storeEvents } from '../../src/domain/events/store-events.js';
import { transactionEvents } from '../../src/domain/events/transaction-events.js';
import { userEvents } from '../../src/domain/events/user-events.js';
import { webhookEvents } from '../../src/domain/events/webhook-events.js';
import type { JsonSchema } from './json-schema.js';

/** A compact, readable type of a JSON Schema (from zod's toJSONSchema). */
function typeText(schema: JsonSchema | undefined, depth = 0): string {
  if (schema === undefined || Object.keys(schema).length === 0) return 'any JSON';
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum) return schema.enum.map((value: unknown) => JSON.stringify(value)).join(' \\| ');
  if (Array.isArray(schema.type)) return schema.type.map((type: string) => typeText({ ...schema, type }, depth)).join(' \\| ');
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return variants.map((variant) => typeText(variant, depth)).join(' \\| ');
  switch (schema.type) {
    case 'string':
      return schema.format === 'date-time' ? 'date-time' : 'string';
    case 'array':
      return `[${typeText(schema.items, depth + 1)}]`;
    case 'object': {
      const properties = Object.entries(schema.properties ?? {});
      if (properties.length === 0) return 'object';
      // A field the object may lack is `name?`, at every depth, as at the top (eventsMarkdown).
      const required = new Set(schema.required ?? []);
      const name = (key: string) => `${key}${required.has(key) ? '' : '?'}`;
      if (depth >= 2) return `{${properties.map(([key]) => name(key)).join(', ')}}`;
      return `{${properties.map(([key, value]) => `${name(key)}: ${typeText(value, depth + 1)}`).join(', ')}}`;
    }
    default:
      return String(schema.type ?? 'any JSON');
  }
}

/** What each event records, for readers of the log. */
const EVENT_MEANINGS: Record<string, string> = {
  UserRegistered: 'A user was created (`POST /users` for a new `app_user_id`).',
  UserProfileUpdated: 'Fields of the user changed; only the changed fields are listed.',
  UserErased:
    "The user's personal fields were erased (`DELETE /admin/users/{app_user_id}`): their data key destroyed, so every earlier value reads as null (`{\"erased\": true}` in the log). `erased_events`: the ids of the user's own events that held a personal value. Inbound notifications that named one of the user's payment customer ids are not listed there: that customer id's key is destroyed with the user's, so their `notification.match.customer_id` reads `{\"erased\": true}` too. Holds no personal data.",
  ReferralProgramAssigned: 'The user got a program and its referral code (once, never changed).',
  CodeClaimed: 'The user claimed a referral, promo or affiliate code. `hold` only when a fraud rule held it for review.',
  ClaimAbandoned:
    "A claim that took its code's slot and did not happen: refused after the slot was taken (a `payment_customer_claimers` rule, or a failed append), or left unrecorded by a crash and found by the repair or by the claimer's next claim (as it takes a slot of the full code, or once it is recorded). `ClaimSlotReleased` on the code's stream follows.",
  UserConverted: 'A claimer became premium (not trial): counts as a conversion of the code it claimed.',
  UserChurned: 'A converted claimer stopped being premium.',
  RewardGranted:
    'One grant. `entry_id` names the reward entry it opens or adds to: credit grants of one reward with the same `expires_at` share one entry. `cause` says why; `balance_after` is the credits of that key after it.',
  RewardGrantSkipped: 'A manual grant found the (non-stacking) reward still active: nothing added, the `operation_id` remembered.',
  RewardValueAssigned: 'A pooled code (offer or promo code) reached the grant that waited for it.',
  RewardExpired:
    'An entry reached its `expires_at`; credits left in it are forfeited. `grant_id` names the entry: the `entry_id` of the grants in it (grants of one reward with the same `expires_at` share one entry, SPEC §5.3), so one expiry covers them all.',
  CreditsWithdrawn:
    'A withdrawal, with the entries it drained (`debits`; each `grant_id` there names an entry, the `entry_id` of its grants), also when it withdrew 0.',
  ReferralClaimCounted: "A claim of the user's referral code was counted (running count); sender rewards due at that count are granted with it.",
  ReferralConversionCounted: 'A conversion of one of its claimers was counted.',
  ReferralChurnCounted: 'A churn of one of its claimers was counted.',
  CodeReserved: 'The code got its owner: the first reservation wins, and a code is never freed.',
  ClaimSlotTaken:
    "A claim took one of the code's slots (`taken`: slots held after it); checked against the limit. `window`: the code's claims this UTC hour and day, kept for referral codes only (the referrer's rate rules count them): absent for promo and affiliate codes, and in events written before fraud rules.",
  ClaimSlotReleased: 'A slot was given back (the claim did not complete). `window` as in `ClaimSlotTaken`.',
  RewardCreated: 'A reward was defined (the full definition).',
  RewardUpdated: 'A reward definition changed (the full new definition).',
  ProgramCreated: 'A referral program was defined.',
  ProgramUpdated: 'A referral program changed.',
  PromoCodeCreated: 'A promo code was defined.',
  PromoCodeUpdated: 'A promo code changed.',
  AffiliateCreated: 'An affiliate was defined.',
  AffiliateUpdated: 'An affiliate changed.',
  PoolCodesAdded: 'One-time codes were added to the pool (values already there are skipped).',
  PoolCodeRequested: 'A grant waits for a code from the pool.',
  PoolCodeAssigned: 'The pool gave a code to a grant (each code to one grant, ever).',
  PoolRequestWithdrawn: 'A grant was revoked (refund clawback) before it got a code: it gets none (it leaves the line, or is never served).',
  StoreOfferCodeCreated: 'A store offer code entered the catalog.',
  StoreOfferCodeUpdated: 'A catalog entry changed (the whole new entry).',
  WebhookEndpointCreated:
    'An outgoing webhook endpoint was configured, with its first signing secret (kept for signing; `GET /admin/events` and `export-events` show it as `{"redacted": true}`).',
  WebhookEndpointUpdated: 'An endpoint changed (the whole new endpoint).',
  WebhookSecretRotated: 'A new signing secret; the previous ones sign until `previous_expires_at` (the secret read back as for `WebhookEndpointCreated`).',
  WebhookEndpointDisabled: 'The delivery engine disabled the endpoint (410 Gone, or failing continuously).',
  WebhookEndpointDeleted: 'The endpoint was deleted.',
  TransactionLinked:
    'The app linked a store transaction to `app_user_id` (the first link; it never moves). Revenue notifications without an account id find their user through it.',
  TransactionLinkRefused: 'Another user asked for a transaction already linked to `linked_app_user_id`: kept for review, once per user.',
  FraudRuleCreated: 'A fraud rule was defined (the full rule).',
  FraudRuleUpdated: 'A fraud rule changed (the full new rule).',
  ClaimRejectedByRule:
    "In the claimer's stream: a fraud rule with action `reject` refused a claim (422 `CLAIM.REJECTED_BY_RULE`). Nothing else changed, but for what the claim had taken being given back first: a refusal by `payment_customer_claimers` comes after the claim took its code's slot, so `ClaimAbandoned` (in this stream) and `ClaimSlotReleased` precede it; a refusal by the code's hourly or daily rule gives back a payment customer's count (`PaymentCustomerClaimReleased`).",
  SenderRewardsHeld: "In the referrer's stream: a claim or conversion on hold; the sender rewards due at `count` wait for the review.",
  SenderRewardsRefused: "In the referrer's stream: a conversion's sender rewards refused by a `reject` rule (the conversion still counts).",
  HeldRewardsReleased: "In the referrer's stream: the review was decided; when approved, the held grants follow in the same append.",
  ReviewOpened: 'A held claim (or conversion) waits for a reviewer.',
  ReviewApproved: 'A reviewer approved: the held referrer rewards are granted.',
  ReviewRejected: 'A reviewer rejected: the held referrer rewards are dropped.',
  PaymentCustomerClaimCounted: 'A referral claimer of this payment customer was counted (`claimers`: the count after it).',
  PaymentCustomerClaimReleased: 'A counted claim did not complete; the count went back.',
  NotificationReceived:
    'A revenue notification whose signature or token held, normalised (kind, transaction ids, product, price in minor units, period, trial flag); `app_user_id` is its user when matched on receipt. The stream is the deduplication: one per provider notification id.',
  NotificationRejected:
    "A refused delivery (a missing or bad signature or token, or a payload signed for another app, package or environment), kept without its payload. `notification_id` is the provider's id when its signature held (absent before schema version 6: read as null).",
  PurchaseRecorded:
    'A purchase of the user, from a verified notification (its id derives from the notification id). A paid, non-trial one is a verified conversion (counted when `CONVERSIONS_FROM` is `verified` or `both`: `UserConverted` follows) unless `refunded_before`: its refund was recorded first. `expired_before`: an expiry of its subscription that happened after it was recorded first (stores do not promise order); it still converts, and `UserChurned` follows at once unless the user is premium otherwise (absent before schema version 7: read as false). `repeats_purchase` (true, on a repeat only): a purchase or renewal of the same transaction was recorded before (for this user or another), under another notification id; kept as a fact, it counts no revenue again and changes nothing else.',
  RenewalRecorded: 'A renewal of the user, from a verified notification; the first paid renewal after a trial is a verified conversion, as a paid purchase is.',
  SubscriptionExpired: 'The subscription ended without renewal: a churn of the user when it had converted.',
  RewardRevoked:
    'A grant taken back because the purchase that earned it was refunded (clawback `on_refund`). Credits: `debits` drained from unspent entries of the key (each `grant_id` there names an entry), `shortfall` the part already spent (the balance never goes below 0). Other kinds: the entry ends at once.',
  RefundRecorded:
    "A refund of a store purchase or renewal. A first refund of a transaction refunds `price_minor`; a repeat (Apple sends REFUND then REVOKE, Stripe a running total per partial refund) has `repeats_refund: true` and `adds_refunded_minor`, what it refunds beyond the earlier ones, and counts as no new refund. `refunded_transaction_id`: for a refund whose `transaction_id` is its own (a Stripe dispute), the transaction it takes back when the provider says (the disputed charge's invoice); absent for the others. `reverses_conversion`: it refunds the purchase that converted the user (the clawback follows); `conversion_attribution`: on such a refund of a purchase paid before the claim (`attribution` null), the code the conversion counted for, where the refund counts (not its money).",
};

/** The stream each event type is appended to. */
function streamOf(type: string): string {
  if (type in userEvents) return '`user-{app_user_id}`';
  if (type in codeEvents) return '`code-{CODE}`';
  if (type in poolEvents) return '`pool-{reward_key}`';
  if (type in storeEvents) return '`offer-code-{offer_code_id}`';
  if (type.startsWith('Reward')) return '`reward-{key}`';
  if (type.startsWith('Program')) return '`program-{id}`';
  if (type.startsWith('PromoCode')) return '`promo-{CODE}`';
  if (type.startsWith('Affiliate')) return '`affiliate-{id}`';
  if (type in webhookEvents) return '`webhook-{id}`';
  if (type === 'NotificationReceived') return '`inbound-{provider}-{notification_id}`';
  if (type === 'NotificationRejected') return '`inbound-rejected-{id}`';
  if (type in transactionEvents) return '`transaction-{provider}-{id}` (`id`: the originalTransactionId, or the SHA-256 hex of the purchase token)';
  if (type === 'ClaimRejectedByRule') return '`user-{app_user_id}` (claimer)';
  if (type === 'SenderRewardsHeld' || type === 'SenderRewardsRefused' || type === 'HeldRewardsReleased') return '`user-{app_user_id}` (referrer)';
  if (type.startsWith('FraudRule')) return '`rule-{id}`';
  if (type.startsWith('Review')) return '`review-{id}`';
  if (type.startsWith('PaymentCustomer')) return '`payment-customer-{digest}` (keyed digest, never the plaintext id)';
  return '(see source)';
}

export function eventsMarkdown(): string {
  const groups: [string, Record<string, z.ZodType>][] = [
    ['Users: everything about one user', userEvents],
    ['Codes: the shared code namespace and claim slots', codeEvents],
    ['Configuration: rewards, programs, promo codes, affiliates', configEvents],
    ['Code pools of offer_code / store_promo_code rewards', poolEvents],
    ['Store offer-code catalog', storeEvents],
    ['Outgoing webhook endpoints', webhookEvents],
    ['Revenue notifications received', inboundEvents],
    ['Store transactions linked by the app', transactionEvents],
    ['Fraud rules, their decisions and reviews', fraudEvents],
  ];
  // Every event type has its section and its meaning: the catalogue is what analysts read the log by.
  const listed = new Set(groups.flatMap(([, events]) => Object.keys(events)));
  const unlisted = Object.keys(eventSchemas).filter((type) => !listed.has(type) || EVENT_MEANINGS[type] === undefined);
  if (unlisted.length > 0) throw new Error(`The event catalogue lacks a section or a meaning for ${unlisted.join(', ')}`);
  const sections = groups.map(([title, events]) => {
    const rows = Object.entries(events).map(([type, schema]) => {
      const json = z.toJSONSchema(schema, { unrepresentable: 'any', io: 'output' }) as JsonSchema;
      const required = new Set(json.required ?? []);
      const fields = Object.entries(json.properties ?? {}).map(([key, value]) => `\`${key}\`${required.has(key) ? '' : '?'}: ${typeText(value)}`);
      return `| \`${type}\` | ${streamOf(type)} | ${EVENT_MEANINGS[type]} | ${fields.join('<br>')} |`;
    });
    return [`## ${title}`, '', '| Event | Stream | What it records | Data (fields and types) |', '|---|---|---|---|', ...rows, ''].join('\n');
  });
  return [
    '<!-- Generated by `npm run docs:generate` from the event schemas in src/domain/events/. Do not edit. -->',
    '',
    '# Event catalogue',
    '',
    'Every change is an event in one append-only log; `GET /admin/events` and `npm run export-events` read it in',
    'commit order. Stream names are part of the contract: `user-{app_user_id}` holds everything about one user.',
    'The store validates every append against the schema of its type, so the fields below are exactly what',
    `the log holds at schema version ${SCHEMA_VERSION}. Events are never rewritten: the service lifts an older version's data`,
    'to the current one when it reads it (src/application/upcasters.ts), but `GET /admin/events` and `npm run export-events`',
    'give each event as stored, with the version it was written under in `metadata.schema_version`. Events written by',
    'older versions of the service lack the fields added since:',
    '',
    ...olderVersionNotes().map(({ type, older }) => `- \`${type}\`: ${older}.`),
    '',
    'Every event also has metadata: `correlation_id` (the request id), `causation_id` (the request or event that',
    'caused it), `actor` (`client:<label>`, `secret:<label>`, `process:<name>`, or `webhook:<provider>` for a revenue',
    'notification received on `POST /webhooks/{provider}`), `schema_version`, and `operation_id` when the client sent one.',
    "A key's label is 12 hex digits of a slow hash of it, so that a reader of the log pays tens of milliseconds for each guess of a key tested against it;",
    'an operator finds which of its keys it was with',
    "`node -e \"console.log(require('crypto').scryptSync(process.argv[1], 'referral-rewards actor', 6).toString('hex'))\" KEY`.",
    'Events written before 2026-11-29 label a key by the first 12 hex digits of its SHA-256 instead.',
    'Times are ISO 8601 UTC with milliseconds. `[T]` is a list of `T`; `a \\| b` is either; `name?` is a field, at any',
    "depth, that some events of the type do not have (the type's description says which). A personal field",
    '(docs/privacy.md) of an erased user reads `{"erased": true}` in the log, whatever its type below (`UserErased`).',
    '',
    ...sections,
  ].join('\n');
}
