import { inject, injectable } from 'tsyringe';
import type { Config } from '../../config.js';
import type { StoreOfferCodeEntry } from '../../domain/events/store-events.js';
import { APP_STORE_CONNECT, type AppStoreConnect, AppStoreConnectError } from '../../ports/app-store.js';
import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import { TOKENS } from '../../ports/tokens.js';
import { StoreOfferCodeCatalog } from './store-offer-code-catalog.js';
import { TtlCache } from './ttl-cache.js';

/** `unverifiable`: App Store Connect would have to answer, and it could not. */
export type OfferCodeKnowledge = 'known' | 'unknown' | 'unverifiable';

/**
 * Where offer codes come from (SPEC §8): the admin catalog first; when App Store Connect is
 * configured and the catalog lacks the id, App Store Connect — its answers cached for
 * ASC_CACHE_TTL_S, and concurrent look-ups of one id sharing one upstream fetch.
 * Register it as a singleton: the cache lives in the instance.
 */
@injectable()
export class OfferCodeLookup {
  private readonly cache: TtlCache<StoreOfferCodeEntry>;
  private readonly inFlight = new Map<string, Promise<StoreOfferCodeEntry | null>>();

  constructor(
    @inject(StoreOfferCodeCatalog) private readonly catalog: StoreOfferCodeCatalog,
    @inject(APP_STORE_CONNECT) private readonly appStore: AppStoreConnect,
    @inject(TOKENS.Clock) clock: Clock,
    @inject(TOKENS.Config) config: Config,
    @inject(TOKENS.Logger) private readonly logger: Logger,
  ) {
    this.cache = new TtlCache(config.ASC_CACHE_TTL_S * 1000, clock);
  }

  /**
   * The offer code, or null when neither the catalog nor App Store Connect has it.
   * Throws `AppStoreConnectError` when App Store Connect had to answer and could not.
   */
  async find(offerCodeId: string): Promise<StoreOfferCodeEntry | null> {
    const fromCatalog = await this.catalog.get(offerCodeId);
    if (fromCatalog) return fromCatalog;
    if (!this.appStore.configured) return null;
    return this.cache.get(offerCodeId) ?? this.fetchOnce(offerCodeId);
  }

  /** Whether a catalog entry exists or App Store Connect is configured. */
  async isConfigured(): Promise<boolean> {
    return this.appStore.configured || (await this.catalog.hasEntries());
  }

  /** What the catalog and App Store Connect say about the id; upstream failures are `unverifiable`. */
  async knowledgeOf(offerCodeId: string): Promise<OfferCodeKnowledge> {
    try {
      return (await this.find(offerCodeId)) ? 'known' : 'unknown';
    } catch (error) {
      if (error instanceof AppStoreConnectError) return 'unverifiable';
      throw error;
    }
  }

  /**
   * false only when the id is known to be unknown to both the catalog and App Store Connect;
   * when App Store Connect cannot answer, the id gets the benefit of the doubt (true), so a
   * store outage never makes a valid reference look wrong. Pair with `isConfigured()`.
   */
  async isKnown(offerCodeId: string): Promise<boolean> {
    return (await this.knowledgeOf(offerCodeId)) !== 'unknown';
  }

  private fetchOnce(offerCodeId: string): Promise<StoreOfferCodeEntry | null> {
    let pending = this.inFlight.get(offerCodeId);
    if (!pending) {
      pending = this.fetchFromAppStore(offerCodeId).finally(() => this.inFlight.delete(offerCodeId));
      this.inFlight.set(offerCodeId, pending);
    }
    return pending;
  }

  private async fetchFromAppStore(offerCodeId: string): Promise<StoreOfferCodeEntry | null> {
    try {
      const entry = await this.appStore.fetchOfferCode(offerCodeId);
      // Only answers are cached: an offer code created in the store shows up on the next look-up.
      if (entry) this.cache.set(offerCodeId, entry);
      return entry;
    } catch (error) {
      if (error instanceof AppStoreConnectError) {
        this.logger.warn({ offerCodeId, failure: error.failure, err: error }, 'App Store Connect look-up failed');
      }
      throw error;
    }
  }
}
