import { z } from 'zod';

/**
 * Events of `offer-code-{id}`: the admin catalog of store (App Store) offer codes that
 * `GET /store/offer-codes/{id}` serves. Shapes are the seed's "Store offer code result".
 */

export const CUSTOMER_ELIGIBILITIES = ['NEW', 'EXISTING', 'EXPIRED'] as const;
export const OFFER_ELIGIBILITIES = ['STACK_WITH_INTRO_OFFERS', 'REPLACE_INTRO_OFFERS'] as const;
export const OFFER_DURATIONS = ['THREE_DAYS', 'ONE_WEEK', 'TWO_WEEKS', 'ONE_MONTH', 'TWO_MONTHS', 'THREE_MONTHS', 'SIX_MONTHS', 'ONE_YEAR'] as const;
export const OFFER_MODES = ['PAY_AS_YOU_GO', 'PAY_UP_FRONT', 'FREE_TRIAL'] as const;
export const SUBSCRIPTION_PERIODS = ['ONE_WEEK', 'ONE_MONTH', 'TWO_MONTHS', 'THREE_MONTHS', 'SIX_MONTHS', 'ONE_YEAR'] as const;

/** A non-negative decimal amount as a string ("0", "4.99", "1200"), as the store gives it. */
export const DECIMAL_PRICE = /^(0|[1-9][0-9]{0,11})(\.[0-9]{1,6})?$/;

const storePriceSchema = z.object({
  territory: z.string(),
  price: z.string().regex(DECIMAL_PRICE),
  currency: z.string(),
});
export type StorePrice = z.infer<typeof storePriceSchema>;

const storeOfferCodeSchema = z.object({
  id: z.string(),
  name: z.string(),
  customer_eligibilities: z.array(z.enum(CUSTOMER_ELIGIBILITIES)),
  offer_eligibility: z.enum(OFFER_ELIGIBILITIES),
  duration: z.enum(OFFER_DURATIONS),
  offer_mode: z.enum(OFFER_MODES),
  number_of_periods: z.number().int(),
  prices: z.array(storePriceSchema),
});
export type StoreOfferCode = z.infer<typeof storeOfferCodeSchema>;

const storeSubscriptionSchema = z.object({
  id: z.string(),
  product_id: z.string(),
  name: z.string(),
  subscription_period: z.enum(SUBSCRIPTION_PERIODS),
  prices: z.array(storePriceSchema),
});
export type StoreSubscription = z.infer<typeof storeSubscriptionSchema>;

/** One offer code with its subscription: what the catalog stores and the GET returns. */
const storeOfferCodeEntrySchema = z.object({ offer_code: storeOfferCodeSchema, subscription: storeSubscriptionSchema });
export type StoreOfferCodeEntry = z.infer<typeof storeOfferCodeEntrySchema>;

export const storeEvents = {
  StoreOfferCodeCreated: storeOfferCodeEntrySchema,
  /** Carries the whole new entry, so the latest event alone is the current state. */
  StoreOfferCodeUpdated: storeOfferCodeEntrySchema,
};
