import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { ZodTypeAny } from 'zod';
import { BODY_METHODS } from './body-guard.js';
import { ERROR_CODES, type ErrorCode } from './error-codes.js';
import { bodyIsOptional } from './validation.js';
import { z } from './schemas/zod-openapi.js';

type Request = NonNullable<RouteConfig['request']>;

export interface OperationDoc {
  method: RouteConfig['method'];
  /** OpenAPI path, e.g. /users/{app_user_id}. */
  path: string;
  /** Stable, unique name client generators use, e.g. getUser. */
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  body?: ZodTypeAny;
  /**
   * The body of an operation that reads it as raw bytes (a signed notification: the signature
   * covers the bytes): documented as the request body, checked by the handler, adding none of
   * the codes of a parsed JSON body.
   */
  rawBody?: ZodTypeAny;
  params?: Request['params'];
  query?: Request['query'];
  responses: Record<number, { description: string; schema?: ZodTypeAny; contentType?: string }>;
  /**
   * The codes of this operation's own rules (NOT_FOUND.*, CLAIM.*, …). The codes every operation
   * of its kind can answer (key, body, parameters, 500, 503) are added from `auth`, `body`,
   * `params` and `query`.
   */
  errors: ErrorCode[];
  /** Who may call it: `client` (any key, the default), `secret` (a secret key) or `none`. */
  auth?: 'client' | 'secret' | 'none';
  /** With `auth: 'none'`: how the sender proves who it is instead (a provider's token or signature), by scheme name; any one is enough. */
  senderAuth?: Record<string, SenderScheme>;
}

/** An OpenAPI security scheme a sender without an API key authenticates by. */
export type SenderScheme =
  | { type: 'apiKey'; in: 'header' | 'query'; name: string; description: string }
  | { type: 'http'; scheme: 'bearer'; bearerFormat: string; description: string };

/** The tags operations are grouped under, in the order viewers show them; each operation's tags must be among them. */
const TAGS: { name: string; description: string }[] = [
  { name: 'users', description: 'Users, claims and their rewards' },
  { name: 'credits', description: 'Credit withdrawals and grants by hand' },
  { name: 'codes', description: 'Resolving referral, promo and affiliate codes' },
  { name: 'store', description: 'Store (App Store) offer codes' },
  { name: 'transactions', description: 'Store transactions the app links to its user (revenue matching)' },
  {
    name: 'compat: winwinkit',
    description: "The same operations in WinWinKit's wire format under /compat/winwinkit, for apps on WinWinKit's SDKs (docs/winwinkit.md)",
  },
  { name: 'admin: rewards', description: 'Reward definitions and code pools' },
  { name: 'admin: programs', description: 'Referral programs' },
  { name: 'admin: promo codes', description: 'Promo codes' },
  { name: 'admin: affiliates', description: 'Affiliates' },
  { name: 'admin: audit', description: 'Event log and credit ledgers' },
  { name: 'admin: privacy', description: "Erasure and export of a user's personal data" },
  { name: 'admin: revenue', description: 'Revenue notifications received, attribution and store account tokens' },
  { name: 'admin: analytics', description: 'Daily figures and top codes for the operator console' },
  { name: 'admin: webhooks', description: 'Webhook endpoints, their deliveries, replays and secrets' },
  { name: 'admin: fraud rules', description: 'Fraud rules checked on claims' },
  { name: 'admin: reviews', description: 'Claims held for review by a fraud rule' },
  { name: 'webhooks in', description: 'Revenue notifications from the stores, Stripe and RevenueCat' },
  { name: 'operator', description: 'Health, readiness, metrics and this description' },
];

/** Every code an operation can answer, from its own list and its shape. */
function operationErrorCodes(doc: Pick<OperationDoc, 'method' | 'path' | 'errors' | 'auth' | 'body'>): ErrorCode[] {
  // Any request can be refused before it reaches its route: a request line and headers over
  // 64 KiB, HTTP that cannot be parsed (a malformed request line), or a request that does not
  // arrive whole in time (src/http/http-server.ts).
  const codes = new Set<ErrorCode>(['BAD_REQUEST', 'REQUEST_TIMEOUT']);
  // A path parameter sent empty (`/users//claim-code`) leaves a path no operation has.
  if (doc.path.includes('{')) codes.add('PATH_ERROR');
  const auth = doc.auth ?? 'client';
  if (auth !== 'none') codes.add('UNAUTHORIZED');
  if (auth === 'secret') codes.add('FORBIDDEN');
  // A keyed POST, PUT or PATCH has its body checked even when it takes none (JSON, size, storable).
  const bodyChecked = doc.body !== undefined || (auth !== 'none' && BODY_METHODS.has(doc.method.toUpperCase()));
  if (bodyChecked) for (const code of ['BODY_INVALID', 'BODY_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'] as const) codes.add(code);
  for (const code of doc.errors) codes.add(code);
  if (auth !== 'none') codes.add('RATE_LIMITED');
  if (auth !== 'none') codes.add('SERVICE_UNAVAILABLE');
  codes.add('INTERNAL_SERVER_ERROR');
  return [...codes];
}

/** The error body of one status, its `code` limited to the codes the operation answers with it. */
function errorResponse(status: number, codes: ErrorCode[]) {
  const first = codes.find((code) => 'example' in ERROR_CODES[code]) ?? codes[0]!;
  const entry: { meaning: string; example?: { message: string; source: string | null } } = ERROR_CODES[first];
  const example = entry.example ?? { message: entry.meaning, source: null };
  const schema = z
    .object({
      errors: z
        .array(
          z
            .object({
              code: z.enum(codes as [ErrorCode, ...ErrorCode[]]),
              status: z.literal(status).openapi({ type: 'integer', enum: [status] }),
              message: z.string().openapi({ description: 'For humans; may change. Branch on `code`.' }),
              source: z.string().nullable().openapi({
                description: 'The offending part: a JSON pointer into the body (`/amount`), `path:/name`, `query:/name` or `header:name`; or null.',
              }),
            })
            .strict(),
        )
        .min(1),
    })
    .strict();
  return {
    description: codes.map((code) => `\`${code}\`: ${ERROR_CODES[code].meaning}`).join('\n\n'),
    content: { 'application/json': { schema, example: { errors: [{ code: first, status, ...example }] } } },
  };
}

/** The interface's version, as the customer's API declares it (seed-api.md, Versioning); not the package's. */
const API_VERSION = '1.0';

const DESCRIPTION = [
  'Self-hosted referral, affiliate and promo-code backend for subscription apps.',
  '',
  'Success bodies are `{"data": …}`. Failures are `{"errors": [{code, status, message, source}]}`: branch on `code`, which is stable;',
  'each response below lists the codes it can carry. Every response carries `x-request-id`.',
  "The repository's docs/ folder has the reference: error codes, settled behaviours and the event catalogue.",
].join('\n');

/** Routes describe themselves here with the same zod schemas that validate their requests. */
export class ApiDescription {
  private readonly registry = new OpenAPIRegistry();
  private readonly operationIds = new Set<string>();

  constructor() {
    this.registry.registerComponent('headers', 'RequestId', {
      description:
        'The request id: the one sent in `x-request-id` when it is 1–128 printable ASCII characters, else a generated UUID. Logs and events carry it.',
      schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,128}$' },
    });
    this.registry.registerComponent('headers', 'RateLimit', {
      description:
        'IETF draft RateLimit header, one item per budget this request counted against: `"<budget>";r=<remaining>;t=<seconds until the window resets>`, e.g. `"reads-caller";r=599;t=60, "reads-user";r=41;t=17`. Present when rate limits are on and the caller is limited (secret keys are exempt unless RATE_LIMIT_SECRET=true).',
      schema: { type: 'string' },
    });
    this.registry.registerComponent('headers', 'RateLimitPolicy', {
      description:
        'IETF draft RateLimit-Policy header, one item per budget: `"<budget>";q=<quota>;w=<window seconds>`. Budgets: `reads-caller` / `reads-user` (RATE_LIMIT_READS, default 600/60s), `commands-caller` / `commands-user` (RATE_LIMIT_COMMANDS, default 120/60s; claims count here per key + IP), `claims-user` (RATE_LIMIT_CLAIMS, default 20/3600s). A failed claim (refused with 404 or 422) costs 5.',
      schema: { type: 'string' },
    });
    this.registry.registerComponent('headers', 'RetryAfter', {
      description: 'Seconds to wait before the budget that was exceeded has room again.',
      schema: { type: 'string', pattern: '^[0-9]+$' },
    });
    this.registry.registerComponent('headers', 'RetryAfterBehind', {
      description:
        'On a 503 because the read models are behind the log (catching up, or the operations index): seconds before trying again. Absent when a store is unreachable.',
      schema: { type: 'string', pattern: '^[0-9]+$' },
    });
    this.registry.registerComponent('securitySchemes', 'apiKey', {
      type: 'apiKey',
      in: 'header',
      name: 'x-api-key',
      description: 'A client key (apps) or a secret key (admin, grants). Operations that need a secret key say so.',
    });
  }

  /** The sender schemes registered so far (two operations may share one). */
  private readonly senderSchemes = new Set<string>();

  /** The tags the operations carry: only those are declared (the mount's is absent when it is off). */
  private readonly tagsInUse = new Set<string>();

  operation(doc: OperationDoc): void {
    for (const tag of doc.tags) {
      if (!TAGS.some((declared) => declared.name === tag)) throw new Error(`${doc.operationId}: tag ${tag} is not declared in TAGS`);
      this.tagsInUse.add(tag);
    }
    if (this.operationIds.has(doc.operationId)) throw new Error(`operationId ${doc.operationId} is used twice`);
    this.operationIds.add(doc.operationId);
    const responses: RouteConfig['responses'] = {};
    for (const [status, response] of Object.entries(doc.responses)) {
      responses[status] = response.schema
        ? { description: response.description, content: { [response.contentType ?? 'application/json']: { schema: response.schema } } }
        : { description: response.description };
    }
    const byStatus = new Map<number, ErrorCode[]>();
    for (const code of operationErrorCodes(doc)) {
      const status = ERROR_CODES[code].status;
      byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
    }
    for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) responses[String(status)] = errorResponse(status, codes);
    const limited = (doc.auth ?? 'client') !== 'none';
    for (const [status, response] of Object.entries(responses)) {
      if ('$ref' in response) continue;
      response.headers = {
        'x-request-id': { $ref: '#/components/headers/RequestId' },
        ...(limited ? { RateLimit: { $ref: '#/components/headers/RateLimit' }, 'RateLimit-Policy': { $ref: '#/components/headers/RateLimitPolicy' } } : {}),
        ...(status === '429' ? { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } } : {}),
        ...(status === '503' ? { 'Retry-After': { $ref: '#/components/headers/RetryAfterBehind' } } : {}),
      };
    }
    const auth = doc.auth ?? 'client';
    for (const [name, scheme] of Object.entries(doc.senderAuth ?? {})) {
      if (this.senderSchemes.has(name)) continue;
      this.senderSchemes.add(name);
      this.registry.registerComponent('securitySchemes', name, scheme);
    }
    this.registry.registerPath({
      method: doc.method,
      path: doc.path,
      operationId: doc.operationId,
      summary: doc.summary,
      description: doc.description ?? (auth === 'secret' ? 'Needs a secret key.' : undefined),
      tags: doc.tags,
      security: auth === 'none' ? Object.keys(doc.senderAuth ?? {}).map((name) => ({ [name]: [] })) : [{ apiKey: [] }],
      request: {
        ...(doc.body || doc.rawBody
          ? { body: { content: { 'application/json': { schema: (doc.body ?? doc.rawBody)! } }, required: !(doc.body && bodyIsOptional(doc.body)) } }
          : {}),
        ...(doc.params ? { params: doc.params } : {}),
        ...(doc.query ? { query: doc.query } : {}),
      },
      responses,
    });
  }

  document(): object {
    return new OpenApiGeneratorV31(this.registry.definitions).generateDocument({
      openapi: '3.1.0',
      info: {
        title: 'Referral & Rewards Service',
        version: API_VERSION,
        description: DESCRIPTION,
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: '/', description: 'The service that serves this document' }],
      tags: TAGS.filter((tag) => this.tagsInUse.has(tag.name)),
    });
  }
}
