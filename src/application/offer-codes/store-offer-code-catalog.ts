import { inject, injectable } from 'tsyringe';
import { STORE_OFFER_CODES } from '../../../projections/store-offer-codes.js';
import type { StoreOfferCodeEntry } from '../../domain/events/store-events.js';
import type { ReadStore } from '../../ports/read-store.js';
import { TOKENS } from '../../ports/tokens.js';

type StoredEntry = StoreOfferCodeEntry & Record<string, unknown>;

/** Reads of the admin catalog of store offer codes (the `store_offer_codes` read model). */
@injectable()
export class StoreOfferCodeCatalog {
  constructor(@inject(TOKENS.ReadStore) private readonly readStore: ReadStore) {}

  get(offerCodeId: string): Promise<StoreOfferCodeEntry | null> {
    return this.readStore.get<StoredEntry>(STORE_OFFER_CODES, offerCodeId);
  }

  /** Every entry, by offer code id. */
  list(): Promise<StoreOfferCodeEntry[]> {
    return this.readStore.find<StoredEntry>(STORE_OFFER_CODES);
  }

  /** Whether an admin has put at least one entry in the catalog. */
  async hasEntries(): Promise<boolean> {
    return (await this.readStore.find<StoredEntry>(STORE_OFFER_CODES, { limit: 1 })).length > 0;
  }
}
