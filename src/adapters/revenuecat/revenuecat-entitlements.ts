import { postWithTimeout, type PostOutcome } from '../../application/webhooks/http-post.js';
import type { PartnerEntitlements } from '../../ports/partner-entitlements.js';

/**
 * RevenueCat REST API v1 promotional entitlements:
 * `POST /v1/subscribers/{app_user_id}/entitlements/{entitlement_id}/promotional` with
 * `end_time_ms` (or `duration: "lifetime"` for a reward that never ends), and
 * `POST …/revoke_promotionals`; authenticated with the secret API key as a Bearer token.
 */
export class RevenueCatEntitlements implements PartnerEntitlements {
  readonly name = 'revenuecat';

  constructor(
    private readonly secretApiKey: string,
    private readonly baseUrl: string,
    private readonly timeoutMs: number,
  ) {}

  private url(appUserId: string, entitlementId: string, action: 'promotional' | 'revoke_promotionals'): string {
    const base = this.baseUrl.replace(/\/+$/, '');
    return `${base}/v1/subscribers/${encodeURIComponent(appUserId)}/entitlements/${encodeURIComponent(entitlementId)}/${action}`;
  }

  private headers(): Record<string, string> {
    return { authorization: `Bearer ${this.secretApiKey}`, 'content-type': 'application/json', accept: 'application/json' };
  }

  grant(appUserId: string, entitlementId: string, endsAt: string | null): Promise<PostOutcome> {
    const body = endsAt === null ? { duration: 'lifetime' } : { end_time_ms: Date.parse(endsAt) };
    return this.post(appUserId, entitlementId, 'promotional', JSON.stringify(body));
  }

  revoke(appUserId: string, entitlementId: string): Promise<PostOutcome> {
    return this.post(appUserId, entitlementId, 'revoke_promotionals', undefined);
  }

  private async post(appUserId: string, entitlementId: string, action: 'promotional' | 'revoke_promotionals', body: string | undefined): Promise<PostOutcome> {
    // A dot segment is resolved away by the URL (even encoded), sending the call, with the secret
    // key, to another path of RevenueCat's: never sent. The admin API refuses such an entitlement
    // id; one recorded before it did, or an app user id of an older log, fails here.
    if ([appUserId, entitlementId].some((segment) => segment === '.' || segment === '..')) {
      return { statusCode: null, latencyMs: 0, retryAfter: null, error: 'not sent: "." or ".." cannot be named in a URL path' };
    }
    return postWithTimeout(this.url(appUserId, entitlementId, action), this.headers(), body, this.timeoutMs);
  }
}
