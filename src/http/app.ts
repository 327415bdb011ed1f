import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import express, { type RequestHandler } from 'express';
import type { DependencyContainer } from 'tsyringe';
import { CatchUpGuard } from '../application/projections/catch-up-guard.js';
import { ReplayGate } from '../application/projections/replay-gate.js';
import type { ReactionHealth } from '../application/reactions/reaction-runner.js';
import type { Config } from '../config.js';
import type { EventStore } from '../ports/event-store.js';
import type { Logger } from '../ports/logger.js';
import type { ReadConsistency } from '../ports/read-consistency.js';
import type { Clock } from '../ports/clock.js';
import type { RateLimitStore } from '../ports/rate-limit-store.js';
import type { ReadStore } from '../ports/read-store.js';
import { TOKENS } from '../ports/tokens.js';
import { type Metrics, methodLabel } from '../observability/metrics.js';
import { ApiKeys, requireKey, requireSecretKey } from './auth.js';
import { BODY_METHODS, refuseDeclaredOverLimit, sendsBody, storableBody, underflowingNumber, utf8Charset } from './body-guard.js';
import { ApiError, errorHandler, pathNotFound } from './errors.js';
import { ApiDescription } from './openapi.js';
import { consoleRouter } from './console.js';
import { browserAccess } from './browser-access.js';
import { RateLimits } from './rate-limits/rate-limits.js';

import { adminRoutes } from './routes/admin.js';
import { adminAnalyticsRoutes } from './routes/admin-analytics.js';
import { adminRevenueRoutes } from './routes/admin-revenue.js';
import { adminReviewRoutes } from './routes/admin-reviews.js';
import { adminRuleRoutes } from './routes/admin-rules.js';
import { adminWebhookRoutes } from './routes/admin-webhooks.js';
import { adminUserRoutes } from './routes/admin-users.js';
import { revenueNotificationRoutes } from './routes/revenue-notifications.js';
import { codeRoutes } from './routes/codes.js';
import { apiReferenceRouter, operatorRoutes } from './routes/operator.js';
import { adminStoreRoutes, storeRoutes } from './routes/store.js';
import { adminTransactionRoutes, transactionRoutes } from './routes/transactions.js';
import { userRoutes } from './routes/users.js';
import { WINWINKIT_MOUNT } from './compat/winwinkit-wire.js';
import { winwinkitRoutes } from './compat/winwinkit-routes.js';
import { BODY_LIMIT, BULK_BODY_LIMIT } from './body-limits.js';
import { methodGate, mountRoutes, pathMatcher, secretKeyGate } from './route.js';
import { RequestActivity } from '../observability/request-activity.js';

const BULK_PATHS = /^\/admin\/(rewards\/[^/]+\/codes|rules\/[^/]+)$/;
const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * Echo a sane x-request-id, else make one; every response carries it. Answers are not to be
 * stored by a browser or a proxy (personal data an erasure could not reach there), nor read as
 * another type than they say (the console's assets set their own caching).
 */
const requestId: RequestHandler = (req, res, next) => {
  const given = req.header('x-request-id');
  const id = given && REQUEST_ID.test(given) ? given : randomUUID();
  res.locals.requestId = id;
  res.setHeader('x-request-id', id);
  res.setHeader('cache-control', 'no-store');
  res.setHeader('x-content-type-options', 'nosniff');
  next();
};

/** A Host value (RFC 9110 §7.2): an IP literal, IPv4 address or registered name, and an optional port. */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~!$&'()*+,;=%-]*)(?::\d*)?$/;

/**
 * HTTP/1.1 requires exactly one valid Host header (RFC 9112 §3.2): a request without one, with
 * two, or with one that is no host is a bad request, answered in the API's shape.
 */
const requireHost: RequestHandler = (req, _res, next) => {
  const host = req.headers.host;
  if (req.httpVersion === '1.1' && host === undefined) throw new ApiError('BAD_REQUEST', 'An HTTP/1.1 request needs a Host header', 'header:host');
  if (host !== undefined && (!HOST.test(host) || hostLines(req.rawHeaders) > 1)) {
    throw new ApiError('BAD_REQUEST', 'A request carries one Host header naming a host (and port)', 'header:host');
  }
  next();
};

/** How many Host lines the request had (Node keeps the first and drops the others from `headers`). */
function hostLines(rawHeaders: string[]): number {
  let count = 0;
  for (let index = 0; index < rawHeaders.length; index += 2) if (rawHeaders[index]!.length === 4 && rawHeaders[index]!.toLowerCase() === 'host') count += 1;
  return count;
}

/** Every request is refused while a read model needs a replay (ReplayGate): this version cannot read it. */
function refuseWhileReadModelsNeedReplay(gate: ReplayGate): RequestHandler {
  return (_req, _res, next) => {
    gate.check().then(() => next(), next);
  };
}

/** Commands (every method but GET and HEAD) wait for nothing and are refused while the read models catch up (CatchUpGuard). */
function refuseCommandsWhileCatchingUp(guard: CatchUpGuard): RequestHandler {
  return (req, _res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD') return next();
    guard.check().then(() => next(), next);
  };
}

/** Metrics and one access-log line per request, with its request id; the request counts as activity until it closes. */
function observe(metrics: Metrics, logger: Logger, activity: RequestActivity): RequestHandler {
  return (req, res, next) => {
    const stop = metrics.httpDuration.startTimer();
    activity.begin();
    res.once('close', () => activity.end());
    // The path as asked: a mount (the console's files, /docs) shortens req.path before the answer is sent.
    const path = req.path;
    res.on('finish', () => {
      const route = req.route ? String(req.route.path) : (res.locals.routeLabel ?? 'unmatched');
      const method = methodLabel(req.method);
      metrics.httpRequests.inc({ method, route, status: String(res.statusCode) });
      const seconds = stop({ method, route });
      logger.info({ requestId: res.locals.requestId, method: req.method, path, route, status: res.statusCode, ms: Math.round(seconds * 1000) }, 'request');
    });
    next();
  };
}

/**
 * The body reader (body-parser) looks a body's charset up in iconv-lite, which loads its tables
 * from disk at the first look-up: done now, at start, so a process short of file descriptors
 * later cannot fail that look-up (it answered a UTF-8 body 415).
 */
function loadCharsetTables(): void {
  const fromExpress = createRequire(createRequire(import.meta.url).resolve('express'));
  const iconv = createRequire(fromExpress.resolve('body-parser'))('iconv-lite') as { encodingExists(name: string): boolean };
  iconv.encodingExists('utf-8');
}

/**
 * Bodies (of POST, PUT, PATCH and DELETE; GET's and HEAD's are ignored) must be JSON in UTF-8, up to 64 KiB (4 MiB for the bulk admin uploads), storable as sent
 * (bounded depth, well-formed strings); a body of any other media type is 415.
 */
function jsonBody(): RequestHandler[] {
  loadCharsetTables();
  // Bytes that are not UTF-8 would be read as U+FFFD and stored so, silently: storableBody refuses them.
  const verify = (req: express.Request, _res: unknown, raw: Buffer, encoding: string) => {
    if (/^utf-?8$/i.test(encoding) && !isUtf8(raw)) req.res!.locals.bodyNotUtf8 = true;
    else req.res!.locals.underflowAt = underflowingNumber(raw);
  };
  const options = { type: ['application/json', 'application/*+json'], strict: false, verify };
  const parseSmall = express.json({ ...options, limit: BODY_LIMIT });
  const parseBulk = express.json({ ...options, limit: BULK_BODY_LIMIT });
  const limitOf = (req: express.Request) => (BULK_PATHS.test(req.path) ? BULK_BODY_LIMIT : BODY_LIMIT);
  const parse: RequestHandler = (req, res, next) => (limitOf(req) === BULK_BODY_LIMIT ? parseBulk : parseSmall)(req, res, next);
  const mediaType: RequestHandler = (req, _res, next) => {
    if (sendsBody(req) && !req.is(['application/json', 'application/*+json'])) {
      throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json', 'header:content-type');
    }
    next();
  };
  const onlyWithBody =
    (handler: RequestHandler): RequestHandler =>
    (req, res, next) =>
      BODY_METHODS.has(req.method) ? handler(req, res, next) : next();
  return [mediaType, utf8Charset, refuseDeclaredOverLimit(limitOf), parse, storableBody].map(onlyWithBody);
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
  // Paths are what SPEC and the OpenAPI document spell: `/USERS` or `/users/` is an unknown path
  // (404), never a way around the rate limits and key checks, which match paths as spelled.
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  // Which X-Forwarded-For hops name the client (req.ip): none unless TRUST_PROXY says so.
  app.set('trust proxy', config.TRUST_PROXY);
  app.use(requestId, observe(metrics, logger, container.resolve(RequestActivity)), requireHost);
  mountRoutes(
    app,
    api,
    operatorRoutes({
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
  app.use(apiReferenceRouter());
  if (surface === 'full') {
    app.use(consoleRouter(config));
    const replayGate = refuseWhileReadModelsNeedReplay(new ReplayGate(container.resolve<ReadConsistency>(TOKENS.ReadConsistency)));
    // Inbound notifications take no API key and read raw bytes (SPEC §11): before the JSON body.
    // Refused (503, the provider sends again) while a read model needs a replay, like every request below.
    mountRoutes(app, api, revenueNotificationRoutes(container, replayGate));
    // SPEC §15: the WinWinKit-compatible mount (on by default); off, it is an unknown path.
    const winwinkit = config.COMPAT_WINWINKIT === 'on';
    const keyed = ['/users', '/codes', '/store', '/admin', ...(winwinkit ? [WINWINKIT_MOUNT] : [])];
    // The app's operations, mounted natively and (the same route objects) under the WinWinKit mount.
    const appRoutes = [...userRoutes(container), ...transactionRoutes(container), ...codeRoutes(container), ...storeRoutes(container)];
    const nativeRoutes = [
      ...appRoutes,
      ...adminStoreRoutes(container),
      ...adminRoutes(container),
      ...adminRevenueRoutes(container),
      ...adminAnalyticsRoutes(container),
      // After the revenue routes: GET /admin/webhooks/inbound is not an endpoint id.
      ...adminWebhookRoutes(container),
      ...adminTransactionRoutes(container),
      ...adminRuleRoutes(container),
      ...adminReviewRoutes(container),
      ...adminUserRoutes(container),
    ];
    const compatRoutes = winwinkit ? winwinkitRoutes(container, appRoutes) : [];
    // Pages on the origins CORS_ORIGINS names may call the app's client-key operations (a preflight takes no key).
    if (config.CORS_ORIGINS.length > 0) {
      const clientOperations = [...appRoutes, ...compatRoutes].filter((declaration) => declaration.auth !== 'secret');
      app.use(browserAccess(config.CORS_ORIGINS, pathMatcher(clientOperations)));
    }
    // A known path with another method is 405 whoever asks, before any key is checked.
    app.use(methodGate([...nativeRoutes, ...compatRoutes]));
    app.use(keyed, requireKey(keys));
    app.use('/admin', requireSecretKey);
    app.use(secretKeyGate([...nativeRoutes, ...compatRoutes]));
    app.use(keyed, replayGate);
    app.use(
      keyed,
      refuseCommandsWhileCatchingUp(
        new CatchUpGuard(container.resolve<EventStore>(TOKENS.EventStore), container.resolve<ReadConsistency>(TOKENS.ReadConsistency), config.READY_MAX_LAG),
      ),
    );
    const rateLimits =
      config.RATE_LIMITS === 'on'
        ? new RateLimits(config, container.resolve<RateLimitStore>(TOKENS.RateLimitStore), container.resolve<Clock>(TOKENS.Clock))
        : null;
    app.use(jsonBody());
    // After the body (POST /users names its user there); a body refused before it still costs the caller.
    if (rateLimits) app.use(rateLimits.bodyRefusals(), rateLimits.middleware());
    mountRoutes(app, api, nativeRoutes);
    if (winwinkit) mountRoutes(app, api, compatRoutes);
    if (rateLimits) app.use(rateLimits.claimOutcomes());
  }

  app.use(pathNotFound);
  app.use(errorHandler(logger));
  return app;
}
