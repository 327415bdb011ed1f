import type { PostOutcome } from '../application/webhooks/http-post.js';

/** A partner that holds entitlements for app users (RevenueCat promotional entitlements). */
export interface PartnerEntitlements {
  readonly name: string;
  /** Grants `entitlementId` until `endsAt` (null: lifetime). */
  grant(appUserId: string, entitlementId: string, endsAt: string | null): Promise<PostOutcome>;
  /** Revokes the promotional grants of `entitlementId`. */
  revoke(appUserId: string, entitlementId: string): Promise<PostOutcome>;
}
