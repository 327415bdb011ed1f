import type { Request } from 'express';
import type { z, ZodError, ZodIssue, ZodObject, ZodTypeAny } from 'zod';
import { isJsonObject, valueAt } from '../domain/json-object.js';
import { ApiError } from './errors.js';

/** A JSON Pointer (RFC 6901) to `path` in a body: the `source` of a validation error. */
export function pointer(path: readonly PropertyKey[]): string {
  return `/${path.map((part) => String(part).replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
}

/**
 * The issue to report: for a value that matches no member of a union (which zod reports at the
 * union itself, with no path), the issue of the member that speaks of a field the client sent
 * (`{"since": 5}` is wrong about `since`, not about a missing `after_position`), else of the one
 * that got furthest (the longest path), so the answer still names the field.
 */
function specificIssue(issue: ZodIssue, input: unknown): ZodIssue {
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return issue;
  const union = valueAt(input, issue.path);
  // Member issues' paths start at the union's own place.
  const members = issue.errors.flatMap((member) => (member[0] ? [specificIssue(member[0], union)] : []));
  const rank = (candidate: ZodIssue) => [valueAt(union, candidate.path) === undefined ? 0 : 1, candidate.path.length] as const;
  const better = (next: ZodIssue, found: ZodIssue) => {
    const [a, b] = [rank(next), rank(found)];
    return a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]);
  };
  const best = members.reduce<ZodIssue | null>((found, next) => (found === null || better(next, found) ? next : found), null);
  return best === null ? issue : { ...best, path: [...issue.path, ...best.path] };
}

function badRequest(error: ZodError, input: unknown, prefix = ''): ApiError {
  const issue = specificIssue(error.issues[0]!, input);
  const where = pointer(issue.path);
  const field = issue.path.length > 0 ? `${prefix}${where}` : null;
  return new ApiError('BAD_REQUEST', `${issue.path.length > 0 ? `${issue.path.join('.')}: ` : ''}${issue.message}`, field);
}

/** Whether a body schema asks for nothing (every field optional): such a body may be left out. */
export function bodyIsOptional(schema: ZodTypeAny): boolean {
  return schema.safeParse({}).success;
}

/** The JSON body parsed by `schema`: 400 BODY_INVALID when not an object, BAD_REQUEST per field. */
export function parseBody<S extends ZodTypeAny>(req: Request, schema: S): z.infer<S> {
  // No body (or an empty one) where every field is optional reads as {} (rotate-secret's overlap).
  const body: unknown = req.body === undefined && bodyIsOptional(schema) ? {} : req.body;
  if (!isJsonObject(body)) {
    throw new ApiError('BODY_INVALID', 'The body must be a JSON object');
  }
  const result = schema.safeParse(body);
  if (!result.success) throw badRequest(result.error, body);
  return result.data;
}

/** A path parameter parsed by `schema`; errors name it as `path:/name`. */
export function parsePathParam<S extends ZodTypeAny>(req: Request, name: string, schema: S): z.infer<S> {
  const result = schema.safeParse(req.params[name]);
  if (!result.success) throw new ApiError('BAD_REQUEST', `${name}: ${result.error.issues[0]!.message}`, `path:/${name}`);
  return result.data;
}

/**
 * The query parsed by `schema`; errors name the parameter as `query:/name`. A parameter whose
 * name or value is not validly percent-encoded UTF-8 (`%ED%A0%80`, `%FF`, `%zz`: the parser would
 * read them as U+FFFD or as they are), or that the operation does not take (a misspelt or
 * bracketed name, `stream_prefix[]`), is refused rather than read as something else or ignored.
 */
export function parseQuery<S extends ZodObject>(req: Request, schema: S): z.infer<S> {
  for (const [name, value] of rawQueryParameters(req.originalUrl)) {
    const decodedName = percentDecoded(name);
    const source = `query:${pointer([decodedName ?? name])}`;
    if (decodedName === null || percentDecoded(value) === null) {
      throw new ApiError('BAD_REQUEST', `${decodedName ?? name}: not validly percent-encoded UTF-8`, source);
    }
    if (!Object.hasOwn(schema.shape, decodedName)) {
      const known = Object.keys(schema.shape).join(', ');
      throw new ApiError('BAD_REQUEST', `${decodedName}: not a parameter of this operation (it takes ${known || 'none'})`, source);
    }
  }
  const result = schema.safeParse(req.query);
  if (!result.success) throw badRequest(result.error, req.query, 'query:');
  return result.data;
}

/** The query string's parameters as sent: name and value, neither decoded. */
function rawQueryParameters(url: string): [string, string][] {
  const start = url.indexOf('?');
  if (start < 0) return [];
  return url
    .slice(start + 1)
    .split('&')
    .filter((part) => part !== '')
    .map((part) => {
      const equals = part.indexOf('=');
      return equals < 0 ? [part, ''] : [part.slice(0, equals), part.slice(equals + 1)];
    });
}

/** A query component decoded (`+` is a space), or null when it is not valid percent-encoded UTF-8. */
function percentDecoded(text: string): string | null {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}
