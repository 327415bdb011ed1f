import { setImmediate } from 'node:timers/promises';
import express from 'express';
import type { Request, RequestHandler, Response, Router } from 'express';
import { z, type ZodObject, type ZodTypeAny } from 'zod';
import { requireSecretKey } from './auth.js';
import { BODY_METHODS } from './body-guard.js';
import { isBadPathEncoding, methodNotAllowed, pathNotFound } from './errors.js';
import type { ApiDescription, OperationDoc } from './openapi.js';
import { parseBody, parsePathParam, parseQuery } from './validation.js';

type Responses = OperationDoc['responses'];
type Parsed<S> = S extends ZodTypeAny ? z.output<S> : Record<string, never>;

/** What a handler answers: one of its declared statuses (checked when mounted) and its body. */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** A handler's input: path parameters, query and body already parsed by the declared schemas. */
interface RouteInput<P, Q, B> {
  params: Parsed<P>;
  query: Parsed<Q>;
  body: Parsed<B>;
  req: Request;
  res: Response;
}

/**
 * One operation of the HTTP API, declared once: its OpenAPI entry (path in OpenAPI syntax,
 * schemas, statuses, error codes, who may call it) and its handler. `mountRoutes` builds the
 * express route and the OpenAPI operation from the same object, so they cannot disagree.
 */
export interface Route<
  P extends ZodObject | undefined = ZodObject | undefined,
  Q extends ZodObject | undefined = ZodObject | undefined,
  B extends ZodTypeAny | undefined = ZodTypeAny | undefined,
  R extends Responses = Responses,
> extends Omit<OperationDoc, 'params' | 'query' | 'body' | 'responses'> {
  params?: P;
  query?: Q;
  body?: B;
  responses: R;
  /** Express middleware that runs before parsing (e.g. reading the raw body of a notification). */
  before?: RequestHandler[];
  /**
   * The answer. A handler that writes the response itself (a text or streamed body) returns
   * `{ status, raw: true }` after writing.
   */
  handle(input: RouteInput<P, Q, B>): Promise<Reply | { raw: true }>;
}

// biome-ignore lint/suspicious/noExplicitAny: a list of routes holds routes of any schemas.
export type AnyRoute = Route<any, any, any, any>;

/** Declares a route with its types inferred from the schemas (an identity at run time). */
export function route<
  P extends ZodObject | undefined = undefined,
  Q extends ZodObject | undefined = undefined,
  B extends ZodTypeAny | undefined = undefined,
  R extends Responses = Responses,
>(declaration: Route<P, Q, B, R>): Route<P, Q, B, R> {
  return declaration;
}

/** `/users/{app_user_id}` (OpenAPI) → `/users/:app_user_id` (express). */
export function expressPath(openApiPath: string): string {
  return openApiPath.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

function parseParams(req: Request, params: ZodObject | undefined): Record<string, unknown> {
  const parsed: Record<string, unknown> = {};
  if (!params) return parsed;
  for (const [name, schema] of Object.entries(params.shape)) parsed[name] = parsePathParam(req, name, schema as ZodTypeAny);
  return parsed;
}

/**
 * A keyed POST, PUT or PATCH that takes no body (approve, reject, ping) is documented as checking
 * one sent anyway (src/http/openapi.ts, operationErrorCodes): it must be a JSON object, as any
 * body (400 BODY_INVALID), not `[]`, `"x"` or `null` acted on as if absent.
 */
function unusedBody(req: Request, declaration: AnyRoute): Record<string, never> {
  if (declaration.auth !== 'none' && BODY_METHODS.has(req.method) && req.body !== undefined) parseBody(req, z.object({}));
  return {};
}

/**
 * What an admin operation that declares no query takes: nothing. A parameter sent anyway
 * (`GET /admin/programs?limit=1`) is 400, as on the admin listings that take some: it would
 * otherwise be ignored, and the whole list answered as if it were read.
 */
const NO_QUERY = z.object({});

function handler(declaration: AnyRoute): RequestHandler {
  return async (req, res) => {
    const input = {
      params: parseParams(req, declaration.params),
      query: declaration.query ? parseQuery(req, declaration.query) : declaration.path.startsWith('/admin/') ? parseQuery(req, NO_QUERY) : {},
      body: declaration.body ? parseBody(req, declaration.body) : unusedBody(req, declaration),
      req,
      res,
    };
    const reply = await declaration.handle(input);
    if ('raw' in reply) return;
    if (!(reply.status in declaration.responses)) throw new Error(`${declaration.operationId} answered an undeclared status ${reply.status}`);
    await res.locals.beforeReply?.();
    for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
    res.status(reply.status);
    if (reply.body === undefined) res.end();
    else res.json(reply.body);
  };
}

/**
 * Answers 200 with a JSON document written piece by piece as the pieces come (a document too big
 * to build whole in memory, such as a user's export): each piece waits for the socket to take
 * the last one, so a slow reader holds one piece, not the document, and other requests are
 * served between pieces, however fast the reader. A failure after the first piece cuts the response short (the client sees it incomplete, never as whole), and is rethrown.
 * Stops early when the client goes away.
 */
export async function sendJsonPieces(res: Response, pieces: AsyncIterable<string>): Promise<{ raw: true }> {
  await res.locals.beforeReply?.();
  res.status(200).type('application/json');
  try {
    for await (const piece of pieces) {
      if (res.destroyed) break;
      if (!res.write(piece)) await drainedOrClosed(res);
      // The stores answer synchronously (SQLite), and a socket that takes a piece at once says
      // 'drain' within the same turn: without a turn of the event loop here, a fast reader would
      // hold every other request until the last piece.
      await setImmediate();
    }
  } catch (error) {
    res.destroy();
    throw error;
  }
  res.end();
  return { raw: true };
}

function drainedOrClosed(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * Answers 405 (with the Allow header) for a known path asked with a method it does not have, and
 * 404 `PATH_ERROR` for a path no route has (SPEC §1), and passes the routes' own requests on:
 * mounted before the key checks and the body parser, so neither answer depends on the key or the
 * body sent (mountRoutes' own 405 stays for the routes mounted without it).
 */
export function methodGate(routes: AnyRoute[]): Router {
  const gate = express.Router({ caseSensitive: true, strict: true });
  const byPath = methodsByPath(routes);
  const allows = (allowed: string[], method: string) => allowed.includes(method) || (method === 'HEAD' && allowed.includes('GET'));
  for (const [path, allowed] of byPath) {
    gate.route(expressPath(path)).all((req, res, next) => {
      if (allows(allowed, req.method)) next('router');
      else methodNotAllowed(allowed)(req, res, next);
    });
  }
  gate.use(pathNotFound);
  // A known path whose parameter is not validly percent-encoded (express cannot match it): its
  // method is checked all the same, then it is passed on, so the route refuses it (400) after the
  // key check and the rate limits, like any other bad request of a limited route.
  const undecoded = [...byPath].map(([path, allowed]) => ({ pattern: undecodedPattern(path), allowed }));
  gate.use((error: unknown, req: Request, res: Response, next: (error?: unknown) => void) => {
    if (!isBadPathEncoding(error)) return next(error);
    const known = undecoded.find(({ pattern }) => pattern.test(req.path));
    if (known && !allows(known.allowed, req.method)) return methodNotAllowed(known.allowed)(req, res, next);
    next('router');
  });
  return gate;
}

/**
 * 403 FORBIDDEN, before the body, the rate limits and the route, for a caller without a secret
 * key on the path of an operation that needs one: the manual grant, on both surfaces, is checked
 * as early as /admin. Matched on the path as sent, so a parameter that is not validly
 * percent-encoded does not get past it.
 */
export function secretKeyGate(routes: AnyRoute[]): RequestHandler {
  const secret = pathMatcher(routes.filter((declaration) => declaration.auth === 'secret'));
  return (req, res, next) => (secret(req.path) ? requireSecretKey(req, res, next) : next());
}

/** Whether a path as sent is the path of one of these operations (each parameter one segment, not decoded). */
export function pathMatcher(routes: AnyRoute[]): (path: string) => boolean {
  const patterns = [...new Set(routes.map((declaration) => declaration.path))].map(undecodedPattern);
  return (path) => patterns.some((pattern) => pattern.test(path));
}

/** `/users/{app_user_id}` → a pattern that matches the path as sent, each parameter one segment, not decoded. */
function undecodedPattern(openApiPath: string): RegExp {
  const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(
    `^${openApiPath
      .split(/\{[A-Za-z0-9_]+\}/)
      .map(literal)
      .join('[^/]+')}$`,
  );
}

function methodsByPath(routes: AnyRoute[]): Map<string, string[]> {
  const byPath = new Map<string, string[]>();
  for (const declaration of routes) byPath.set(declaration.path, [...(byPath.get(declaration.path) ?? []), declaration.method.toUpperCase()]);
  return byPath;
}

/**
 * Describes each route in `api` and mounts it on `router`, in the order given. Routes that share
 * a path share one express route, which answers other methods with 405 and an Allow header.
 */
export function mountRoutes(router: Router | express.Express, api: ApiDescription, routes: AnyRoute[]): void {
  const byPath = new Map<string, AnyRoute[]>();
  for (const declaration of routes) {
    const { handle: _handle, before: _before, ...doc } = declaration;
    api.operation(doc);
    byPath.set(declaration.path, [...(byPath.get(declaration.path) ?? []), declaration]);
  }
  for (const [path, declarations] of byPath) {
    const chain = router.route(expressPath(path));
    for (const declaration of declarations) {
      const guards = [...(declaration.auth === 'secret' ? [requireSecretKey] : []), ...(declaration.before ?? [])];
      chain[declaration.method as 'get' | 'post' | 'put' | 'delete' | 'patch'](...guards, handler(declaration));
    }
    chain.all(methodNotAllowed(declarations.map((declaration) => declaration.method.toUpperCase())));
  }
}
