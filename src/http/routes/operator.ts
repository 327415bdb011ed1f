import { type RequestHandler, Router } from 'express';
import swaggerUi from 'swagger-ui-express';
import type { Config } from '../../config.js';
import type { EventStore } from '../../ports/event-store.js';
import type { ReadConsistency } from '../../ports/read-consistency.js';
import type { ReadStore } from '../../ports/read-store.js';
import { projectionLags, StallWatch } from '../../application/projections/projection-lag.js';
import { needsReplay } from '../../application/projections/replay-gate.js';
import type { ReactionHealth } from '../../application/reactions/reaction-runner.js';
import type { Metrics } from '../../observability/metrics.js';
import { ERROR_CODES } from '../error-codes.js';
import { ApiError, errorBody, methodNotAllowed } from '../errors.js';
import type { ApiDescription } from '../openapi.js';
import { type AnyRoute, route } from '../route.js';
import { labelRoute } from '../route-label.js';
import type { webhookHealthOut } from '../schemas/webhooks.js';
import { healthResponse, metricsText, openApiDocument, readinessReport, readinessResponse } from '../schemas/operator.js';
import { z } from '../schemas/zod-openapi.js';

export interface OperatorDeps {
  config: Config;
  eventStore: EventStore;
  readStore: ReadStore;
  consistency: ReadConsistency;
  metrics: Metrics;
  api: ApiDescription;
  /** The process managers' state when this process runs them, else null. */
  reactions: () => ReactionHealth | null;
  /** Outgoing deliveries: disabled endpoints, partner refusals (reported; readiness does not depend on them). */
  webhooks?: () => Promise<z.infer<typeof webhookHealthOut>>;
}

/**
 * Readiness: stores reachable, no projection held at a poison event or built by another version,
 * all within READY_MAX_LAG and none stalled behind the log (StallWatch).
 */
async function readiness(deps: OperatorDeps, stalls: StallWatch) {
  const { eventStore, readStore, consistency, config } = deps;
  // A store that can no longer make a write durable is not ready, however well it reads.
  const failure = eventStore.writeFailure?.();
  if (failure) throw failure;
  const head = await eventStore.headPosition();
  await readStore.checkpoint('readiness-probe');
  const now = Date.now();
  const projections = (await projectionLags(eventStore, consistency, config.READY_MAX_LAG)).map((lag) => ({
    name: lag.status.name,
    checkpoint: lag.status.checkpoint?.toString() ?? null,
    lag: lag.caughtUp ? lag.behind : `>${config.READY_MAX_LAG}`,
    caught_up: lag.caughtUp && !stalls.stalled(lag, now),
    needs_replay: needsReplay(lag.status),
    failure: lag.status.failure,
  }));
  const reactions = deps.reactions();
  const ready = projections.every((projection) => projection.caught_up && !projection.needs_replay && projection.failure === null) && !reactions?.failure;
  const webhooks = deps.webhooks ? await deps.webhooks() : null;
  return { ready, head: head?.toString() ?? null, projections, reactions, webhooks };
}

/** Health, readiness, metrics and the API description: no key, served on both surfaces. */
export function operatorRoutes(deps: OperatorDeps): AnyRoute[] {
  const operator = { tags: ['operator'], auth: 'none' as const, errors: [] };
  const unreachable = z
    .object({
      errors: z.array(z.object({ code: z.enum(['SERVICE_UNAVAILABLE']), status: z.literal(503), message: z.string(), source: z.null() }).strict()).min(1),
    })
    .strict();
  let cached: object | null = null;
  const stalls = new StallWatch();
  const document = () => (cached ??= deps.api.document());
  return [
    route({
      ...operator,
      method: 'get',
      path: '/healthz',
      operationId: 'getHealth',
      summary: 'Liveness: the process answers',
      responses: { 200: { description: 'Alive', schema: healthResponse } },
      async handle() {
        return { status: 200, body: { data: { status: 'ok' } } };
      },
    }),
    route({
      ...operator,
      method: 'get',
      path: '/readyz',
      operationId: 'getReadiness',
      summary: 'Readiness: stores reachable, projections caught up within READY_MAX_LAG and not held at a failing event',
      responses: {
        200: { description: 'Ready', schema: readinessResponse },
        503: {
          description: `Not ready (the report says why), or a store is unreachable (\`SERVICE_UNAVAILABLE\`: ${ERROR_CODES.SERVICE_UNAVAILABLE.meaning})`,
          schema: z.union([z.object({ data: readinessReport }).strict(), unreachable]),
        },
      },
      async handle() {
        try {
          const report = await readiness(deps, stalls);
          return { status: report.ready ? 200 : 503, body: { data: report } };
        } catch (error) {
          const unavailable = new ApiError('SERVICE_UNAVAILABLE', `A backing store is unreachable: ${(error as Error).message}`);
          return { status: unavailable.status, body: errorBody(unavailable.toJSON()) };
        }
      },
    }),
    route({
      ...operator,
      method: 'get',
      path: '/metrics',
      operationId: 'getMetrics',
      summary: 'Prometheus metrics: requests, latencies, appends, projection lag',
      responses: { 200: { description: 'The metrics', schema: metricsText, contentType: 'text/plain' } },
      async handle({ res }) {
        res.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics());
        return { raw: true };
      },
    }),
    route({
      ...operator,
      method: 'get',
      path: '/openapi.json',
      operationId: 'getOpenApiDocument',
      summary: 'This OpenAPI 3.1 document (browsable at /docs)',
      responses: { 200: { description: 'The document', schema: openApiDocument } },
      async handle() {
        return { status: 200, body: document() };
      },
    }),
  ];
}

/**
 * What the page at /docs/ loads. The package's other files (its stock page reading a third-party
 * document, its README, source maps) are the API's 404.
 */
const SWAGGER_UI_FILES = new Set([
  '/swagger-ui.css',
  '/swagger-ui-bundle.js',
  '/swagger-ui-standalone-preset.js',
  '/swagger-ui-init.js',
  '/favicon-16x16.png',
  '/favicon-32x32.png',
]);

/** The API reference to browse, from /openapi.json. */
export function apiReferenceRouter(): Router {
  const router = Router({ caseSensitive: true, strict: true });
  // Another method on one of its files is 405, as on every known path (SPEC §1).
  const otherMethod: RequestHandler = (req, res, next) => (SWAGGER_UI_FILES.has(req.path) ? methodNotAllowed(['GET'])(req, res, next) : next());
  const files = Router().use(swaggerUi.serveFiles(undefined, { swaggerUrl: '/openapi.json' }), otherMethod);
  const assets = labelRoute('/docs/*', files);
  // Swagger UI's script and assets, then its page at /docs only: another path under it is the
  // API's 404, another method on the page 405 (setup alone would answer both with the page).
  router.use('/docs', (req, res, next) => {
    res.setHeader('content-security-policy', "frame-ancestors 'none'");
    if (req.path === '/' || SWAGGER_UI_FILES.has(req.path)) assets(req, res, next);
    else next();
  });
  router.get(['/docs', '/docs/'], swaggerUi.setup(undefined, { swaggerUrl: '/openapi.json' }));
  router.all(['/docs', '/docs/'], methodNotAllowed(['GET']));
  return router;
}
