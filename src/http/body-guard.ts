import type { Request, RequestHandler } from 'express';
import { ApiError, bodyNotUtf8, bodyTooLarge } from './errors.js';
import { isJsonObject } from '../domain/json-object.js';
import { pointer } from './validation.js';

/** Methods whose body the service reads and checks (JSON, size, storable); others' bodies are ignored. */
export const BODY_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH']);

/**
 * 413 at once for a body whose declared `content-length` passes `limit`, before reading a byte of
 * it: the body parsers read a refused body to its end before answering (a client announcing a
 * gigabyte would be read for minutes). The connection closes after the answer, so the rest of
 * the body is never read either.
 */
export function refuseDeclaredOverLimit(limitOf: (req: Request) => number): RequestHandler {
  return (req, res, next) => {
    const declared = Number(req.headers['content-length']);
    const limit = limitOf(req);
    if (!(Number.isFinite(declared) && declared > limit)) return next();
    res.setHeader('connection', 'close');
    next(bodyTooLarge(limit));
  };
}

/** Deeper JSON is refused: it would break storage (SQLite's JSON functions stop at 1000). */
const MAX_JSON_DEPTH = 32;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A string that can be stored as UTF-8 (no lone UTF-16 surrogate halves). */
export function isWellFormed(value: string): boolean {
  return !LONE_SURROGATE.test(value);
}

/** The first place in `value` that cannot be stored faithfully, or null. */
export function unstorablePart(value: unknown, path: string[] = []): { source: string; message: string } | null {
  if (typeof value === 'string') return isWellFormed(value) ? null : { source: pointer(path), message: 'contains a lone UTF-16 surrogate' };
  if (value === null || typeof value !== 'object') return null;
  if (path.length >= MAX_JSON_DEPTH) return { source: pointer(path), message: `nests deeper than ${MAX_JSON_DEPTH} levels` };
  for (const [key, item] of Object.entries(value)) {
    if (!isWellFormed(key)) return { source: pointer(path), message: 'has a key with a lone UTF-16 surrogate' };
    const found = unstorablePart(item, [...path, key]);
    if (found) return found;
  }
  return null;
}

/** Whether the request says it carries a body: a length above 0, or chunks. */
export function sendsBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/** 400 for a parsed body that could not be stored as sent. */
export const storableBody: RequestHandler = (req, res, next) => {
  // An empty body is no body (SPEC §9: not JSON), though express.json reads it as {}.
  if (!sendsBody(req)) req.body = undefined;
  if (res.locals.bodyNotUtf8 === true) throw bodyNotUtf8();
  // Only an object can be stored: any other body is BODY_INVALID where a route reads one
  // (parseBody), however deep it nests, and ignored where none is read.
  const found = isJsonObject(req.body) ? unstorablePart(req.body) : null;
  if (found) throw new ApiError(400, 'BAD_REQUEST', `The body ${found.message}`, found.source);
  next();
};
