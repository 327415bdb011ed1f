import type { CodeType } from '../../domain/events/code-events.js';
import { REWARD_KINDS, type RewardKind } from '../../domain/rewards/reward-kinds.js';

/**
 * The WinWinKit wire format (SPEC §15): the one place where the names of the compatible surface
 * are mapped to the service's, in both directions. The mount serves the native handlers; requests
 * pass through `upsertUserFromWire` (the only request with a renamed field), answers through
 * `dataToWire` / `codeToWire`. The mapping is structural (only the keys of the six kind arrays
 * and the user's customer id are renamed), so free-form `metadata` is never renamed; a null one
 * (none given) is `{}` on the wire, as the JavaScript SDK's types (0.12) require an object.
 */
export const WINWINKIT_MOUNT = '/compat/winwinkit';

/** Reward-kind keys: native → wire (three keep their names). */
export const KIND_ON_WIRE = {
  basic: 'basic',
  credit: 'credit',
  offer_code: 'offer_code',
  store_promo_code: 'googleplay_promo_code',
  partner_entitlement: 'revenuecat_entitlement',
  partner_offering: 'revenuecat_offering',
} as const satisfies Record<RewardKind, string>;
export type WireKind = (typeof KIND_ON_WIRE)[RewardKind];

/** The user's payment customer id: native → wire. */
export const CUSTOMER_ID = { native: 'payment_customer_id', wire: 'stripe_customer_id' } as const;

/** The SDKs' closed enum of affiliate platforms: others are left out on the wire. */
export const AFFILIATE_PLATFORMS = ['instagram', 'tiktok', 'youtube', 'twitter', 'website'] as const;

type Json = Record<string, unknown>;

/** The same object with `from` renamed to `to`, in place (key order kept). */
function renameKey(object: Json, from: string, to: string): Json {
  return Object.fromEntries(Object.entries(object).map(([key, value]) => [key === from ? to : key, value]));
}

/** POST /users body: `stripe_customer_id` is the native `payment_customer_id` (a native name sent here is ignored). */
export function upsertUserFromWire<B extends Json>(body: B): Json {
  const { [CUSTOMER_ID.wire]: customer, [CUSTOMER_ID.native]: _native, ...rest } = body;
  return customer === undefined ? rest : { ...rest, [CUSTOMER_ID.native]: customer };
}

/** A user, program or reward definition with its metadata an object: `{}` for none. */
function withMetadataObject(object: Json): Json {
  return object.metadata === null ? { ...object, metadata: {} } : object;
}

/** An entry whose reward definition has its metadata an object. */
function entryDefinitionToWire(item: Json): Json {
  return item.reward ? { ...item, reward: withMetadataObject(item.reward as Json) } : item;
}

/** A six-array object (rewards active/expired, rewards_granted, program sender/receiver, code rewards) with wire kind keys. */
export function kindsToWire(byKind: Json, entry: (kind: RewardKind, item: Json) => Json = (_kind, item) => item): Json {
  return Object.fromEntries(
    REWARD_KINDS.map((kind) => [KIND_ON_WIRE[kind], ((byKind[kind] ?? []) as Json[]).map((item) => entry(kind, entryDefinitionToWire(item)))]),
  );
}

/** An active entry: an offer code's value always carries a `link` string. */
function activeEntryToWire(kind: RewardKind, entry: Json): Json {
  const value = entry.value as Json | null | undefined;
  if (kind !== 'offer_code' || !value) return entry;
  return { ...entry, value: { value: value.value, link: typeof value.link === 'string' ? value.link : '', expires_at: value.expires_at } };
}

function programToWire(program: Json | null): Json | null {
  if (program === null) return null;
  const rewards = program.rewards as { sender: Json; receiver: Json };
  return { ...withMetadataObject(program), rewards: { sender: kindsToWire(rewards.sender), receiver: kindsToWire(rewards.receiver) } };
}

function userToWire(user: Json): Json {
  const rewards = user.rewards as { active: Json; expired: Json };
  return {
    ...renameKey(withMetadataObject(user), CUSTOMER_ID.native, CUSTOMER_ID.wire),
    rewards: { active: kindsToWire(rewards.active, activeEntryToWire), expired: kindsToWire(rewards.expired) },
    referral_program: programToWire(user.referral_program as Json | null),
  };
}

/** The `data` of a native answer of the user operations (user, rewards_granted, withdraw_result, affiliate). */
export function dataToWire(data: Json): Json {
  const wire: Json = { ...data };
  if (data.user) wire.user = userToWire(data.user as Json);
  if (data.rewards_granted) wire.rewards_granted = kindsToWire(data.rewards_granted as Json, activeEntryToWire);
  return wire;
}

/** What the code's owner is, by type (SPEC §15): the wire `entity` of `GET /codes/{code}`. */
export interface CodeOwner {
  type: CodeType;
  /** The referrer (referral codes). */
  app_user_id: string | null;
  /** The promo code's claim limit (promo codes). */
  limit: number;
  /** The affiliate (affiliate codes). */
  name: string;
  logo_url: string | null;
  platforms: { type: string; handle: string; verified: boolean }[];
}

function codeEntityToWire(owner: CodeOwner): Json {
  switch (owner.type) {
    case 'referral':
      return { app_user_id: owner.app_user_id };
    case 'promo':
      return { limit: owner.limit };
    case 'affiliate':
      return {
        name: owner.name,
        logo_url: owner.logo_url,
        platforms: owner.platforms.filter((platform) => (AFFILIATE_PLATFORMS as readonly string[]).includes(platform.type)),
      };
  }
}

/** `GET /codes/{code}` data: the native answer with wire kind keys and the per-type entity. */
export function codeToWire(data: Json, owner: CodeOwner): Json {
  return { ...data, entity: codeEntityToWire(owner), rewards: kindsToWire(data.rewards as Json) };
}
