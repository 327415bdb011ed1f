import { z } from 'zod';
import { certificateFileProblem } from './adapters/revenue/certificate-file.js';
import { CONVERSION_SOURCES } from './domain/users/conversion.js';
import { FAILED_CLAIM_COST } from './http/rate-limits/claim-cost.js';
import {
  budget,
  commaList,
  corsOrigins,
  decimal,
  MAX_DAYS,
  MAX_HOURS,
  MAX_TIMER_S,
  optionalString,
  positiveInt,
  timerMs,
  timerSeconds,
  trustProxy,
} from './config-values.js';

/** An EventStoreDB / KurrentDB connection string (esdb://, kurrentdb://, kdb://, with or without +discover). */
export function isEventStoreUrl(value: string): boolean {
  return /^(esdb|esdb\+discover|kurrentdb|kurrentdb\+discover|kdb):\/\//.test(value);
}

/** The documented default namespace of account tokens (UUIDv5 of app_user_id, SPEC §11). */
export const DEFAULT_ACCOUNT_TOKEN_NAMESPACE = '5b2c1c52-3d4e-5f60-8a71-92b3c4d5e6f7';

/** Every setting of SPEC §10, and the service's own (README, Configuration), read from the environment. */
const configSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
    PORT: decimal.pipe(z.number().int().min(0).max(65_535)).default(8080),
    HOST: z.string().trim().min(1).default('0.0.0.0'),
    // Trimmed as the other settings are: SQLite's binding trims a file name, so `DATA_DIR=' '`
    // opened /referrals.db at the root of the file system.
    DATA_DIR: z.string().trim().min(1).default('./data'),
    EVENTSTORE_URL: optionalString.refine((value) => value === null || isEventStoreUrl(value), {
      message: 'must be an esdb:// or kurrentdb:// connection string',
    }),
    MONGODB_URL: optionalString.refine((value) => value === null || /^mongodb(\+srv)?:\/\//.test(value), {
      message: 'must be a mongodb:// or mongodb+srv:// connection string',
    }),
    MONGODB_DATABASE: z.string().min(1).default('referrals'),
    CLIENT_API_KEYS: commaList,
    SECRET_API_KEYS: commaList,
    CLAIM_WINDOW_DAYS: decimal.pipe(z.number().int().positive().max(MAX_DAYS)).default(7),
    REFERRAL_LINK_BASE: optionalString.refine((value) => value === null || URL.canParse(value), { message: 'must be a URL' }),
    ASC_ISSUER_ID: optionalString,
    ASC_KEY_ID: optionalString,
    ASC_PRIVATE_KEY_PATH: optionalString,
    ASC_BASE_URL: z.url().default('https://api.appstoreconnect.apple.com'),
    ASC_TIMEOUT_MS: timerMs(10_000),
    ASC_CACHE_TTL_S: positiveInt(3_600),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** Events a projection may trail the log by and still be ready. */
    READY_MAX_LAG: decimal.pipe(z.number().int().min(0)).default(1_000),
    /** Seconds between background sweeps (reward expiry, claim repair). */
    SWEEP_INTERVAL_S: timerSeconds(30),
    /** Set to "false" to run the API without the in-process projector (scale-out topology). */
    RUN_PROJECTOR: z
      .enum(['true', 'false'])
      .default('true')
      .transform((value) => value === 'true'),
    /** Seconds a shutdown may take (draining requests, stopping the projector) before the process exits anyway. */
    SHUTDOWN_TIMEOUT_S: decimal.pipe(z.number().positive().max(MAX_TIMER_S)).default(10),
    /** SPEC §13: rate limits on (default) or off. */
    RATE_LIMITS: z.enum(['on', 'off']).default('on'),
    RATE_LIMIT_READS: budget('600/60s'),
    /** Per user (and per key + IP); a failed claim (refused with 404 or 422) costs FAILED_CLAIM_COST points. */
    RATE_LIMIT_CLAIMS: budget('20/3600s', FAILED_CLAIM_COST),
    RATE_LIMIT_COMMANDS: budget('120/60s', FAILED_CLAIM_COST),
    RATE_LIMIT_SECRET: z
      .enum(['true', 'false'])
      .default('false')
      .transform((value) => value === 'true'),
    TRUST_PROXY: trustProxy,
    /** SPEC §14: the operator console at /console, on (default) or off. */
    CONSOLE: z.enum(['on', 'off']).default('on'),
    /** SPEC §15: the WinWinKit-compatible surface under /compat/winwinkit, on (default) or off. */
    COMPAT_WINWINKIT: z.enum(['on', 'off']).default('on'),
    /** Web pages allowed to call the app API from a browser (README, *Apps in a browser*). */
    CORS_ORIGINS: corsOrigins,
    /** Outgoing webhooks (SPEC §12): per-request timeout, retry window, auto-disable, URL rules. */
    WEBHOOK_TIMEOUT_MS: timerMs(10_000),
    WEBHOOK_RETRY_HOURS: decimal.pipe(z.number().positive().max(MAX_HOURS)).default(72),
    /** An endpoint failing without a single success for this long is disabled (and reported). */
    WEBHOOK_DISABLE_AFTER_HOURS: decimal.pipe(z.number().positive().max(MAX_HOURS)).default(120),
    /** Deliveries yield to requests being answered, for at most this long per message (0: never yield). */
    WEBHOOK_YIELD_MAX_S: decimal.pipe(z.number().min(0).max(MAX_TIMER_S)).default(30),
    /** Delivered messages are kept this long for the deliveries list and redelivery, then forgotten (open and dead ones stay). */
    WEBHOOK_RETENTION_DAYS: decimal.pipe(z.number().positive().max(MAX_DAYS)).default(30),
    WEBHOOKS_ALLOW_HTTP: z
      .enum(['true', 'false'])
      .default('false')
      .transform((value) => value === 'true'),
    WEBHOOKS_ALLOW_PRIVATE: z
      .enum(['true', 'false'])
      .default('false')
      .transform((value) => value === 'true'),
    /** RevenueCat fulfilment of partner_entitlement rewards: on when the secret key is set. */
    REVENUECAT_SECRET_API_KEY: optionalString,
    REVENUECAT_BASE_URL: z.string().url().default('https://api.revenuecat.com'),
    // Revenue notifications in (SPEC §11): each provider is off until all its settings are set.
    CONVERSIONS_FROM: z.enum(CONVERSION_SOURCES).default('client'),
    ACCOUNT_TOKEN_NAMESPACE: z
      .string()
      .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i)
      .default(DEFAULT_ACCOUNT_TOKEN_NAMESPACE)
      .transform((value) => value.toLowerCase()),
    APPLE_ROOT_CERTS: commaList,
    APPLE_BUNDLE_ID: optionalString,
    APPLE_APP_APPLE_ID: optionalString.refine((value) => value === null || /^[0-9]{1,15}$/.test(value), { message: 'must be a number' }),
    APPLE_ENVIRONMENT: z.enum(['Production', 'Sandbox', 'Xcode', 'LocalTesting']).optional(),
    APPLE_ONLINE_CHECKS: z
      .enum(['true', 'false'])
      .default('false')
      .transform((value) => value === 'true'),
    GOOGLE_PLAY_PACKAGE_NAME: optionalString,
    GOOGLE_PLAY_PUSH_AUDIENCE: optionalString,
    GOOGLE_PLAY_PUSH_SERVICE_ACCOUNT: optionalString,
    GOOGLE_PLAY_PUSH_TOKEN: optionalString,
    /** Where Google's OIDC signing certificates are fetched (PEM by key id); a proxy or a test may point elsewhere. */
    GOOGLE_OIDC_CERTS_URL: z.string().url().default('https://www.googleapis.com/oauth2/v1/certs'),
    REVENUECAT_WEBHOOK_AUTH: optionalString,
    STRIPE_WEBHOOK_SECRET: optionalString.refine((value) => value === null || value.startsWith('whsec_'), { message: 'must start with whsec_' }),
  })
  .superRefine((config, ctx) => {
    const asc = [config.ASC_ISSUER_ID, config.ASC_KEY_ID, config.ASC_PRIVATE_KEY_PATH];
    if (asc.some((value) => value !== null) && asc.some((value) => value === null)) {
      ctx.addIssue({
        code: 'custom',
        path: ['ASC_ISSUER_ID'],
        message: 'ASC_ISSUER_ID, ASC_KEY_ID and ASC_PRIVATE_KEY_PATH must be set together',
      });
    }
    const apple = [config.APPLE_ROOT_CERTS.length > 0 ? 'set' : null, config.APPLE_BUNDLE_ID, config.APPLE_ENVIRONMENT ?? null];
    if (apple.some((value) => value !== null) && apple.some((value) => value === null)) {
      ctx.addIssue({
        code: 'custom',
        path: ['APPLE_ROOT_CERTS'],
        message: 'APPLE_ROOT_CERTS, APPLE_BUNDLE_ID and APPLE_ENVIRONMENT must be set together (App Store notifications)',
      });
    }
    if (config.APPLE_ENVIRONMENT === 'Production' && config.APPLE_APP_APPLE_ID === null) {
      ctx.addIssue({ code: 'custom', path: ['APPLE_APP_APPLE_ID'], message: 'APPLE_APP_APPLE_ID is required when APPLE_ENVIRONMENT is Production' });
    }
    for (const path of config.APPLE_ROOT_CERTS) {
      const problem = certificateFileProblem(path);
      if (problem) ctx.addIssue({ code: 'custom', path: ['APPLE_ROOT_CERTS'], message: `certificate files, DER or PEM (${path}: ${problem})` });
    }
    const oidc = [config.GOOGLE_PLAY_PUSH_AUDIENCE, config.GOOGLE_PLAY_PUSH_SERVICE_ACCOUNT];
    if (oidc.some((value) => value !== null) && oidc.some((value) => value === null)) {
      ctx.addIssue({
        code: 'custom',
        path: ['GOOGLE_PLAY_PUSH_AUDIENCE'],
        message: 'GOOGLE_PLAY_PUSH_AUDIENCE and GOOGLE_PLAY_PUSH_SERVICE_ACCOUNT must be set together (Play push OIDC)',
      });
    }
    if (config.GOOGLE_PLAY_PUSH_AUDIENCE !== null && config.GOOGLE_PLAY_PUSH_TOKEN !== null) {
      // Either, not both: the shared token would let in what the OIDC check refuses.
      ctx.addIssue({
        code: 'custom',
        path: ['GOOGLE_PLAY_PUSH_TOKEN'],
        message: 'GOOGLE_PLAY_PUSH_TOKEN or GOOGLE_PLAY_PUSH_AUDIENCE + GOOGLE_PLAY_PUSH_SERVICE_ACCOUNT, not both (Play push authentication)',
      });
    }
    const playAuth = config.GOOGLE_PLAY_PUSH_AUDIENCE !== null || config.GOOGLE_PLAY_PUSH_TOKEN !== null;
    if ((config.GOOGLE_PLAY_PACKAGE_NAME !== null) !== playAuth) {
      ctx.addIssue({
        code: 'custom',
        path: ['GOOGLE_PLAY_PACKAGE_NAME'],
        message:
          'GOOGLE_PLAY_PACKAGE_NAME needs GOOGLE_PLAY_PUSH_AUDIENCE + GOOGLE_PLAY_PUSH_SERVICE_ACCOUNT or GOOGLE_PLAY_PUSH_TOKEN, and they need it (Play notifications)',
      });
    }
    if ((config.EVENTSTORE_URL === null) !== (config.MONGODB_URL === null)) {
      ctx.addIssue({
        code: 'custom',
        path: [config.EVENTSTORE_URL === null ? 'EVENTSTORE_URL' : 'MONGODB_URL'],
        message: 'EVENTSTORE_URL and MONGODB_URL select the external backend together; set both or neither',
      });
    }
    // A key is a client key or a secret key; one in both lists would silently act as a secret key.
    const both = config.CLIENT_API_KEYS.filter((key) => config.SECRET_API_KEYS.includes(key)).length;
    if (both > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['SECRET_API_KEYS'],
        message: `${both === 1 ? 'a key is' : `${both} keys are`} also in CLIENT_API_KEYS (not shown); a key is either a client key or a secret key`,
      });
    }
    if (config.NODE_ENV === 'production') {
      for (const keys of ['CLIENT_API_KEYS', 'SECRET_API_KEYS'] as const) {
        if (config[keys].length === 0) ctx.addIssue({ code: 'custom', path: [keys], message: 'is required in production (NODE_ENV=production)' });
      }
    }
  });

export type Config = z.infer<typeof configSchema>;

/** The providers whose settings are all present (SPEC §11: a provider is off until then). */
export function configuredRevenueProviders(config: Config): string[] {
  const on: string[] = [];
  if (config.APPLE_BUNDLE_ID !== null) on.push('app-store');
  if (config.GOOGLE_PLAY_PACKAGE_NAME !== null) on.push('google-play');
  if (config.REVENUECAT_WEBHOOK_AUTH !== null) on.push('revenuecat');
  if (config.STRIPE_WEBHOOK_SECRET !== null) on.push('stripe');
  return on;
}

/** The environment variables the service reads (compose files are checked against this list). */
export const CONFIG_VARIABLES = Object.keys(configSchema.shape);

/** What each variable takes, said to an operator who set it wrong. */
const EXPECTED: Record<string, string> = {
  NODE_ENV: 'one of development, production, test (default development)',
  PORT: 'a port number from 0 to 65535 (default 8080; 0 picks a free port)',
  HOST: 'an interface address to listen on, e.g. 0.0.0.0 or 127.0.0.1',
  DATA_DIR: 'a directory path (default ./data)',
  EVENTSTORE_URL: 'an esdb:// or kurrentdb:// connection string, e.g. esdb://localhost:2113?tls=false',
  MONGODB_URL: 'a mongodb:// or mongodb+srv:// connection string, e.g. mongodb://localhost:27017/?directConnection=true',
  MONGODB_DATABASE: 'a database name (default referrals)',
  CLAIM_WINDOW_DAYS: 'a whole number of days from 1 to 36500 (default 7)',
  REFERRAL_LINK_BASE: 'an absolute URL, e.g. https://example.com/r',
  ASC_BASE_URL: 'an absolute URL (default https://api.appstoreconnect.apple.com)',
  ASC_TIMEOUT_MS: 'a whole number of milliseconds from 1 to 2147483647 (default 10000)',
  ASC_CACHE_TTL_S: 'a whole number of seconds, 1 or more (default 3600)',
  LOG_LEVEL: 'one of fatal, error, warn, info, debug, trace, silent (default info)',
  READY_MAX_LAG: 'a whole number of events, 0 or more (default 1000)',
  SWEEP_INTERVAL_S: 'a whole number of seconds from 1 to 2147483 (default 30)',
  RUN_PROJECTOR: 'true or false (default true)',
  SHUTDOWN_TIMEOUT_S: 'a number of seconds greater than 0, at most 2147483 (default 10)',
  RATE_LIMITS: 'on or off (default on)',
  RATE_LIMIT_READS: 'requests per window, written <points>/<seconds>s, e.g. 600/60s (the default)',
  RATE_LIMIT_CLAIMS: `claim points per window, written <points>/<seconds>s, e.g. 20/3600s (the default); at least ${FAILED_CLAIM_COST} points, the room a claim needs`,
  RATE_LIMIT_COMMANDS: `requests per window, written <points>/<seconds>s, e.g. 120/60s (the default); at least ${FAILED_CLAIM_COST} points, the room a claim needs`,
  RATE_LIMIT_SECRET: 'true or false (default false: secret keys are not rate limited)',
  CONSOLE: 'on or off (default on)',
  COMPAT_WINWINKIT: 'on or off (default on)',
  CORS_ORIGINS: 'a comma-separated list of origins such as https://app.example.com,http://localhost:8081, or * (default: none)',
  TRUST_PROXY: 'false (default), a hop count such as 1, or a comma-separated list of proxy addresses/CIDRs such as 10.0.0.0/8,loopback',
  WEBHOOK_TIMEOUT_MS: 'a whole number of milliseconds from 1 to 2147483647 (default 10000)',
  WEBHOOK_RETRY_HOURS: 'a number of hours greater than 0, at most 876000 (default 72)',
  WEBHOOK_DISABLE_AFTER_HOURS: 'a number of hours greater than 0, at most 876000 (default 120)',
  WEBHOOK_YIELD_MAX_S: 'a number of seconds from 0 to 2147483 (default 30; 0: deliveries never yield to requests)',
  WEBHOOK_RETENTION_DAYS: 'a number of days greater than 0, at most 36500 (default 30)',
  WEBHOOKS_ALLOW_HTTP: 'true or false (default false: https only)',
  WEBHOOKS_ALLOW_PRIVATE: 'true or false (default false: private and loopback hosts refused)',
  REVENUECAT_BASE_URL: 'an absolute URL (default https://api.revenuecat.com)',
  CONVERSIONS_FROM: 'one of client, verified, both (default client)',
  ACCOUNT_TOKEN_NAMESPACE: `a UUID (default ${DEFAULT_ACCOUNT_TOKEN_NAMESPACE})`,
  APPLE_APP_APPLE_ID: "a number: the app's Apple ID from App Store Connect",
  APPLE_ENVIRONMENT: 'one of Production, Sandbox, Xcode, LocalTesting',
  APPLE_ONLINE_CHECKS: 'true or false (default false)',
  GOOGLE_OIDC_CERTS_URL: 'an absolute URL (default https://www.googleapis.com/oauth2/v1/certs)',
  STRIPE_WEBHOOK_SECRET: 'a Stripe endpoint secret, whsec_…',
};

/** Settings that hold secrets: a problem with one names the setting, never its value (stderr goes to logs). */
const SECRET_SETTINGS = new Set([
  'CLIENT_API_KEYS',
  'SECRET_API_KEYS',
  'REVENUECAT_SECRET_API_KEY',
  'REVENUECAT_WEBHOOK_AUTH',
  'GOOGLE_PLAY_PUSH_TOKEN',
  'STRIPE_WEBHOOK_SECRET',
]);

/** The value as set, quoted when it would be hard to see; passwords in URLs masked. */
function shownValue(value: string): string {
  const masked = value.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/:@]*:)[^/@]*@/i, '$1***@');
  return masked === '' || /[\s"'=]/.test(masked) ? JSON.stringify(masked) : masked;
}

interface ConfigIssue {
  code: string;
  path: PropertyKey[];
  message: string;
}

/** One line per problem: the variable, the value it had, and what it takes. */
function describeIssue(issue: ConfigIssue, env: NodeJS.ProcessEnv): string {
  const name = issue.path.length > 0 ? String(issue.path[0]) : null;
  if (name === null) return `environment: ${issue.message}`;
  // A rule across variables names them in its message; say it as it is.
  const acrossVariables = issue.code === 'custom' && CONFIG_VARIABLES.some((variable) => variable !== name && issue.message.includes(variable));
  if (acrossVariables) return `${name}: ${issue.message}`;
  const value = env[name];
  const expected = EXPECTED[name] ?? issue.message;
  if (value === undefined) return `${name} is missing: expected ${expected}`;
  return SECRET_SETTINGS.has(name) ? `${name} (its value not shown): expected ${expected}` : `${name}=${shownValue(value)}: expected ${expected}`;
}

/**
 * Every problem with `env`, not just the first ones: a rule across variables (e.g. ASC_* set
 * together) only runs once each variable is valid on its own, so it is checked again with the
 * invalid variables left out, keeping what it finds about the others.
 */
function configProblems(env: NodeJS.ProcessEnv, issues: readonly ConfigIssue[]): string[] {
  const problems = issues.map((issue) => describeIssue(issue, env));
  const invalid = new Set(issues.map((issue) => String(issue.path[0] ?? '')));
  const rest = Object.fromEntries(Object.entries(env).filter(([name]) => !invalid.has(name)));
  const again = configSchema.safeParse(rest);
  if (!again.success) {
    for (const issue of again.error.issues) {
      const involved = [...invalid].some((name) => name !== '' && (String(issue.path[0]) === name || issue.message.includes(name)));
      const problem = describeIssue(issue, env);
      if (!involved && !problems.includes(problem)) problems.push(problem);
    }
  }
  return problems;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(
      `Invalid configuration (${problems.length} ${problems.length === 1 ? 'problem' : 'problems'}; nothing was started):\n${problems.map((problem) => `  - ${problem}`).join('\n')}`,
    );
    this.name = 'ConfigError';
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const result = configSchema.safeParse(env);
  if (result.success) return result.data;
  throw new ConfigError(configProblems(env, result.error.issues));
}

/**
 * Variables in `env` that are not settings of this service but are spelt almost like one
 * (`CLIENT_API_KEY` for `CLIENT_API_KEYS`): a warning each, naming the setting meant. Such a
 * variable is ignored, so without this a typo would pass silently (a development start would
 * generate keys instead of using the ones given).
 */
export function misspeltSettings(env: NodeJS.ProcessEnv): string[] {
  const known = new Set(CONFIG_VARIABLES);
  const warnings: string[] = [];
  for (const name of Object.keys(env)) {
    if (known.has(name) || name.length < 6 || name !== name.toUpperCase()) continue;
    // Within two edits, or the other number of a word (TRUST_PROXIES for TRUST_PROXY: three edits).
    const meant = CONFIG_VARIABLES.find((variable) => editDistance(name, variable) <= 2 || editDistance(singular(name), singular(variable)) <= 1);
    if (meant) warnings.push(`${name} is not a setting of this service and is ignored; did you mean ${meant}?`);
  }
  return warnings;
}

/** A setting's name with a plural ending made singular (PROXIES → PROXY, KEYS → KEY). */
const singular = (name: string) => name.replace(/IES$/, 'Y').replace(/S$/, '');

/** Levenshtein distance (insertions, deletions, substitutions). */
function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}
