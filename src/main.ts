import './supported-node.js';
import 'reflect-metadata';
import { openBackend } from './backends/open-backend.js';
import { ConfigError, type Config, loadConfig, misspeltSettings } from './config.js';
import { withDevelopmentKeys } from './dev-keys.js';
import { createLogger } from './observability/logger.js';
import { type Role, type RunningService, startedMessage, startService } from './service.js';
import { startFailure } from './start-failure.js';

const ROLES: readonly Role[] = ['all', 'api', 'projector'];

/** Exit codes: 0 stopped cleanly, 1 failed (or a shutdown past its deadline), 2 bad arguments, 78 bad configuration, 130 second signal. */
const EXIT = { OK: 0, FAILURE: 1, USAGE: 2, CONFIG: 78, INTERRUPTED: 130 } as const;

function fail(code: number, message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

/**
 * SIGTERM / SIGINT stop the service gracefully; a stop that takes longer than
 * SHUTDOWN_TIMEOUT_S is abandoned (logging what was still open) and a second signal exits at once.
 * Acknowledged writes are already durable, so leaving early loses none of them.
 */
function stopOnSignals(service: RunningService, config: Config, logger: ReturnType<typeof createLogger>): void {
  let signals = 0;
  const shutdown = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) {
      logger.warn({ signal, still_open: service.pending() }, 'second signal: exiting without waiting');
      process.exit(EXIT.INTERRUPTED);
    }
    logger.info({ signal, deadline_s: config.SHUTDOWN_TIMEOUT_S }, 'shutting down');
    const deadline = setTimeout(() => {
      logger.error(
        { still_open: service.pending(), deadline_s: config.SHUTDOWN_TIMEOUT_S },
        `shutdown did not finish within SHUTDOWN_TIMEOUT_S=${config.SHUTDOWN_TIMEOUT_S} s: exiting anyway`,
      );
      process.exit(EXIT.FAILURE);
    }, config.SHUTDOWN_TIMEOUT_S * 1000);
    service.stop().then(
      () => {
        clearTimeout(deadline);
        process.exit(EXIT.OK);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(EXIT.FAILURE);
      },
    );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

const USAGE = [
  'Usage: node dist/src/main.js [all|api|projector]      (npm start, npm run projector)',
  '',
  '  all        API and projector in one process (default; api when RUN_PROJECTOR=false)',
  '  api        HTTP API only; the projector runs elsewhere',
  '  projector  read models, reactions and sweeps; HTTP only for /healthz, /readyz, /metrics',
  '',
  'Settings are environment variables (PORT, DATA_DIR, CLIENT_API_KEYS, SECRET_API_KEYS, …): see the README, "Configuration".',
  'Stop with SIGTERM or SIGINT; a stop longer than SHUTDOWN_TIMEOUT_S (default 10 s) exits anyway.',
].join('\n');

/** Composition root: `node dist/src/main.js [all|api|projector]`. */
async function main(): Promise<void> {
  if (process.argv.slice(2).some((argument) => argument === '--help' || argument === '-h')) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(EXIT.OK);
  }
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) fail(EXIT.CONFIG, error.message);
    throw error;
  }
  for (const warning of misspeltSettings(process.env)) process.stderr.write(`Warning: ${warning}\n`);
  const [roleArgument, ...extra] = process.argv.slice(2);
  const role = (roleArgument ?? (config.RUN_PROJECTOR ? 'all' : 'api')) as Role;
  if (!ROLES.includes(role) || extra.length > 0) {
    fail(EXIT.USAGE, `Unknown role or argument: ${process.argv.slice(2).join(' ')}. Usage: node dist/src/main.js [all|api|projector] (--help for more).`);
  }
  const logger = createLogger(config.LOG_LEVEL);
  config = withDevelopmentKeys(config, (message) => process.stderr.write(message));
  // The service's start empties the WALs an erasure's deferred purge may have left (src/backends/embedded.ts).
  const backend = await openBackend(config, logger, { purgeWalsOnOpen: true });
  const service = await startService({ config, backend, logger, role });
  stopOnSignals(service, config, logger);
  // A LOG_LEVEL above info hides the log line with the pid to stop the service by: on stderr then,
  // as the key banner (once the signals it names stop the service gracefully).
  if (!logger.isLevelEnabled('info')) process.stderr.write(`${startedMessage(service.url)}\n`);
}

main().catch((error: unknown) => {
  // A setting found wrong only once used (an App Store Connect key file that cannot be read).
  if (error instanceof ConfigError) fail(EXIT.CONFIG, error.message);
  fail(EXIT.FAILURE, `Failed to start: ${startFailure(error, process.env)}`);
});
