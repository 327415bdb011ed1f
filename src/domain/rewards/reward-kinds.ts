export const REWARD_KINDS = ['basic', 'credit', 'offer_code', 'store_promo_code', 'partner_entitlement', 'partner_offering'] as const;

export type RewardKind = (typeof REWARD_KINDS)[number];

/** Kinds whose sender activation carries a `limit` and can be granted repeatedly. */
export const REPEATABLE_SENDER_KINDS: readonly RewardKind[] = ['credit', 'offer_code', 'store_promo_code'];

/** Receiver rewards of these kinds can only be granted on claim. */
export const CLAIM_ONLY_RECEIVER_KINDS: readonly RewardKind[] = ['offer_code', 'store_promo_code', 'partner_offering'];

/** Kinds whose entries receive a one-time code from the reward's pool. */
export const POOLED_KINDS: readonly RewardKind[] = ['offer_code', 'store_promo_code'];

/** Kinds that are not stacked: a grant while one is active adds nothing. */
export const SINGLETON_KINDS: readonly RewardKind[] = ['basic', 'partner_entitlement', 'partner_offering'];

/** An object with one array per reward kind, all present. */
export type ByKind<T> = Record<RewardKind, T[]>;

export function emptyByKind<T>(): ByKind<T> {
  return {
    basic: [],
    credit: [],
    offer_code: [],
    store_promo_code: [],
    partner_entitlement: [],
    partner_offering: [],
  };
}
