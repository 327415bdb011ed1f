import type { Projection } from './projection.js';

export const STORE_OFFER_CODES = 'store_offer_codes';

/** The admin catalog of store offer codes: one `{offer_code, subscription}` document per offer code id. */
export const storeOfferCodesProjection: Projection = {
  name: 'store_offer_codes',
  version: 1,
  collections: [{ name: STORE_OFFER_CODES, indexes: [] }],
  eventTypes: ['StoreOfferCodeCreated', 'StoreOfferCodeUpdated'],
  targets: (event) =>
    event.type === 'StoreOfferCodeCreated' || event.type === 'StoreOfferCodeUpdated' ? [{ collection: STORE_OFFER_CODES, id: event.data.offer_code.id }] : [],
  evolve: (_ref, doc, event) => {
    if (event.type === 'StoreOfferCodeCreated' || event.type === 'StoreOfferCodeUpdated') {
      return { offer_code: event.data.offer_code, subscription: event.data.subscription };
    }
    return doc;
  },
};
