import { sameSecret } from '../system/same-secret.js';
import { OAuth2Client, type TokenPayload } from 'google-auth-library';
import { z } from 'zod';
import {
  type InboundRequest,
  isoFromMillis,
  type NotificationVerifier,
  parseJsonBody,
  WebhookMalformedError,
  WebhookUnauthorizedError,
} from '../../application/revenue/inbound-request.js';
import type { RevenueKind, RevenueNotification } from '../../domain/revenue/revenue-notification.js';

export interface GooglePlaySettings {
  packageName: string;
  /** OIDC: the push subscription's audience and service account; else the shared token. */
  oidc: { audience: string; serviceAccount: string; certsUrl: string } | null;
  token: string | null;
}

/** The Pub/Sub push request Google Play's real-time developer notifications arrive in. */
export const googlePlayPushBody = z.object({
  message: z.object({
    data: z.string(),
    messageId: z.string().min(1).optional(),
    message_id: z.string().min(1).optional(),
    publishTime: z.string().optional(),
  }),
  subscription: z.string().optional(),
});

const notificationSchema = z.object({
  packageName: z.string(),
  eventTimeMillis: z.union([z.string(), z.number()]).optional(),
  /** Not part of Google's RTDN; present when a relay enriched it from the purchase (SPEC §11 matching). */
  obfuscatedExternalAccountId: z.string().optional(),
  subscriptionNotification: z.object({ notificationType: z.number().int(), purchaseToken: z.string(), subscriptionId: z.string().optional() }).optional(),
  oneTimeProductNotification: z.object({ notificationType: z.number().int(), purchaseToken: z.string(), sku: z.string().optional() }).optional(),
  voidedPurchaseNotification: z.object({ purchaseToken: z.string(), orderId: z.string().optional() }).optional(),
  testNotification: z.object({}).passthrough().optional(),
});

/** Play subscription notification types → revenue meaning (RECOVERED 1, RENEWED 2, PURCHASED 4, RESTARTED 7, REVOKED 12, EXPIRED 13). */
function subscriptionKind(type: number): RevenueKind {
  if (type === 4) return 'purchase';
  if (type === 1 || type === 2 || type === 7) return 'renewal';
  if (type === 12) return 'refund';
  if (type === 13) return 'expiry';
  return 'other';
}

/**
 * Google Play real-time developer notifications through a Pub/Sub push subscription: the push's
 * OIDC bearer token is verified by google-auth-library (signature, audience, issuer, expiry)
 * and must be of the configured service account; or, without OIDC, the shared `?token=`.
 */
export class GooglePlayVerifier implements NotificationVerifier {
  readonly provider = 'google-play' as const;
  private readonly client: OAuth2Client | null;

  constructor(private readonly settings: GooglePlaySettings) {
    this.client = settings.oidc ? new OAuth2Client({ endpoints: { oauth2FederatedSignonPemCertsUrl: settings.oidc.certsUrl } }) : null;
  }

  async verify(request: InboundRequest): Promise<RevenueNotification> {
    await this.authenticate(request);
    const push = googlePlayPushBody.safeParse(parseJsonBody(request.body));
    if (!push.success) throw new WebhookMalformedError('BAD_REQUEST', 'Not a Pub/Sub push message', `/${push.error.issues[0]!.path.join('/')}`);
    const messageId = push.data.message.messageId ?? push.data.message.message_id;
    if (!messageId) throw new WebhookMalformedError('BAD_REQUEST', 'The Pub/Sub message has no messageId', '/message/messageId');
    let decoded: unknown;
    try {
      decoded = JSON.parse(Buffer.from(push.data.message.data, 'base64').toString('utf8'));
    } catch {
      throw new WebhookMalformedError('BAD_REQUEST', 'message.data is not base64 JSON', '/message/data');
    }
    const parsed = notificationSchema.safeParse(decoded);
    if (!parsed.success)
      throw new WebhookMalformedError('BAD_REQUEST', `Not a Play developer notification: ${parsed.error.issues[0]!.message}`, '/message/data');
    const notification = parsed.data;
    if (notification.packageName !== this.settings.packageName)
      throw new WebhookUnauthorizedError('notification for another package', { notificationId: messageId });
    let kind: RevenueKind = 'other';
    let providerType = 'test';
    let token: string | null = null;
    let product: string | null = null;
    if (notification.subscriptionNotification) {
      const sub = notification.subscriptionNotification;
      kind = subscriptionKind(sub.notificationType);
      providerType = `subscription/${sub.notificationType}`;
      token = sub.purchaseToken;
      product = sub.subscriptionId ?? null;
    } else if (notification.oneTimeProductNotification) {
      const one = notification.oneTimeProductNotification;
      kind = one.notificationType === 1 ? 'purchase' : 'other';
      providerType = `one_time_product/${one.notificationType}`;
      token = one.purchaseToken;
      product = one.sku ?? null;
    } else if (notification.voidedPurchaseNotification) {
      kind = 'refund';
      providerType = 'voided_purchase';
      token = notification.voidedPurchaseNotification.purchaseToken;
    }
    return {
      provider: 'google-play',
      notification_id: messageId,
      provider_type: providerType,
      kind,
      occurred_at: isoFromMillis(notification.eventTimeMillis, '/message/data') ?? new Date().toISOString(),
      // Play's notifications carry the purchase token, not the order, price or period (those
      // need the Play Developer API): the token identifies the purchase across renewals.
      transaction_id: null,
      original_transaction_id: token,
      product_id: product,
      price_minor: null,
      currency: null,
      period_start: null,
      period_end: null,
      is_trial: false,
      match: {
        app_user_ids: notification.obfuscatedExternalAccountId ? [notification.obfuscatedExternalAccountId] : [],
        account_token: null,
        customer_id: null,
        linked_transaction: token,
      },
    };
  }

  private async authenticate(request: InboundRequest): Promise<void> {
    const { oidc, token } = this.settings;
    const bearer = /^Bearer (.+)$/i.exec(request.header('authorization') ?? '')?.[1];
    if (oidc && this.client && bearer) {
      let payload: TokenPayload | undefined;
      try {
        payload = (await this.client.verifyIdToken({ idToken: bearer, audience: oidc.audience })).getPayload();
      } catch (error) {
        throw new WebhookUnauthorizedError(`OIDC token does not verify: ${error instanceof Error ? error.message : String(error)}`);
      }
      if (payload?.email !== oidc.serviceAccount || payload.email_verified !== true) {
        throw new WebhookUnauthorizedError('OIDC token of another service account');
      }
      return;
    }
    const given = request.query.token;
    if (token !== null && typeof given === 'string' && sameSecret(given, token)) return;
    throw new WebhookUnauthorizedError(oidc ? 'missing or wrong OIDC bearer token' : 'missing or wrong ?token=');
  }
}
