import 'reflect-metadata';
import { openBackend } from './backends/open-backend.js';
import { ConfigError, loadConfig } from './config.js';
import { withDevelopmentKeys } from './dev-keys.js';
import { createLogger } from './observability/logger.js';
import { type Role, startService } from './service.js';

/** Composition root: `node dist/src/main.js [all|api|projector]`. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
  const role = (process.argv[2] ?? (config.RUN_PROJECTOR ? 'all' : 'api')) as Role;
  if (!['all', 'api', 'projector'].includes(role)) throw new Error(`Unknown role ${role}: use all, api or projector`);
  const logger = createLogger(config.LOG_LEVEL);
  config = withDevelopmentKeys(config, (message) => process.stdout.write(`${message}\n`));
  const backend = await openBackend(config, logger);
  const service = await startService({ config, backend, logger, role });

  let signals = 0;
  const shutdown = (signal: string) => {
    signals += 1;
    if (signals > 1) process.exit(130);
    logger.info({ signal }, 'shutting down');
    service.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`Failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
