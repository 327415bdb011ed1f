import { z } from 'zod';
import {
  CUSTOMER_ELIGIBILITIES,
  DECIMAL_PRICE,
  OFFER_DURATIONS,
  OFFER_ELIGIBILITIES,
  OFFER_MODES,
  type StoreOfferCode,
  type StorePrice,
  type StoreSubscription,
  SUBSCRIPTION_PERIODS,
} from '../../domain/events/store-events.js';
import { attributesOf, IncludedResources, listDocumentSchema, MalformedDocumentError, parseDocument, relatedId, singleDocumentSchema } from './json-api.js';

/** App Store Connect documents → our offer code shape. Pure: no I/O. */

const offerCodeAttributes = z.object({
  name: z.string(),
  customerEligibilities: z.array(z.enum(CUSTOMER_ELIGIBILITIES)),
  offerEligibility: z.enum(OFFER_ELIGIBILITIES),
  duration: z.enum(OFFER_DURATIONS),
  offerMode: z.enum(OFFER_MODES),
  numberOfPeriods: z.number().int(),
});
const subscriptionAttributes = z.object({ name: z.string(), productId: z.string(), subscriptionPeriod: z.enum(SUBSCRIPTION_PERIODS) });
const territoryAttributes = z.object({ currency: z.string() });
const pricePointAttributes = z.object({ customerPrice: z.string().regex(DECIMAL_PRICE, 'must be a decimal string') });
/** `startDate` (YYYY-MM-DD) of a subscription price; null or absent: in effect from the start. */
const scheduledPriceAttributes = z.object({
  startDate: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/)
    .nullable()
    .optional(),
});

export interface OfferCodeHead {
  offerCode: Omit<StoreOfferCode, 'prices'>;
  subscription: Omit<StoreSubscription, 'prices'>;
}

/** GET /v1/subscriptionOfferCodes/{id}?include=subscription */
export function readOfferCodeDocument(json: unknown): OfferCodeHead {
  const document = parseDocument(singleDocumentSchema, json, 'subscription offer code document');
  const resource = document.data;
  if (resource.type !== 'subscriptionOfferCodes') throw new MalformedDocumentError(`expected subscriptionOfferCodes, got ${resource.type}`);
  const attributes = attributesOf(resource, offerCodeAttributes);
  const subscription = new IncludedResources(document.included).get(relatedId(resource, 'subscription'));
  const subscriptionFields = attributesOf(subscription, subscriptionAttributes);
  return {
    offerCode: {
      id: resource.id,
      name: attributes.name,
      customer_eligibilities: attributes.customerEligibilities,
      offer_eligibility: attributes.offerEligibility,
      duration: attributes.duration,
      offer_mode: attributes.offerMode,
      number_of_periods: attributes.numberOfPeriods,
    },
    subscription: {
      id: subscription.id,
      product_id: subscriptionFields.productId,
      name: subscriptionFields.name,
      subscription_period: subscriptionFields.subscriptionPeriod,
    },
  };
}

export interface ScheduledPrice extends StorePrice {
  /** null: in effect from the start. */
  startDate: string | null;
}

export interface PricesPage {
  prices: ScheduledPrice[];
  /** Absolute URL of the next page, null on the last one. */
  next: string | null;
}

/**
 * One page of GET /v1/subscriptionOfferCodes/{id}/prices or GET /v1/subscriptions/{id}/prices
 * with `include=territory,subscriptionPricePoint`: each price names its territory (whose
 * `currency` is included) and its price point (whose `customerPrice` is included).
 */
export function readPricesPage(json: unknown, expectedType: 'subscriptionOfferCodePrices' | 'subscriptionPrices'): PricesPage {
  const document = parseDocument(listDocumentSchema, json, `${expectedType} document`);
  const included = new IncludedResources(document.included);
  const prices = document.data.map((resource): ScheduledPrice => {
    if (resource.type !== expectedType) throw new MalformedDocumentError(`expected ${expectedType}, got ${resource.type}`);
    const territory = included.get(relatedId(resource, 'territory'));
    const pricePoint = included.get(relatedId(resource, 'subscriptionPricePoint'));
    return {
      territory: territory.id,
      currency: attributesOf(territory, territoryAttributes).currency,
      price: attributesOf(pricePoint, pricePointAttributes).customerPrice,
      startDate: attributesOf(resource, scheduledPriceAttributes).startDate ?? null,
    };
  });
  return { prices, next: document.links?.next ?? null };
}

/**
 * The price in effect on `today` (YYYY-MM-DD) per territory: the one with the latest start
 * on or before it. Territories whose prices all start later are left out. Sorted by territory.
 */
export function pricesInEffect(prices: ScheduledPrice[], today: string): StorePrice[] {
  const current = new Map<string, ScheduledPrice>();
  for (const price of prices) {
    if (price.startDate !== null && price.startDate > today) continue;
    const held = current.get(price.territory);
    if (!held || (held.startDate ?? '') < (price.startDate ?? '')) current.set(price.territory, price);
  }
  return [...current.values()]
    .sort((a, b) => (a.territory < b.territory ? -1 : a.territory > b.territory ? 1 : 0))
    .map(({ territory, price, currency }) => ({ territory, price, currency }));
}
