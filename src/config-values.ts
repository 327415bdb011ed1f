import { isIP } from 'node:net';
import { z } from 'zod';

/**
 * How one setting's value is read (src/config.ts holds the settings): lists, numbers in decimal,
 * durations bounded by what a timer or a date can hold, rate-limit budgets, proxies and origins.
 */

export const commaList = z
  .string()
  .optional()
  .transform((value) =>
    (value ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0),
  );

export const optionalString = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? null : value.trim()));

/**
 * A number setting, written in decimal digits (with a fraction where the setting allows one).
 * `Number()` alone would read a blank value as 0 (`PORT=` would pick a random port) and take hex
 * and exponent forms: those are refused, as any other value that is not the setting's.
 */
export const decimal = z
  .string()
  .trim()
  .regex(/^[0-9]+(?:\.[0-9]+)?$/, 'must be a decimal number')
  .transform(Number);

export const positiveInt = (fallback: number) => decimal.pipe(z.number().int().positive()).default(fallback);

/**
 * Upper bounds of the durations. A timer Node cannot set (over 2^31 − 1 ms, about 24.8 days)
 * fires after 1 ms instead, so a setting that asks for longer would do the opposite of what it
 * says (a shutdown cut at once, every webhook timing out, a sweep spinning); and a period added
 * to a date past year 275,760 makes an invalid date. Past these, start-up refuses the value.
 */
const MAX_TIMER_MS = 2_147_483_647;
export const MAX_TIMER_S = Math.floor(MAX_TIMER_MS / 1000);
/** 100 years, the longest interval a reward may have. */
export const MAX_DAYS = 36_500;
export const MAX_HOURS = MAX_DAYS * 24;
export const timerMs = (fallback: number) => decimal.pipe(z.number().int().positive().max(MAX_TIMER_MS)).default(fallback);
export const timerSeconds = (fallback: number) => decimal.pipe(z.number().int().positive().max(MAX_TIMER_S)).default(fallback);

/**
 * `points/seconds` + `s`, e.g. `600/60s`: a budget of points per fixed window; `minPoints`: the
 * room one request needs (a claim takes FAILED_CLAIM_COST up front).
 */
export const budget = (fallback: string, minPoints = 1) =>
  z
    .string()
    .default(fallback)
    .transform((value, ctx) => {
      const match = /^\s*([1-9][0-9]{0,8})\s*\/\s*([1-9][0-9]{0,8})s\s*$/.exec(value);
      if (!match) {
        ctx.addIssue({ code: 'custom', message: 'must look like 600/60s' });
        return z.NEVER;
      }
      if (Number(match[1]) < minPoints) {
        ctx.addIssue({ code: 'custom', message: `must allow at least ${minPoints} points: a claim needs ${minPoints} points of room` });
        return z.NEVER;
      }
      return { points: Number(match[1]), seconds: Number(match[2]) };
    });

const NAMED_PROXY_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** An address or CIDR express's `trust proxy` accepts (proxy-addr), or one of its named ranges. */
function isProxyRange(value: string): boolean {
  if (NAMED_PROXY_RANGES.has(value)) return true;
  const [address, prefix, extra] = value.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  if (!/^[0-9]{1,3}$/.test(prefix)) return false;
  // A /0 trusts every address, as `true` would (refused), and express's proxy-addr throws on it.
  return Number(prefix) >= 1 && Number(prefix) <= (family === 4 ? 32 : 128);
}

/**
 * `TRUST_PROXY`: unset or `false` trusts no proxy (the socket address is the client); a number
 * trusts that many hops of `X-Forwarded-For`; a comma-separated list trusts those addresses/CIDRs.
 */
export const trustProxy = z
  .string()
  .optional()
  .transform((value, ctx): false | number | string[] => {
    const text = (value ?? '').trim();
    if (text === '' || text === 'false') return false;
    if (/^[0-9]{1,3}$/.test(text)) return Number(text);
    const ranges = text
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0);
    if (ranges.length === 0 || !ranges.every(isProxyRange)) {
      ctx.addIssue({ code: 'custom', message: 'must be a hop count or a comma-separated list of addresses/CIDRs' });
      return z.NEVER;
    }
    return ranges;
  });

/**
 * An origin as a browser sends it: scheme, host and port, nothing else (`https://app.example.com`,
 * `http://localhost:8081`, a Capacitor app's `capacitor://localhost`).
 */
function isOrigin(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  if (url.protocol === 'https:' || url.protocol === 'http:') return url.origin === value;
  // Other schemes have no origin in the URL standard: scheme://host[:port] as written.
  return /^[a-z][a-z0-9+.-]*:\/\/[^/?#\s]+$/.test(value) && `${url.protocol}//${url.host}` === value;
}

/**
 * `CORS_ORIGINS`: the web origins whose pages may call the app API (unset: none, and no CORS
 * headers at all); `*` for any.
 */
export const corsOrigins = z
  .string()
  .optional()
  .transform((value, ctx): string[] | '*' => {
    const origins = (value ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0);
    if (origins.length === 1 && origins[0] === '*') return '*';
    if (!origins.every(isOrigin)) {
      ctx.addIssue({ code: 'custom', message: 'must be * or a comma-separated list of origins such as https://app.example.com (no path, no trailing slash)' });
      return z.NEVER;
    }
    return origins;
  });
