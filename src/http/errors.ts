import type { ErrorRequestHandler, RequestHandler } from 'express';
import { DomainError, StacklessError } from '../domain/domain-error.js';
import { StoreUnavailableError } from '../ports/event-store.js';
import { ReadModelsBehindError } from '../ports/read-consistency.js';
import type { Logger } from '../ports/logger.js';
import { BODY_LIMIT, sizeText } from './body-limits.js';
import { type ErrorCode, statusOf } from './error-codes.js';

export interface ErrorObject {
  code: string;
  status: number;
  message: string;
  source: string | null;
}

/**
 * An error answered as-is: stable code, human message and the offending part. Its status is the
 * code's in the error-code catalogue (src/http/error-codes.ts), never given again here.
 */
export class ApiError extends StacklessError {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly source: string | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = statusOf(code);
  }

  toJSON(): ErrorObject {
    return { code: this.code, status: this.status, message: this.message, source: this.source };
  }
}

/** 413 BODY_TOO_LARGE naming the limit the body passed (src/http/body-limits.ts). */
export function bodyTooLarge(limit: number): ApiError {
  return new ApiError('BODY_TOO_LARGE', `The body is larger than ${sizeText(limit)}`);
}

/** 415 for a body in a charset other than UTF-8 (JSON bodies and inbound notifications alike). */
export function charsetUnsupported(): ApiError {
  return new ApiError('UNSUPPORTED_MEDIA_TYPE', 'The body charset is not supported', 'header:content-type');
}

/** 400 BODY_INVALID for body bytes that are not UTF-8 (JSON bodies and inbound notifications alike). */
export function bodyNotUtf8(): ApiError {
  return new ApiError('BODY_INVALID', 'The body is not valid UTF-8', null);
}

/** 400 for a number JSON.parse would read as 0 though it is not (body-guard.ts, underflowingNumber), at `source`. */
export function numberTooSmall(source: string): ApiError {
  return new ApiError('BAD_REQUEST', 'The body has a number too small to store: it would read back as 0 (send 0, or the number as a string)', source);
}

export function errorBody(...errors: ErrorObject[]) {
  return { errors };
}

/** A business rule's status comes from the error-code catalogue (NOT_FOUND.* 404, the others 422). */
function fromDomainError(error: DomainError): ApiError {
  // Every code a DomainError is made with is in the catalogue (test/api/api-reference.test.ts).
  return new ApiError(error.code as ErrorCode, error.message, error.source);
}

interface HttpError {
  type?: string;
  status?: number;
  /** Set by http-errors on client errors. */
  expose?: boolean;
  message?: string;
  /** The body limit a too-large body broke (raw-body's `entity.too.large`). */
  limit?: number;
  /** The charset the body reader could not decode (body-parser's `charset.unsupported`), lowercased. */
  charset?: string;
}

/** Express's error for a path parameter that is not validly percent-encoded (`/users/%zz`). */
export function isBadPathEncoding(error: unknown): boolean {
  const { status, message } = (error ?? {}) as HttpError;
  return status === 400 && /Failed to decode param/.test(message ?? '');
}

/** Errors raised by express itself (body parsing, path decoding) mapped to SPEC §9 codes. */
function fromHttpError(error: HttpError): ApiError | null {
  switch (error.type) {
    case 'entity.parse.failed':
      return new ApiError('BODY_INVALID', 'The body is not valid JSON');
    case 'entity.too.large':
      // The JSON body limits (src/http/body-limits.ts): the bulk admin uploads', and every other body's.
      return bodyTooLarge(error.limit ?? BODY_LIMIT);
    case 'encoding.unsupported':
      return new ApiError('UNSUPPORTED_MEDIA_TYPE', 'The body encoding is not supported', 'header:content-encoding');
    case 'charset.unsupported':
      // The charset was checked before the body was read (src/http/body-guard.ts, utf8Charset): the
      // reader failing on a UTF-8 body is the process's own trouble (out of file descriptors), not the client's.
      if (error.charset === 'utf-8') return new ApiError('SERVICE_UNAVAILABLE', 'The body could not be read now; retry later');
      return charsetUnsupported();
    case 'request.aborted':
      return new ApiError('BODY_INVALID', 'The request body was not received completely');
    default:
      break;
  }
  if (isBadPathEncoding(error)) return new ApiError('BAD_REQUEST', 'The path is not validly percent-encoded', null);
  // Any other 4xx from the body reader (a corrupt compressed body, a short read, …).
  if (error.expose === true && error.status !== undefined && error.status >= 400 && error.status < 500) {
    return new ApiError('BODY_INVALID', 'The body could not be read');
  }
  return null;
}

/** The API error an error thrown by a handler or by express stands for; null for anything else (a 500). */
export function toApiError(error: unknown): ApiError | null {
  if (error instanceof ApiError) return error;
  if (error instanceof DomainError) return fromDomainError(error);
  // Read models behind the log: the message says what happened (and that nothing was done).
  if (error instanceof ReadModelsBehindError) return new ApiError('SERVICE_UNAVAILABLE', error.message);
  if (error instanceof StoreUnavailableError) return new ApiError('SERVICE_UNAVAILABLE', 'A backing store is unavailable; retry later');
  if (error !== null && typeof error === 'object') return fromHttpError(error as HttpError);
  return null;
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    // Answered already by the server itself (a body it could not read, src/http/http-server.ts)
    // while a middleware was still at work: nothing failed that the service could have done.
    if (res.headersSent && (error as NodeJS.ErrnoException | null)?.code === 'ERR_HTTP_HEADERS_SENT') return;
    const requestId = String(res.getHeader('x-request-id') ?? '');
    const known = toApiError(error);
    const apiError = known ?? new ApiError('INTERNAL_SERVER_ERROR', `Internal error (request ${requestId})`);
    // Read models behind the log: expected while they catch up, many times over (not an error to
    // log), and usually over within seconds (Retry-After).
    const behind = error instanceof ReadModelsBehindError;
    if (!known || (apiError.status >= 500 && !behind)) {
      logger.error({ err: error, requestId, method: req.method, path: req.path }, 'request failed');
    }
    if (res.headersSent) return;
    if (apiError.status === 405) res.setHeader('allow', apiError.source ?? '');
    if (behind) res.setHeader('retry-after', '5');
    res.status(apiError.status).json(errorBody(apiError.status === 405 ? { ...apiError.toJSON(), source: null } : apiError.toJSON()));
  };
}

export const pathNotFound: RequestHandler = (req) => {
  throw new ApiError('PATH_ERROR', `No such path: ${req.method} ${req.originalUrl.split('?')[0]}`);
};

/** For `router.route(path).get(...).all(methodNotAllowed(['GET']))`. */
export function methodNotAllowed(allowed: string[]): RequestHandler {
  return (req) => {
    throw new ApiError('METHOD_NOT_ALLOWED', `${req.method} is not supported here; use ${allowed.join(', ')}`, allowed.join(', '));
  };
}
