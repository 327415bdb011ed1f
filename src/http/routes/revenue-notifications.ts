import { isUtf8 } from 'node:buffer';
import express, { type RequestHandler } from 'express';
import type { DependencyContainer } from 'tsyringe';
import type { ZodTypeAny } from 'zod';
import { AppStoreVerifier, appStoreNotificationBody } from '../../adapters/revenue/app-store-verifier.js';
import { GooglePlayVerifier, googlePlayPushBody } from '../../adapters/revenue/google-play-verifier.js';
import { RevenueCatVerifier, revenueCatWebhookBody } from '../../adapters/revenue/revenuecat-verifier.js';
import { StripeVerifier, stripeEventBody } from '../../adapters/revenue/stripe-verifier.js';
import { type NotificationVerifier, recordableMoney, WebhookMalformedError, WebhookUnauthorizedError } from '../../application/revenue/inbound-request.js';
import { RevenueInbox } from '../../application/revenue/revenue-inbox.js';
import type { Config } from '../../config.js';
import { REVENUE_PROVIDERS, type RevenueNotification, type RevenueProvider, revenueNotificationSchema } from '../../domain/revenue/revenue-notification.js';
import { TOKENS } from '../../ports/tokens.js';
import { refuseDeclaredOverLimit, sendsBody, underflowingNumber, unstorablePart, utf8Charset } from '../body-guard.js';
import { WEBHOOK_BODY_LIMIT } from '../body-limits.js';
import { ApiError, bodyNotUtf8, bodyTooLarge, numberTooSmall } from '../errors.js';
import type { SenderScheme } from '../openapi.js';
import { type AnyRoute, route } from '../route.js';
import { z } from '../schemas/zod-openapi.js';

/** A Pub/Sub push as documented: what the verifier checks beyond its zod shape, stated. */
const { message } = googlePlayPushBody.shape;
const googlePlayPushDoc = googlePlayPushBody.extend({
  message: message
    .extend({
      data: message.shape.data.openapi({
        format: 'byte',
        description: 'Base64 of the Play developer notification (JSON: packageName, eventTimeMillis, one of its notification objects)',
      }),
    })
    .openapi({
      description: 'Needs `messageId` (or `message_id`): it identifies the notification',
      anyOf: [{ required: ['messageId'] }, { required: ['message_id'] }],
    }),
});

/** What each provider sends, for the API description (its verifier checks it). */
const NOTIFICATION_BODIES: Record<RevenueProvider, ZodTypeAny> = {
  'app-store': appStoreNotificationBody,
  'google-play': googlePlayPushDoc,
  revenuecat: revenueCatWebhookBody,
  stripe: stripeEventBody,
};

/**
 * How each provider's sender is told apart from a forger, for the API description (its verifier
 * checks it). The App Store signs the body itself (`signedPayload`, a JWS): no scheme.
 */
const SENDER_AUTH: Record<RevenueProvider, Record<string, SenderScheme>> = {
  'app-store': {},
  'google-play': {
    googlePlayOidc: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description: "The push subscription's OIDC token, for GOOGLE_PLAY_PUSH_AUDIENCE, signed by Google for GOOGLE_PLAY_PUSH_SERVICE_ACCOUNT",
    },
    googlePlayToken: { type: 'apiKey', in: 'query', name: 'token', description: 'GOOGLE_PLAY_PUSH_TOKEN, when the push subscription has no OIDC token' },
  },
  revenuecat: {
    revenueCatAuthorization: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Exactly the value REVENUECAT_WEBHOOK_AUTH names' },
  },
  stripe: {
    stripeSignature: {
      type: 'apiKey',
      in: 'header',
      name: 'Stripe-Signature',
      description: "Stripe's signature of the exact body with STRIPE_WEBHOOK_SECRET (`t=…,v1=…`), at most 300 s old",
    },
  },
};

/** The verifiers of the providers whose settings are all present (config.ts checked them at start). */
function configuredVerifiers(config: Config): Map<RevenueProvider, NotificationVerifier> {
  const verifiers = new Map<RevenueProvider, NotificationVerifier>();
  if (config.APPLE_BUNDLE_ID !== null && config.APPLE_ENVIRONMENT) {
    verifiers.set(
      'app-store',
      new AppStoreVerifier({
        rootCertificatePaths: config.APPLE_ROOT_CERTS,
        bundleId: config.APPLE_BUNDLE_ID,
        appAppleId: config.APPLE_APP_APPLE_ID === null ? null : Number(config.APPLE_APP_APPLE_ID),
        environment: config.APPLE_ENVIRONMENT,
        onlineChecks: config.APPLE_ONLINE_CHECKS,
      }),
    );
  }
  if (config.GOOGLE_PLAY_PACKAGE_NAME !== null) {
    const oidc =
      config.GOOGLE_PLAY_PUSH_AUDIENCE !== null && config.GOOGLE_PLAY_PUSH_SERVICE_ACCOUNT !== null
        ? { audience: config.GOOGLE_PLAY_PUSH_AUDIENCE, serviceAccount: config.GOOGLE_PLAY_PUSH_SERVICE_ACCOUNT, certsUrl: config.GOOGLE_OIDC_CERTS_URL }
        : null;
    verifiers.set('google-play', new GooglePlayVerifier({ packageName: config.GOOGLE_PLAY_PACKAGE_NAME, oidc, token: config.GOOGLE_PLAY_PUSH_TOKEN }));
  }
  if (config.REVENUECAT_WEBHOOK_AUTH !== null) verifiers.set('revenuecat', new RevenueCatVerifier(config.REVENUECAT_WEBHOOK_AUTH));
  if (config.STRIPE_WEBHOOK_SECRET !== null) verifiers.set('stripe', new StripeVerifier(config.STRIPE_WEBHOOK_SECRET));
  return verifiers;
}

/**
 * Up to 1 MiB, kept as the exact bytes (signatures cover them). Every provider sends JSON in
 * UTF-8: a body sent as anything else is 415, in another charset 415, and bytes that are not
 * UTF-8 are 400 `BODY_INVALID`, as on the rest of the API (src/http/app.ts, jsonBody).
 */
const refuseOverLimit = refuseDeclaredOverLimit(() => WEBHOOK_BODY_LIMIT);
const readRaw = express.raw({ type: () => true, limit: WEBHOOK_BODY_LIMIT });
const rawBody: RequestHandler = (req, res, next) => {
  if (sendsBody(req) && !req.is(['application/json', 'application/*+json'])) {
    next(new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send the notification as application/json', 'header:content-type'));
    return;
  }
  utf8Charset(req, res, (unsupported?: unknown) => {
    if (unsupported) return next(unsupported);
    refuseOverLimit(req, res, (refused?: unknown) => {
      if (refused) return next(refused);
      readRaw(req, res, (error?: unknown) => {
        if ((error as { type?: string } | undefined)?.type === 'entity.too.large') return next(bodyTooLarge(WEBHOOK_BODY_LIMIT));
        if (!error && Buffer.isBuffer(req.body) && !isUtf8(req.body)) return next(bodyNotUtf8());
        next(error);
      });
    });
  });
};

/** Where the providers' notifications arrive: `/webhooks/{provider}` (SPEC §11). */
const INBOUND_MOUNT = '/webhooks';

/** Inbound revenue notifications (SPEC §11): no API key; each provider authenticates itself. */
export function revenueNotificationRoutes(container: DependencyContainer, replayGate: RequestHandler): AnyRoute[] {
  const config = container.resolve<Config>(TOKENS.Config);
  const verifiers = configuredVerifiers(config);
  const inbox = container.resolve(RevenueInbox);
  const answer = z.object({ data: z.object({ status: z.enum(['applied', 'duplicate', 'unmatched']) }) });
  // A provider that is off is an unknown notification source, whatever is sent to it: 404 before the body is looked at.
  const configured =
    (provider: RevenueProvider): RequestHandler =>
    (_req, _res, next) =>
      next(verifiers.has(provider) ? undefined : new ApiError('WEBHOOK.NOT_CONFIGURED', `Notifications from ${provider} are not configured`, null));

  return REVENUE_PROVIDERS.map((provider) =>
    route({
      method: 'post',
      operationId: `receive${provider
        .split('-')
        .map((part) => part[0]!.toUpperCase() + part.slice(1))
        .join('')}Notification`,
      path: `${INBOUND_MOUNT}/${provider}`,
      summary: `Inbound ${provider} notification (verified by the provider's signature or token)`,
      ...(provider === 'google-play'
        ? { description: "Authenticated by the push subscription's OIDC bearer token or, without OIDC, by the shared token in the query (`?token=`)." }
        : {}),
      tags: ['webhooks in'],
      responses: { 200: { description: 'Kept: applied to its user, a duplicate, or unmatched (applied when the user appears)', schema: answer } },
      errors: [
        'BODY_INVALID',
        'BAD_REQUEST',
        'WEBHOOK.UNAUTHORIZED',
        'WEBHOOK.NOT_CONFIGURED',
        'BODY_TOO_LARGE',
        'UNSUPPORTED_MEDIA_TYPE',
        'SERVICE_UNAVAILABLE',
      ],
      auth: 'none',
      senderAuth: SENDER_AUTH[provider],
      rawBody: NOTIFICATION_BODIES[provider],
      // While a read model needs a replay, a configured provider's notification is refused 503 (it sends again).
      before: [configured(provider), replayGate, rawBody],
      async handle({ req, res }) {
        const context = { correlation_id: String(res.locals.requestId), causation_id: String(res.locals.requestId), actor: `webhook:${provider}` };
        const verifier = verifiers.get(provider)!;
        const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        let notification: RevenueNotification;
        try {
          notification = await verifier.verify({ body, header: (name) => req.header(name), query: req.query as Record<string, unknown> });
        } catch (error) {
          if (error instanceof WebhookUnauthorizedError) {
            await inbox.reject(provider, error.reason, context, error.authenticated);
            throw new ApiError('WEBHOOK.UNAUTHORIZED', 'The notification signature or token is missing or wrong', null);
          }
          if (error instanceof WebhookMalformedError) throw new ApiError(error.code, error.message, error.source);
          throw error;
        }
        // As on the JSON bodies (storableBody), once the sender is known: a number the payload would read as 0 though it is not.
        const underflowAt = underflowingNumber(body);
        if (underflowAt !== null) throw numberTooSmall(underflowAt);
        // Whatever a verifier let through that the log's schema of a notification refuses is the payload's fault (400).
        const recordable = revenueNotificationSchema.safeParse(notification);
        if (!recordable.success) {
          const issue = recordable.error.issues[0]!;
          throw new ApiError('BAD_REQUEST', `The notification cannot be recorded: ${issue.path.join('.')}: ${issue.message}`, null);
        }
        if (!recordableMoney(recordable.data)) {
          throw new ApiError('BAD_REQUEST', 'The notification cannot be recorded: a negative amount, or a currency that is not ISO 4217', null);
        }
        // The raw body skips the JSON bodies' check: a string it cannot store faithfully is refused the same way.
        const unstorable = unstorablePart(recordable.data);
        if (unstorable) throw new ApiError('BAD_REQUEST', `The notification cannot be recorded: ${unstorable.source}: ${unstorable.message}`, null);
        return { status: 200, body: { data: { status: await inbox.receive(notification, context) } } };
      },
    }),
  );
}
