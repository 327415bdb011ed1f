import { randomUUID } from 'node:crypto';
import express, { type RequestHandler } from 'express';
import type { DependencyContainer } from 'tsyringe';
import type { ReactionHealth } from '../application/reactions/reaction-runner.js';
import type { Config } from '../config.js';
import type { EventStore } from '../ports/event-store.js';
import type { Logger } from '../ports/logger.js';
import type { ReadConsistency } from '../ports/read-consistency.js';
import type { Clock } from '../ports/clock.js';
import type { RateLimitStore } from '../ports/rate-limit-store.js';
import type { ReadStore } from '../ports/read-store.js';
import { TOKENS } from '../ports/tokens.js';
import type { Metrics } from '../observability/metrics.js';
import { ApiKeys, requireKey } from './auth.js';
import { storableBody } from './body-guard.js';
import { ApiError, errorHandler, pathNotFound } from './errors.js';
import { ApiDescription } from './openapi.js';
import { RateLimits } from './rate-limits/rate-limits.js';

import { adminRouter } from './routes/admin.js';
import { adminRevenueRouter } from './routes/admin-revenue.js';
import { adminWebhooksRouter } from './routes/admin-webhooks.js';
import { webhooksRouter } from './routes/webhooks.js';
import { codesRouter } from './routes/codes.js';
import { operatorRouter } from './routes/operator.js';
import { adminStoreRouter, storeRouter } from './routes/store.js';
import { adminTransactionsRouter, transactionsRouter } from './routes/transactions.js';
import { usersRouter } from './routes/users.js';

const BODY_LIMIT = '64kb';
const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

const rememberMountPath: RequestHandler = (req, res, next) => {
  res.locals.mountPath = req.baseUrl;
  next();
};

/** Echo a sane x-request-id, else make one; every response carries it. */
const requestId: RequestHandler = (req, res, next) => {
  const given = req.header('x-request-id');
  const id = given && REQUEST_ID.test(given) ? given : randomUUID();
  res.locals.requestId = id;
  res.setHeader('x-request-id', id);
  next();
};

/** Metrics and one access-log line per request, with its request id. */
function observe(metrics: Metrics, logger: Logger): RequestHandler {
  return (req, res, next) => {
    const stop = metrics.httpDuration.startTimer();
    res.on('finish', () => {
      // A nested router's mount path is remembered: express restores baseUrl before error handlers.
      const route = req.route ? `${res.locals.mountPath ?? req.baseUrl}${String(req.route.path)}` : 'unmatched';
      metrics.httpRequests.inc({ method: req.method, route, status: String(res.statusCode) });
      const seconds = stop({ method: req.method, route });
      logger.info(
        { requestId: res.locals.requestId, method: req.method, path: req.path, route, status: res.statusCode, ms: Math.round(seconds * 1000) },
        'request',
      );
    });
    next();
  };
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * Bodies (of POST, PUT, PATCH; others are ignored) must be JSON up to 64 KiB, storable as sent
 * (bounded depth, well-formed strings); a body of any other media type is 415.
 */
function jsonBody(): RequestHandler[] {
  const parse = express.json({ limit: BODY_LIMIT, type: ['application/json', 'application/*+json'], strict: false });
  const mediaType: RequestHandler = (req, _res, next) => {
    const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
    if (hasBody && !req.is(['application/json', 'application/*+json'])) {
      throw new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json', 'header:content-type');
    }
    next();
  };
  const onlyWithBody =
    (handler: RequestHandler): RequestHandler =>
    (req, res, next) =>
      BODY_METHODS.has(req.method) ? handler(req, res, next) : next();
  return [mediaType, parse, storableBody].map(onlyWithBody);
}

/** `full`: the whole API; `operator`: only health, readiness, metrics and the API description. */
export function createApp(container: DependencyContainer, surface: 'full' | 'operator' = 'full'): express.Express {
  const config = container.resolve<Config>(TOKENS.Config);
  const logger = container.resolve<Logger>(TOKENS.Logger);
  const metrics = container.resolve<Metrics>(TOKENS.Metrics);
  const api = new ApiDescription();
  const keys = new ApiKeys(config.CLIENT_API_KEYS, config.SECRET_API_KEYS);

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // Which X-Forwarded-For hops name the client (req.ip): none unless TRUST_PROXY says so.
  app.set('trust proxy', config.TRUST_PROXY);
  app.use(requestId, observe(metrics, logger));
  app.use(
    operatorRouter({
      config,
      eventStore: container.resolve<EventStore>(TOKENS.EventStore),
      readStore: container.resolve<ReadStore>(TOKENS.ReadStore),
      consistency: container.resolve<ReadConsistency>(TOKENS.ReadConsistency),
      metrics,
      api,
      reactions: container.resolve<() => ReactionHealth | null>(TOKENS.ReactionHealth),
      webhooks: container.resolve(TOKENS.WebhookHealth),
    }),
  );
  if (surface === 'full') {
    // Inbound notifications take no API key and read raw bytes (SPEC §11): before the JSON body.
    app.use('/webhooks', rememberMountPath, webhooksRouter(container, api));
    app.use(['/users', '/codes', '/store', '/admin'], requireKey(keys));
    app.use(jsonBody());
    const rateLimits =
      config.RATE_LIMITS === 'on'
        ? new RateLimits(config, container.resolve<RateLimitStore>(TOKENS.RateLimitStore), container.resolve<Clock>(TOKENS.Clock))
        : null;
    if (rateLimits) app.use(rateLimits.middleware());
    app.use(usersRouter(container, api));
    app.use(transactionsRouter(container, api));
    app.use(codesRouter(container, api));
    app.use(storeRouter(container, api));
    app.use('/admin', rememberMountPath, adminStoreRouter(container, api));
    app.use('/admin', rememberMountPath, adminRouter(container, api));
    app.use('/admin', rememberMountPath, adminRevenueRouter(container, api));
    // After the revenue router: its GET /admin/webhooks/inbound is not an endpoint id.
    app.use('/admin', rememberMountPath, adminWebhooksRouter(container, api));
    app.use('/admin', rememberMountPath, adminTransactionsRouter(container, api));
    if (rateLimits) app.use(rateLimits.failedClaimPenalty());
  }

  app.use(pathNotFound);
  app.use(errorHandler(logger));
  return app;
}
