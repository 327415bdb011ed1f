import {
  CUSTOMER_ELIGIBILITIES,
  DECIMAL_PRICE,
  OFFER_DURATIONS,
  OFFER_ELIGIBILITIES,
  OFFER_MODES,
  SUBSCRIPTION_PERIODS,
} from '../../domain/events/store-events.js';
import { pathId, text } from './common.js';
import { z } from './zod-openapi.js';

/** An offer code id (App Store Connect's, or any id an admin gives a catalog entry), read by its path. */
export const offerCodeId = pathId(128).openapi({ example: '6738281234' });

const customerEligibility = z.enum(CUSTOMER_ELIGIBILITIES).openapi('StoreCustomerEligibility');
const offerEligibility = z.enum(OFFER_ELIGIBILITIES).openapi('StoreOfferEligibility');
const offerDuration = z.enum(OFFER_DURATIONS).openapi('StoreOfferDuration');
const offerMode = z.enum(OFFER_MODES).openapi('StoreOfferMode');
const subscriptionPeriod = z.enum(SUBSCRIPTION_PERIODS).openapi('StoreSubscriptionPeriod');

const priceBody = z.object({
  territory: z.string().regex(/^[A-Z]{2,3}$/, 'must be a territory code (2 or 3 upper-case letters, e.g. USA)'),
  price: z.string().regex(DECIMAL_PRICE, 'must be a decimal string such as "4.99"').openapi({ example: '4.99' }),
  currency: z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 currency code (e.g. USD)'),
});

/** Prices with at most one per territory (a repeat is named by its pointer). */
const pricesBody = z
  .array(priceBody)
  .max(500)
  .superRefine((prices, ctx) => {
    const seen = new Set<string>();
    prices.forEach((price, index) => {
      if (seen.has(price.territory)) {
        ctx.addIssue({ code: 'custom', path: [index, 'territory'], message: `territory ${price.territory} is listed twice` });
      }
      seen.add(price.territory);
    });
  });

const eligibilitiesBody = z
  .array(customerEligibility)
  .min(1)
  .superRefine((values, ctx) => {
    values.forEach((value, index) => {
      if (values.indexOf(value) !== index) ctx.addIssue({ code: 'custom', path: [index], message: `${value} is listed twice` });
    });
  })
  .openapi({ uniqueItems: true });

export const storeOfferCodeBody = z
  .object({
    offer_code: z.object({
      /** Optional: the path names the offer code; when given it must be the same id. */
      id: offerCodeId.optional(),
      name: text(200),
      customer_eligibilities: eligibilitiesBody,
      offer_eligibility: offerEligibility,
      duration: offerDuration,
      offer_mode: offerMode,
      number_of_periods: z.number().int().min(1).max(1_000),
      prices: pricesBody,
    }),
    subscription: z.object({
      id: text(128),
      product_id: text(255),
      name: text(200),
      subscription_period: subscriptionPeriod,
      prices: pricesBody,
    }),
  })
  .openapi('StoreOfferCodeRequest');
export type StoreOfferCodeBody = z.infer<typeof storeOfferCodeBody>;

const priceOut = z.object({ territory: z.string(), price: z.string().openapi({ example: '4.99' }), currency: z.string() }).strict();

const storeOfferCodeOut = z
  .object({
    offer_code: z
      .object({
        id: z.string(),
        name: z.string(),
        customer_eligibilities: z.array(customerEligibility),
        offer_eligibility: offerEligibility,
        duration: offerDuration,
        offer_mode: offerMode,
        number_of_periods: z.number().int(),
        prices: z.array(priceOut),
      })
      .strict(),
    subscription: z
      .object({
        id: z.string(),
        product_id: z.string(),
        name: z.string(),
        subscription_period: subscriptionPeriod,
        prices: z.array(priceOut),
      })
      .strict(),
  })
  .strict()
  .openapi('StoreOfferCode');

export const storeOfferCodeResponse = z.object({ data: storeOfferCodeOut }).strict();
export const storeOfferCodesResponse = z.object({ data: z.object({ offer_codes: z.array(storeOfferCodeOut) }).strict() }).strict();
