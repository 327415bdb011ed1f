import type { StoreOfferCodeEntry } from '../domain/events/store-events.js';

/** The store's own API (App Store Connect) as far as offer codes are concerned. */
export interface AppStoreConnect {
  /** false when no credentials are configured: nothing is ever fetched then. */
  readonly configured: boolean;
  /**
   * The offer code with its subscription and their current prices; null when the store has
   * no offer code with this id. Throws `AppStoreConnectError` when the store cannot answer.
   */
  fetchOfferCode(offerCodeId: string): Promise<StoreOfferCodeEntry | null>;
}

/** tsyringe token of the `AppStoreConnect` port. */
export const APP_STORE_CONNECT = Symbol('AppStoreConnect');

/**
 * `unauthorized`: the store rejected our credentials (401/403).
 * `request_failed`: anything else went wrong (5xx, timeout, network, unexpected answer).
 */
export type AppStoreFailure = 'unauthorized' | 'request_failed';

export class AppStoreConnectError extends Error {
  constructor(
    readonly failure: AppStoreFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'AppStoreConnectError';
  }
}

/** The port when no credentials are configured. */
export const appStoreNotConfigured: AppStoreConnect = {
  configured: false,
  fetchOfferCode: async () => null,
};
