import { type Environment, SignedDataVerifier, VerificationException, VerificationStatus } from '@apple/app-store-server-library';
import {
  currencyCode,
  type InboundRequest,
  inRange,
  isoFromMillis,
  type NotificationVerifier,
  parseJsonBody,
  WebhookMalformedError,
  WebhookUnauthorizedError,
} from '../../application/revenue/inbound-request.js';
import { currencyDigits } from '../../domain/revenue/currency-digits.js';
import type { RevenueKind, RevenueNotification } from '../../domain/revenue/revenue-notification.js';
import { z } from 'zod';
import { derCertificate } from './certificate-file.js';

/** Where a field of the signed notification or its transaction is, as a 400 names it: inside the JWS. */
const SIGNED = '/signedPayload';

export interface AppStoreSettings {
  rootCertificatePaths: string[];
  bundleId: string;
  appAppleId: number | null;
  environment: 'Production' | 'Sandbox' | 'Xcode' | 'LocalTesting';
  onlineChecks: boolean;
}

/** App Store Server Notifications V2 → what they mean for revenue. */
function kindOf(type: string): RevenueKind {
  switch (type) {
    case 'SUBSCRIBED':
    case 'ONE_TIME_CHARGE':
      return 'purchase';
    case 'DID_RENEW':
      return 'renewal';
    case 'REFUND':
    case 'REVOKE':
      return 'refund';
    case 'EXPIRED':
    case 'GRACE_PERIOD_EXPIRED':
      return 'expiry';
    default:
      return 'other';
  }
}

const REJECTED_IDENTITY = new Set<number>([VerificationStatus.INVALID_APP_IDENTIFIER, VerificationStatus.INVALID_ENVIRONMENT]);

/**
 * Apple's verifier, plus the signature check alone. The library checks a payload's fields before
 * its signature and answers FAILURE for fields it refuses (a price that is not a number), so a
 * payload signed by the App Store but malformed would read as a bad signature (401): SPEC §11
 * wants 400 for a payload that verifies but is malformed.
 */
class AppleVerifier extends SignedDataVerifier {
  /** True when `jws` is signed through the trusted chain (and, in Production, not revoked), whatever it holds. */
  async signatureHolds(jws: string): Promise<boolean> {
    const anything = { validate: (_payload: unknown): _payload is unknown => true };
    const signedDate = (payload: unknown) => {
      const date = (payload as { signedDate?: unknown } | null)?.signedDate;
      return typeof date === 'number' ? new Date(date) : new Date();
    };
    try {
      await this.verifyJWT(jws, anything, signedDate);
      return true;
    } catch {
      return false;
    }
  }
}

/** App Store Server Notifications V2: the body holds the signed notification (a JWS). */
export const appStoreNotificationBody = z.object({ signedPayload: z.string().min(1) });

/**
 * App Store Server Notifications V2: the `signedPayload` JWS and its signedTransactionInfo are
 * verified by Apple's app-store-server-library (SignedDataVerifier) against the configured root
 * certificates, with the bundle id, environment (and app Apple id in Production) checked.
 */
export class AppStoreVerifier implements NotificationVerifier {
  readonly provider = 'app-store' as const;
  private readonly verifier: AppleVerifier;

  constructor(settings: AppStoreSettings) {
    this.verifier = new AppleVerifier(
      settings.rootCertificatePaths.map(derCertificate),
      settings.onlineChecks,
      settings.environment as Environment,
      settings.bundleId,
      settings.appAppleId ?? undefined,
    );
  }

  async verify(request: InboundRequest): Promise<RevenueNotification> {
    const parsed = appStoreNotificationBody.safeParse(parseJsonBody(request.body));
    if (!parsed.success) throw new WebhookUnauthorizedError('missing signedPayload');
    const { signedPayload } = parsed.data;
    const payload = await this.verified(signedPayload, () => this.verifier.verifyAndDecodeNotification(signedPayload));
    if (typeof payload.notificationUUID !== 'string' || typeof payload.notificationType !== 'string') {
      throw new WebhookMalformedError('BAD_REQUEST', 'The notification has no notificationUUID or notificationType', SIGNED);
    }
    const signed = payload.data?.signedTransactionInfo;
    const transaction = signed
      ? await this.verified(signed, () => this.verifier.verifyAndDecodeTransaction(signed), { level: 'inner', notificationId: payload.notificationUUID })
      : null;
    const kind = kindOf(payload.notificationType);
    if (kind !== 'other' && transaction === null) {
      throw new WebhookMalformedError('BAD_REQUEST', `${payload.notificationType} without signedTransactionInfo`, SIGNED);
    }
    const currency = currencyCode(transaction?.currency ?? null, SIGNED);
    const price = transaction?.price;
    // Apple's price is in milliunits (9990 = 9.99); without a currency it is not money.
    const priceMinor = currency !== null && typeof price === 'number' ? inRange(Math.round((price * 10 ** currencyDigits(currency)) / 1000), SIGNED) : null;
    // What recordableMoney refuses, said here where the field is known.
    if (priceMinor !== null && priceMinor < 0) throw new WebhookMalformedError('BAD_REQUEST', 'The price in the notification is negative', SIGNED);
    return {
      provider: 'app-store',
      notification_id: payload.notificationUUID,
      provider_type: payload.subtype ? `${payload.notificationType}/${payload.subtype}` : payload.notificationType,
      kind,
      occurred_at: isoFromMillis(payload.signedDate, SIGNED) ?? new Date().toISOString(),
      transaction_id: transaction?.transactionId ?? null,
      original_transaction_id: transaction?.originalTransactionId ?? null,
      product_id: transaction?.productId ?? null,
      price_minor: priceMinor,
      currency,
      period_start: isoFromMillis(transaction?.purchaseDate, SIGNED),
      period_end: isoFromMillis(transaction?.expiresDate, SIGNED),
      // A family member's access is the organiser's purchase, not theirs.
      is_trial: transaction?.offerDiscountType === 'FREE_TRIAL' || transaction?.inAppOwnershipType === 'FAMILY_SHARED' || price === 0,
      match: {
        app_user_ids: [],
        account_token: transaction?.appAccountToken || null,
        customer_id: null,
        linked_transaction: transaction?.originalTransactionId ?? null,
      },
    };
  }

  /**
   * Apple's verification failures → 401 (a signature or identity that does not hold), except
   * fields Apple's validator refuses in a payload whose signature holds → 400. An `inner` JWS (the
   * transaction inside a verified notification) is part of what the App Store signed: one that is
   * not a JWS at all, or whose fields Apple's validator refuses, makes the notification malformed
   * (400); one signed by a chain that does not verify is a bad signature (401), as an outer one.
   */
  private async verified<T>(
    jws: string,
    step: () => Promise<T>,
    { level, notificationId }: { level: 'outer' | 'inner'; notificationId: string | null } = { level: 'outer', notificationId: null },
  ): Promise<T> {
    try {
      return await step();
    } catch (error) {
      if (
        level === 'inner' &&
        error instanceof VerificationException &&
        !REJECTED_IDENTITY.has(error.status) &&
        error.status !== VerificationStatus.RETRYABLE_VERIFICATION_FAILURE &&
        !(error.status === VerificationStatus.VERIFICATION_FAILURE && isSignedWithChain(jws))
      ) {
        throw new WebhookMalformedError('BAD_REQUEST', 'The notification is signed by the App Store, but its signedTransactionInfo does not verify', SIGNED);
      }
      if (error instanceof VerificationException && error.status === VerificationStatus.FAILURE && (await this.verifier.signatureHolds(jws))) {
        throw new WebhookMalformedError('BAD_REQUEST', 'The notification is signed by the App Store, but a field of it is not what Apple sends', SIGNED);
      }
      if (error instanceof VerificationException && error.status === VerificationStatus.INVALID_APP_IDENTIFIER && !namesAnApp(jws, level)) {
        // Apple's library checks the identity after the signature: signed by the App Store, naming no app at all.
        throw new WebhookMalformedError('BAD_REQUEST', 'The notification is signed by the App Store, but names no app (no bundleId)', SIGNED);
      }
      if (error instanceof VerificationException) {
        const status = `(status ${VerificationStatus[error.status] ?? error.status})`;
        if (!REJECTED_IDENTITY.has(error.status)) throw new WebhookUnauthorizedError(`signature or certificate chain does not verify ${status}`);
        // Apple's library checks the identity after the signature: this payload was signed by the
        // App Store, for another app or environment, and its notificationUUID can be trusted.
        throw new WebhookUnauthorizedError(`signed for another app or environment ${status}`, { notificationId: notificationId ?? notificationUuidOf(jws) });
      }
      throw error;
    }
  }
}

/** A compact JWS whose header names a certificate chain (`x5c`), as the App Store signs: its signature can be judged. */
function isSignedWithChain(jws: string): boolean {
  const parts = jws.split('.');
  if (parts.length !== 3) return false;
  try {
    const header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8')) as { x5c?: unknown };
    return Array.isArray(header.x5c);
  } catch {
    return false;
  }
}

/**
 * Whether a JWS's payload names an app, read without verifying (the caller has): a transaction's
 * `bundleId`; a notification's in the part Apple's library reads it from (data, summary,
 * externalPurchaseToken or appData, the first present).
 */
function namesAnApp(jws: string, level: 'outer' | 'inner'): boolean {
  try {
    const payload = JSON.parse(Buffer.from(jws.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, { bundleId?: unknown } | undefined> & {
      bundleId?: unknown;
    };
    const holder = level === 'inner' ? payload : payload.data || payload.summary || payload.externalPurchaseToken || payload.appData;
    return typeof holder?.bundleId === 'string';
  } catch {
    return true;
  }
}

/** The notificationUUID a JWS's payload names, read without verifying (the caller has); null when it names none. */
function notificationUuidOf(jws: string): string | null {
  try {
    const payload = JSON.parse(Buffer.from(jws.split('.')[1] ?? '', 'base64url').toString('utf8')) as { notificationUUID?: unknown };
    return typeof payload.notificationUUID === 'string' && payload.notificationUUID.length > 0 ? payload.notificationUUID : null;
  } catch {
    return null;
  }
}
