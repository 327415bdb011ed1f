import { z } from 'zod';

const commaList = z
  .string()
  .optional()
  .transform((value) =>
    (value ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0),
  );

const optionalString = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? null : value.trim()));

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/** Every setting of SPEC §10, read from the environment. */
export const configSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
    PORT: z.coerce.number().int().min(0).max(65_535).default(8080),
    HOST: z.string().default('0.0.0.0'),
    DATA_DIR: z.string().min(1).default('./data'),
    EVENTSTORE_URL: optionalString.refine((value) => value === null || /^(esdb|esdb\+discover|kurrentdb|kurrentdb\+discover|kdb):\/\//.test(value), {
      message: 'must be an esdb:// or kurrentdb:// connection string',
    }),
    MONGODB_URL: optionalString.refine((value) => value === null || /^mongodb(\+srv)?:\/\//.test(value), {
      message: 'must be a mongodb:// or mongodb+srv:// connection string',
    }),
    MONGODB_DATABASE: z.string().min(1).default('referrals'),
    CLIENT_API_KEYS: commaList,
    SECRET_API_KEYS: commaList,
    CLAIM_WINDOW_DAYS: positiveInt(7),
    REFERRAL_LINK_BASE: optionalString.refine((value) => value === null || URL.canParse(value), { message: 'must be a URL' }),
    ASC_ISSUER_ID: optionalString,
    ASC_KEY_ID: optionalString,
    ASC_PRIVATE_KEY_PATH: optionalString,
    ASC_BASE_URL: z.url().default('https://api.appstoreconnect.apple.com'),
    ASC_TIMEOUT_MS: positiveInt(10_000),
    ASC_CACHE_TTL_S: positiveInt(3_600),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** Events a projection may trail the log by and still be ready. */
    READY_MAX_LAG: z.coerce.number().int().min(0).default(1_000),
    /** Seconds between background sweeps (reward expiry, claim repair). */
    SWEEP_INTERVAL_S: positiveInt(30),
    /** Set to "false" to run the API without the in-process projector (scale-out topology). */
    RUN_PROJECTOR: z.enum(['true', 'false']).default('true').transform((value) => value === 'true'),
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
    if ((config.EVENTSTORE_URL === null) !== (config.MONGODB_URL === null)) {
      ctx.addIssue({
        code: 'custom',
        path: [config.EVENTSTORE_URL === null ? 'EVENTSTORE_URL' : 'MONGODB_URL'],
        message: 'EVENTSTORE_URL and MONGODB_URL select the external backend together; set both or neither',
      });
    }
    if (config.NODE_ENV === 'production' && (config.CLIENT_API_KEYS.length === 0 || config.SECRET_API_KEYS.length === 0)) {
      ctx.addIssue({
        code: 'custom',
        path: [config.CLIENT_API_KEYS.length === 0 ? 'CLIENT_API_KEYS' : 'SECRET_API_KEYS'],
        message: 'is required in production (NODE_ENV=production)',
      });
    }
  });

export type Config = z.infer<typeof configSchema>;

/** The environment variables the service reads (compose files are checked against this list). */
export const CONFIG_VARIABLES = Object.keys(configSchema.shape);

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const result = configSchema.safeParse(env);
  if (result.success) return result.data;
  throw new ConfigError(result.error.issues.map((issue) => `${issue.path.join('.') || 'environment'}: ${issue.message}`));
}
