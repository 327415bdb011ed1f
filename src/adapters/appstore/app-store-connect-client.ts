import type { StoreOfferCodeEntry } from '../../domain/events/store-events.js';
import { type AppStoreConnect, AppStoreConnectError } from '../../ports/app-store.js';
import type { Clock } from '../../ports/clock.js';
import type { AscTokenSigner } from './asc-token.js';
import { MalformedDocumentError } from './json-api.js';
import { pricesInEffect, readOfferCodeDocument, readPricesPage, type ScheduledPrice } from './offer-code-documents.js';

/** Largest page App Store Connect serves; pages beyond MAX_PAGES mean something is off. */
const PAGE_LIMIT = '200';
const MAX_PAGES = 25;

export interface AppStoreConnectClientOptions {
  /** API host, e.g. https://api.appstoreconnect.apple.com (ASC_BASE_URL); may carry a path prefix. */
  baseUrl: string;
  /** Each upstream call is abandoned after this long (ASC_TIMEOUT_MS). */
  timeoutMs: number;
  signer: AscTokenSigner;
  /** Decides which scheduled subscription prices are in effect. */
  clock: Clock;
}

const NOT_FOUND = Symbol('not found');

/**
 * Fetches a subscription offer code with App Store Connect's API, in three calls:
 * the offer code with its subscription, the offer code's prices, the subscription's prices
 * (prices with their territory and price point included, every page followed).
 */
export class AppStoreConnectClient implements AppStoreConnect {
  readonly configured = true;
  private readonly base: URL;

  constructor(private readonly options: AppStoreConnectClientOptions) {
    this.base = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
  }

  async fetchOfferCode(offerCodeId: string): Promise<StoreOfferCodeEntry | null> {
    // Encoded, "." and ".." stay dot segments, which a URL resolves to another path: no offer code has them.
    if (offerCodeId === '.' || offerCodeId === '..') return null;
    const id = encodeURIComponent(offerCodeId);
    const head = await this.get(this.url(`v1/subscriptionOfferCodes/${id}`, { include: 'subscription' }), 'the offer code');
    if (head === NOT_FOUND) return null;
    const { offerCode, subscription } = this.read(() => readOfferCodeDocument(head));
    const priceQuery = {
      include: 'territory,subscriptionPricePoint',
      'fields[territories]': 'currency',
      'fields[subscriptionPricePoints]': 'customerPrice',
      limit: PAGE_LIMIT,
    };
    const [offerPrices, subscriptionPrices] = await Promise.all([
      this.allPrices(this.url(`v1/subscriptionOfferCodes/${id}/prices`, priceQuery), 'subscriptionOfferCodePrices'),
      this.allPrices(this.url(`v1/subscriptions/${encodeURIComponent(subscription.id)}/prices`, priceQuery), 'subscriptionPrices'),
    ]);
    const today = this.options.clock.now().toISOString().slice(0, 10);
    return {
      offer_code: { ...offerCode, prices: pricesInEffect(offerPrices, today) },
      subscription: { ...subscription, prices: pricesInEffect(subscriptionPrices, today) },
    };
  }

  private async allPrices(first: URL, type: 'subscriptionOfferCodePrices' | 'subscriptionPrices'): Promise<ScheduledPrice[]> {
    const prices: ScheduledPrice[] = [];
    let next: URL | null = first;
    for (let page = 1; next !== null; page += 1) {
      if (page > MAX_PAGES) throw new AppStoreConnectError('request_failed', `App Store Connect listed more than ${MAX_PAGES} pages of ${type}`);
      const json = await this.get(next, type);
      if (json === NOT_FOUND) throw new AppStoreConnectError('request_failed', `App Store Connect found no ${type} list at ${next.pathname}`);
      const read = this.read(() => readPricesPage(json, type));
      prices.push(...read.prices);
      next = read.next === null ? null : this.onConfiguredHost(read.next);
    }
    return prices;
  }

  private url(path: string, query: Record<string, string>): URL {
    const url = new URL(path, this.base);
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
    return url;
  }

  /** `links.next` names Apple's host; behind ASC_BASE_URL (a proxy, a test) go there instead. */
  private onConfiguredHost(link: string): URL {
    let next: URL;
    try {
      next = new URL(link, this.base);
    } catch {
      throw new AppStoreConnectError('request_failed', 'App Store Connect answered with an invalid next-page link');
    }
    if (next.origin === this.base.origin) return next;
    return new URL(`${this.base.pathname.replace(/\/$/, '')}${next.pathname}${next.search}`, this.base.origin);
  }

  private read<T>(map: () => T): T {
    try {
      return map();
    } catch (error) {
      if (error instanceof MalformedDocumentError) {
        throw new AppStoreConnectError('request_failed', `App Store Connect answered with an unexpected document (${error.message})`, { cause: error });
      }
      throw error;
    }
  }

  /** One authenticated GET: the parsed JSON body, or NOT_FOUND on 404. */
  private async get(url: URL, what: string): Promise<unknown> {
    const token = await this.options.signer.token();
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, {
        headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
      throw new AppStoreConnectError(
        'request_failed',
        timedOut ? `App Store Connect did not answer within ${this.options.timeoutMs} ms (${what})` : `App Store Connect could not be reached (${what})`,
        { cause: error },
      );
    }
    if (response.status === 401 || response.status === 403) {
      this.options.signer.discard();
      throw new AppStoreConnectError('unauthorized', `App Store Connect rejected our credentials (${response.status})`);
    }
    if (response.status === 404) return NOT_FOUND;
    if (!response.ok) throw new AppStoreConnectError('request_failed', `App Store Connect answered ${response.status} (${what})`);
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw new AppStoreConnectError('request_failed', `App Store Connect answered with a body that is not JSON (${what})`, { cause: error });
    }
  }
}
