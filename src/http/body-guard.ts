import type { Request, RequestHandler } from 'express';
import { type ContentType, format as formatContentType, parse as parseContentType } from 'content-type';
import { ApiError, bodyNotUtf8, bodyTooLarge, charsetUnsupported, numberTooSmall } from './errors.js';
import { isJsonObject } from '../domain/json-object.js';
import { pointer } from './validation.js';

/**
 * Methods whose body the service reads and checks (JSON, size, storable: SPEC §1's 413 and 415
 * hold for them all, a DELETE's body included); the bodies of GET and HEAD are ignored.
 */
export const BODY_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The charsets a JSON body may name: JSON is UTF-8 (RFC 8259 §8.1), and US-ASCII is a subset of it. */
const UTF8_CHARSETS: ReadonlySet<string> = new Set(['utf-8', 'utf8', 'us-ascii', 'ascii']);

/**
 * 415 for a JSON body in a charset other than UTF-8, on the API and the inbound notifications
 * alike. A body named as one of UTF-8's other names, or as US-ASCII, is read as UTF-8 (its bytes
 * are checked as UTF-8 all the same). The header is read with `content-type`, the parser the body
 * reader (body-parser) uses, so both see the same charset (`charset = latin1` with spaces too).
 */
export const utf8Charset: RequestHandler = (req, _res, next) => {
  const header = req.headers['content-type'];
  if (header === undefined) return next();
  let parsed: ContentType;
  try {
    parsed = parseContentType(header);
  } catch {
    return next(); // not a media type: the media-type check refuses it
  }
  const charset = parsed.parameters.charset?.toLowerCase();
  if (charset === undefined || charset === 'utf-8') return next();
  if (!UTF8_CHARSETS.has(charset)) return next(charsetUnsupported());
  req.headers['content-type'] = formatContentType({ type: parsed.type, parameters: { ...parsed.parameters, charset: 'utf-8' } });
  next();
};

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
export const MAX_JSON_DEPTH = 32;

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

/**
 * Raw JSON that may hold a number too small for a double: one needs a negative exponent, or 300
 * zeros after its point (the smallest double is about 5e-324). Only such text is parsed again.
 */
const MAYBE_TINY = /\d[eE]-|\.0{300}/;

/**
 * Where the JSON body `raw` holds a number JSON.parse reads as 0 though it is not 0 (`1e-400`: too small for
 * a double), as a JSON pointer; null when it holds none. The overflow (`1e400`, Infinity) is
 * refused where numbers are checked; this, which the parsed value cannot show, from the text.
 */
export function underflowingNumber(raw: Buffer): string | null {
  // Looked for in the bytes read as Latin-1 (no UTF-8 decoding: the characters sought are ASCII).
  if (!MAYBE_TINY.test(raw.toString('latin1'))) return null;
  const text = raw.toString('utf8').replace(/^\uFEFF/, '');
  const found = Symbol('underflow');
  // The reviver's third argument (the number's source text): Node 22 and later.
  const reviver = (_key: string, value: unknown, context?: { source?: string }) =>
    value === 0 && /[1-9]/.test(context?.source?.split(/[eE]/)[0] ?? '') ? found : value;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text, reviver as (key: string, value: unknown) => unknown);
  } catch {
    return null; // not JSON: the parser says so
  }
  const walk = (value: unknown, path: string[]): string | null => {
    if (value === found) return pointer(path);
    if (value === null || typeof value !== 'object') return null;
    for (const [key, item] of Object.entries(value)) {
      const at = walk(item, [...path, key]);
      if (at !== null) return at;
    }
    return null;
  };
  return walk(parsed, []);
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
  // Where the body is an object (any other body is BODY_INVALID where a route reads one).
  if (res.locals.underflowAt && isJsonObject(req.body)) throw numberTooSmall(res.locals.underflowAt);
  // Only an object can be stored: any other body is BODY_INVALID where a route reads one
  // (parseBody), however deep it nests, and ignored where none is read.
  const found = isJsonObject(req.body) ? unstorablePart(req.body) : null;
  if (found) throw new ApiError('BAD_REQUEST', `The body ${found.message}`, found.source);
  next();
};
