import { LOG_POSITION_TEXT } from '../../ports/event-store.js';
import { REWARD_KINDS } from '../../domain/rewards/reward-kinds.js';
import { isWellFormed, MAX_JSON_DEPTH } from '../body-guard.js';
import { ApiError } from '../errors.js';
import { isJsonObject } from '../../domain/json-object.js';
import { z } from './zod-openapi.js';

/**
 * The date-times accepted, as a pattern the document carries too: upper-case `T` and `Z`, hours
 * 00–23 and minutes and seconds 00–59 (no leap second: zod's check refuses `:60`), and
 * since an offset could move 0000-01-01 or 9999-12-31 out of the four-digit years events store,
 * those two days take no offset away from UTC.
 */
const DATE_TIME =
  '^(?!0000-01-01T.*\\+(?!00:00$)|9999-12-31T.*-(?!00:00$))[0-9]{4}-[0-9]{2}-[0-9]{2}T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$';

/** ISO 8601 date-time with offset; normalised to UTC with milliseconds. */
export const dateTime = z.iso
  .datetime({ offset: true, message: 'must be an ISO 8601 date-time' })
  .regex(new RegExp(DATE_TIME), 'must fall within the years 0000 to 9999: 0000-01-01 takes no + offset, and 9999-12-31 no - offset')
  .transform((value) => new Date(value).toISOString())
  .openapi({ type: 'string', format: 'date-time', pattern: DATE_TIME, example: '2026-01-02T03:04:05.678Z' });

/**
 * Whether a `YYYY-MM-DD` day, or an ISO date-time in UTC beginning with one, names a real moment
 * (no 2026-02-30, no 99:99): it must read back as itself, day included.
 */
function isRealUtcTime(value: string): boolean {
  const time = Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value);
  return !Number.isNaN(time) && new Date(time).toISOString().startsWith(value.slice(0, 10));
}

/** A UTC calendar day, YYYY-MM-DD (the analytics and attribution ranges). */
export const utcDay = z
  .string()
  .regex(/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/, 'must be a date YYYY-MM-DD')
  .refine(isRealUtcTime, 'must be a calendar date YYYY-MM-DD')
  .openapi({ type: 'string', format: 'date', example: '2026-11-01' });

/** A range of days whose `from` is after its `to`: 400 BAD_REQUEST naming `from`. */
export function checkOrder(from: string, to: string): void {
  if (from > to) throw new ApiError('BAD_REQUEST', `from (${from}) is after to (${to})`, 'query:/from');
}

/**
 * A UUID as the document means `format: uuid`: the 8-4-4-4-12 hex syntax, any version or variant
 * bits (StoreKit tokens, webhook message ids). The pattern states it for tools that treat a format
 * as an annotation only.
 */
const UUID_PATTERN = '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$';
export const uuid = z.guid('must be a UUID').openapi({ type: 'string', format: 'uuid', pattern: UUID_PATTERN });

/** The largest position a store can hold; a cursor past it simply has nothing after it. */
const LAST_POSITION = 2n ** 63n - 1n;

/** A log position or page cursor in a query or body: up to 20 digits, as a string. */
export const logPosition = z
  .string()
  .regex(LOG_POSITION_TEXT, 'must be a log position (1 to 20 digits)')
  .transform((value) => (BigInt(value) > LAST_POSITION ? LAST_POSITION : BigInt(value)));

/** How `logPosition` is documented (its transform hides the string's pattern). */
export const logPositionDoc = { type: 'string', pattern: LOG_POSITION_TEXT.source, example: '1200' } as const;

/**
 * A query's `limit`: a whole number from 1 to `max`, in plain digits (`0x10`, `1e1`, `+5`, `5.0`
 * or ` 5` are refused, not read as numbers); `fallback` when absent.
 */
export function pageLimit(max: number, fallback: number) {
  return wholeNumberUpTo(max).default(fallback).openapi({ type: 'integer', minimum: 1, maximum: max, default: fallback });
}

/** A query's optional `limit` (as `pageLimit`) where its absence means "no limit". */
export function optionalPageLimit(max: number) {
  return wholeNumberUpTo(max).optional().openapi({ type: 'integer', minimum: 1, maximum: max });
}

function wholeNumberUpTo(max: number) {
  return z
    .string()
    .regex(/^[0-9]{1,7}$/, 'must be a whole number in plain digits')
    .transform(Number)
    .pipe(z.number().int().min(1).max(max));
}

export const outDateTime = z.string().openapi({ format: 'date-time', example: '2026-01-02T03:04:05.678Z' });

// C0 and C1 control characters, and DEL: the one definition of "control characters" in a request.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** The same characters in the document's patterns (an ECMA-262 class body, JSON-escaped once). */
const CONTROL_CLASS = '\\u0000-\\u001f\\u007f-\\u009f';

/** A string of `min`–`max` characters (Unicode code points, not UTF-16 units), storable as UTF-8. */
export function chars(min: number, max: number) {
  return z
    .string()
    .refine(isWellFormed, 'must not contain lone UTF-16 surrogates')
    .refine((value) => {
      const length = [...value].length;
      return length >= min && length <= max;
    }, `must be ${min} to ${max} characters`)
    .openapi({ type: 'string', minLength: min, maxLength: max });
}

/** A name or label of at most `max` characters, not empty. */
export const text = (max: number) => chars(1, max);

/**
 * Identifiers a request looks up rather than defines, so that one no definition has is the
 * operation's own answer (CLAIM.CODE_NOT_FOUND, an empty page…), not a 400. What a definition
 * may be named is stricter: `rewardKey` and `configuredCode` (schemas/admin.ts). A code to claim
 * is at most 64 characters (SPEC §5.1); a withdrawal's or grant's `key` has no length rule
 * (SPEC §6: non-empty; any key no reward has is 422 WITHDRAW/GRANT.REWARD_NOT_FOUND).
 */
export const codeLookup = chars(1, 64);
export const rewardKeyLookup = chars(1, 64);
export const rewardKeyToSpend = z.string().min(1);

/**
 * An id that names a resource in a URL path: 1–`max` characters, no control characters, and not
 * `.` or `..`: URLs resolve those (and `%2E%2E`) as dot segments before sending, so a resource with
 * such an id could be created but never addressed again by a standard client.
 */
export function pathId(max: number) {
  return chars(1, max)
    .refine((value) => !CONTROL.test(value), 'must not contain control characters')
    .refine((value) => value !== '.' && value !== '..', 'must not be "." or ".." (a URL path cannot name them)')
    .openapi({
      // Without a lookahead, which many schema-driven generators cannot read: a first character that is not a dot, or a dot and a non-dot, or two dots and anything.
      pattern: `^(?:[^.${CONTROL_CLASS}]|\\.[^.${CONTROL_CLASS}]|\\.\\.[^${CONTROL_CLASS}])[^${CONTROL_CLASS}]*$`,
      description: `1–${max} characters, no control characters, not "." or ".."`,
    });
}

// Blanks beyond the control characters (String#trim's set), and the invisible format characters
// (soft hyphen, zero-width spaces and joiners, word joiner): none shows where a value starts or ends.
const BLANK_CLASS = ' \\u00a0\\u00ad\\u1680\\u180e\\u2000-\\u200d\\u2028\\u2029\\u202f\\u205f\\u2060\\u3000\\ufeff';
const EDGE_BLANK = new RegExp(`^[${BLANK_CLASS}]|[${BLANK_CLASS}]$`);

/**
 * A value handed to a user as it is (a pool's one-time code): 1–`max` characters, no control
 * characters, and no blank or invisible character at either end, so that what the user reads and
 * types back is the value.
 */
export function handedOutValue(max: number) {
  return chars(1, max)
    .refine((value) => !CONTROL.test(value), 'must not contain control characters')
    .refine((value) => !EDGE_BLANK.test(value), 'must not start or end with a blank or invisible character')
    .openapi({
      pattern: `^[^${BLANK_CLASS}${CONTROL_CLASS}](?:[^${CONTROL_CLASS}]*[^${BLANK_CLASS}${CONTROL_CLASS}])?$`,
      description: `1–${max} characters, no control characters, no blank or invisible character at either end`,
    });
}

const HTTP_URL_PATTERN = `^[Hh][Tt][Tt][Pp][Ss]?://[^${BLANK_CLASS}${CONTROL_CLASS}]+$`;
const HTTP_URL = new RegExp(HTTP_URL_PATTERN);
const PARSED_HTTP_URL = z.url({ protocol: /^https?$/ });

/**
 * A link a user or the console opens: an http(s) URL (no `javascript:`, `data:` or `file:` links),
 * kept as sent: no blank, control or invisible character anywhere (a URL parser would drop or
 * trim them, and the link stored would not be the one sent).
 */
export const webUrl = z
  .string()
  .max(2000)
  .regex(HTTP_URL, 'must be an http or https URL without blanks or control characters')
  .refine((value) => PARSED_HTTP_URL.safeParse(value).success, 'must be an http or https URL')
  .openapi({ format: 'uri', pattern: HTTP_URL_PATTERN, description: 'An http or https URL, without blanks or control characters' });

/** A user's id (SPEC §3), read, claimed for, withdrawn from and erased by its path. */
export const appUserId = pathId(128).openapi({ example: 'user-123' });

export const operationId = chars(1, 128).openapi({ description: 'Idempotency key: the first successful call with it is remembered forever' });

/**
 * Whether every number in a parsed JSON value is one JSON can store: JSON.parse turns `1e400` into
 * Infinity (stored as null) and rounds integers past ±(2^53 − 1) (12345678901234567890 would be
 * stored as 12345678901234567000). Decimals are kept as doubles, the way every JSON store keeps them.
 */
function faithfulNumbers(value: unknown): boolean {
  if (typeof value === 'number') return Number.isFinite(value) && (!Number.isInteger(value) || Number.isSafeInteger(value));
  if (Array.isArray(value)) return value.every(faithfulNumbers);
  if (typeof value === 'object' && value !== null) return Object.values(value).every(faithfulNumbers);
  return true;
}

/** A JSON object (not an array), kept exactly as sent (keys such as "__proto__" included). */
export const jsonObject = z
  .custom<Record<string, unknown>>(isJsonObject, 'must be a JSON object')
  .refine(faithfulNumbers, 'numbers must be finite, and integers within ±(2^53 − 1) (send larger ones as strings)')
  .openapi({
    type: 'object',
    additionalProperties: true,
    description: `Any JSON object, kept as sent; numbers must be finite, and integers within ±(2^53 − 1); nested less than ${MAX_JSON_DEPTH} levels deep, counted from the request body`,
  });

/**
 * `schema` or null, spelled out for the document: a schema whose OpenAPI type is given by hand
 * (refinements, transforms, custom checks) would otherwise be documented without its null.
 */
export function orNull<T extends z.ZodTypeAny>(schema: T, type: 'string' | 'object') {
  return schema.nullable().openapi({ type: [type, 'null'] });
}

/** `jsonObject` or null (spelled out: the custom schema's own type would hide the null). */
export const nullableJsonObject = jsonObject.nullable().openapi({ type: ['object', 'null'], additionalProperties: true });

/** An object with the six reward-kind arrays, each holding `item`. */
export function byKind<T extends z.ZodTypeAny>(item: T) {
  return z.object(Object.fromEntries(REWARD_KINDS.map((kind) => [kind, z.array(item)])) as Record<(typeof REWARD_KINDS)[number], z.ZodArray<T>>);
}
