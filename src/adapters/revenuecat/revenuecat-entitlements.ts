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
    return postWithTimeout(this.url(appUserId, entitlementId, 'promotional'), this.headers(), JSON.stringify(body), this.timeoutMs);
  }

  revoke(appUserId: string, entitlementId: string): Promise<PostOutcome> {
    return postWithTimeout(this.url(appUserId, entitlementId, 'revoke_promotionals'), this.headers(), undefined, this.timeoutMs);
  }
}
