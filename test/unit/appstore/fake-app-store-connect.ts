import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CryptoKey, decodeProtectedHeader, exportPKCS8, generateKeyPair, type JWTPayload, jwtVerify, type ProtectedHeaderParameters } from 'jose';

/**
 * A local stand-in for App Store Connect: answers the three calls the client makes with
 * JSON:API documents (prices with included territories and price points, paged with
 * `links.next` on Apple's host), checks the bearer token of every request, and can be told
 * to fail in each way the real one can.
 */

export const ISSUER_ID = '57246542-96fe-1a63-e053-0824d011072a';
export const KEY_ID = '2X9R4HXF34';
const APPLE_HOST = 'https://api.appstoreconnect.apple.com';

export interface FakePrice {
  territory: string;
  currency: string;
  customerPrice: string;
  /** Subscription prices only: YYYY-MM-DD or null. */
  startDate?: string | null;
}

export interface FakeOfferCode {
  id: string;
  attributes: Record<string, unknown>;
  subscription: { id: string; attributes: Record<string, unknown> };
  prices: FakePrice[];
  subscriptionPrices: FakePrice[];
}

export type Failure = 'unauthorized' | 'forbidden' | 'server_error' | 'hang' | 'not_json' | 'malformed';

export interface ReceivedRequest {
  path: string;
  query: URLSearchParams;
}

export interface VerifiedToken {
  header: ProtectedHeaderParameters;
  payload: JWTPayload;
}

export async function ascKeyPair(): Promise<{ privateKey: CryptoKey; publicKey: CryptoKey; pem: string }> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { privateKey, publicKey, pem: await exportPKCS8(privateKey) };
}

/** An offer code as App Store Connect describes it (the seed's example values). */
export function sampleOfferCode(id = '6501234567'): FakeOfferCode {
  return {
    id,
    attributes: {
      name: 'Three months at half price',
      customerEligibilities: ['NEW', 'EXPIRED'],
      offerEligibility: 'STACK_WITH_INTRO_OFFERS',
      duration: 'THREE_MONTHS',
      offerMode: 'PAY_AS_YOU_GO',
      numberOfPeriods: 3,
      totalNumberOfCodes: 500,
      active: true,
    },
    subscription: {
      id: '6470878936',
      attributes: {
        name: 'Premium yearly',
        productId: 'com.example.premium.yearly',
        subscriptionPeriod: 'ONE_YEAR',
        familySharable: false,
        state: 'APPROVED',
        groupLevel: 1,
      },
    },
    prices: [
      { territory: 'USA', currency: 'USD', customerPrice: '4.99' },
      { territory: 'DEU', currency: 'EUR', customerPrice: '4.99' },
      { territory: 'JPN', currency: 'JPY', customerPrice: '800' },
    ],
    subscriptionPrices: [
      { territory: 'USA', currency: 'USD', customerPrice: '39.99', startDate: null },
      { territory: 'USA', currency: 'USD', customerPrice: '49.99', startDate: '2020-01-01' },
      { territory: 'USA', currency: 'USD', customerPrice: '59.99', startDate: '2999-01-01' },
      { territory: 'DEU', currency: 'EUR', customerPrice: '44.99', startDate: null },
      { territory: 'JPN', currency: 'JPY', customerPrice: '6800', startDate: null },
    ],
  };
}

export class FakeAppStoreConnect {
  readonly offerCodes = new Map<string, FakeOfferCode>();
  readonly requests: ReceivedRequest[] = [];
  readonly verifiedTokens: VerifiedToken[] = [];
  readonly tokenProblems: string[] = [];
  /** How the next requests fail (null: they do not); `failOn` limits it to matching paths. */
  failure: Failure | null = null;
  failOn: RegExp | null = null;
  /** Replaces the answer of a matching path with this JSON (malformed documents). */
  override: { on: RegExp; body: unknown } | null = null;
  /** Prices per page, so paging is exercised. */
  pageSize = 2;
  /** Path prefix the fake is served under (a proxy in front of the store). */
  prefix = '';
  private server: Server | null = null;
  private baseUrl = '';

  constructor(
    private readonly publicKey: CryptoKey,
    private readonly issuerId = ISSUER_ID,
    private readonly keyId = KEY_ID,
  ) {}

  get url(): string {
    return this.baseUrl;
  }

  /** Requests whose path matches. */
  calls(path: RegExp): ReceivedRequest[] {
    return this.requests.filter((request) => path.test(request.path));
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.baseUrl;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    if (this.prefix !== '') {
      if (!url.pathname.startsWith(`${this.prefix}/`)) return this.error(res, 404, 'NOT_FOUND');
      url.pathname = url.pathname.slice(this.prefix.length);
    }
    this.requests.push({ path: url.pathname, query: url.searchParams });
    if (!(await this.authorized(req))) return this.error(res, 401, 'NOT_AUTHORIZED');
    if (this.failure && (!this.failOn || this.failOn.test(url.pathname))) {
      switch (this.failure) {
        case 'hang':
          return; // never answers
        case 'unauthorized':
          return this.error(res, 401, 'NOT_AUTHORIZED');
        case 'forbidden':
          return this.error(res, 403, 'FORBIDDEN_ERROR');
        case 'server_error':
          return this.error(res, 503, 'SERVICE_UNAVAILABLE');
        case 'not_json':
          res.writeHead(200, { 'content-type': 'application/json' });
          return void res.end('{"data": [ this is not json');
        case 'malformed':
          return this.json(res, 200, { data: { type: 'subscriptionOfferCodes', id: 'x', attributes: { name: 42 } } });
      }
    }
    if (this.override?.on.test(url.pathname)) return this.json(res, 200, this.override.body);

    const offerCodeMatch = /^\/v1\/subscriptionOfferCodes\/([^/]+)$/.exec(url.pathname);
    const offerPricesMatch = /^\/v1\/subscriptionOfferCodes\/([^/]+)\/prices$/.exec(url.pathname);
    const subscriptionPricesMatch = /^\/v1\/subscriptions\/([^/]+)\/prices$/.exec(url.pathname);
    if (offerCodeMatch) {
      const offerCode = this.offerCodes.get(decodeURIComponent(offerCodeMatch[1]!));
      if (!offerCode) return this.error(res, 404, 'NOT_FOUND');
      return this.json(res, 200, offerCodeDocument(offerCode, url.searchParams.get('include')?.split(',') ?? []));
    }
    if (offerPricesMatch) {
      const offerCode = this.offerCodes.get(decodeURIComponent(offerPricesMatch[1]!));
      if (!offerCode) return this.error(res, 404, 'NOT_FOUND');
      return this.json(res, 200, this.pricesPage(url, 'subscriptionOfferCodePrices', offerCode.prices));
    }
    if (subscriptionPricesMatch) {
      const subscriptionId = decodeURIComponent(subscriptionPricesMatch[1]!);
      const offerCode = [...this.offerCodes.values()].find((candidate) => candidate.subscription.id === subscriptionId);
      if (!offerCode) return this.error(res, 404, 'NOT_FOUND');
      return this.json(res, 200, this.pricesPage(url, 'subscriptionPrices', offerCode.subscriptionPrices));
    }
    return this.error(res, 404, 'NOT_FOUND');
  }

  /** Verifies the ES256 token as App Store Connect would; records what it saw. */
  private async authorized(req: IncomingMessage): Promise<boolean> {
    const match = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    if (!match) {
      this.tokenProblems.push('no bearer token');
      return false;
    }
    const token = match[1]!;
    try {
      const header = decodeProtectedHeader(token);
      if (header.alg !== 'ES256') throw new Error(`alg ${String(header.alg)}`);
      if (header.kid !== this.keyId) throw new Error(`kid ${String(header.kid)}`);
      if (header.typ !== 'JWT') throw new Error(`typ ${String(header.typ)}`);
      const { payload } = await jwtVerify(token, this.publicKey, {
        algorithms: ['ES256'],
        issuer: this.issuerId,
        audience: 'appstoreconnect-v1',
        requiredClaims: ['iat', 'exp'],
      });
      if (payload.exp! - payload.iat! > 20 * 60) throw new Error('token lives longer than 20 minutes');
      this.verifiedTokens.push({ header, payload });
      return true;
    } catch (error) {
      this.tokenProblems.push(error instanceof Error ? error.message : String(error));
      return false;
    }
  }

  private pricesPage(url: URL, type: string, prices: FakePrice[]) {
    const offset = Number(url.searchParams.get('cursor') ?? '0');
    const page = prices.slice(offset, offset + this.pageSize);
    const included = new Map<string, object>();
    const data = page.map((price, index) => {
      const pricePointId = `pp-${price.territory}-${price.customerPrice}`;
      included.set(`territories/${price.territory}`, { type: 'territories', id: price.territory, attributes: { currency: price.currency } });
      included.set(`subscriptionPricePoints/${pricePointId}`, {
        type: 'subscriptionPricePoints',
        id: pricePointId,
        attributes: { customerPrice: price.customerPrice },
      });
      return {
        type,
        id: `${type}-${offset + index}`,
        ...(type === 'subscriptionPrices' ? { attributes: { startDate: price.startDate ?? null, preserved: false } } : {}),
        relationships: {
          territory: { data: { type: 'territories', id: price.territory } },
          subscriptionPricePoint: { data: { type: 'subscriptionPricePoints', id: pricePointId } },
        },
      };
    });
    const nextOffset = offset + this.pageSize;
    const next = new URL(`${APPLE_HOST}${url.pathname}${url.search}`);
    next.searchParams.set('cursor', String(nextOffset));
    return {
      data,
      included: [...included.values()],
      links: { self: `${APPLE_HOST}${url.pathname}${url.search}`, ...(nextOffset < prices.length ? { next: next.toString() } : {}) },
      meta: { paging: { total: prices.length, limit: this.pageSize } },
    };
  }

  private json(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  private error(res: ServerResponse, status: number, code: string): void {
    this.json(res, status, { errors: [{ id: 'e-1', status: String(status), code, title: code, detail: `${code} (fake)` }] });
  }
}

export function offerCodeDocument(offerCode: FakeOfferCode, include: string[]) {
  return {
    data: {
      type: 'subscriptionOfferCodes',
      id: offerCode.id,
      attributes: offerCode.attributes,
      relationships: {
        subscription: { data: { type: 'subscriptions', id: offerCode.subscription.id } },
        prices: { links: { related: `${APPLE_HOST}/v1/subscriptionOfferCodes/${offerCode.id}/prices` } },
      },
    },
    included: include.includes('subscription') ? [{ type: 'subscriptions', ...offerCode.subscription }] : [],
    links: { self: `${APPLE_HOST}/v1/subscriptionOfferCodes/${offerCode.id}` },
  };
}
