import type { Config } from '../config.js';
import type { Logger } from '../ports/logger.js';
import type { Backend } from './backend.js';
import { type EmbeddedOptions, openEmbeddedBackend } from './embedded.js';

/** EVENTSTORE_URL + MONGODB_URL select the external backend; otherwise embedded SQLite. */
export async function openBackend(config: Config, logger?: Logger, options: EmbeddedOptions = {}): Promise<Backend> {
  if (config.EVENTSTORE_URL !== null && config.MONGODB_URL !== null) {
    const { openExternalBackend } = await import('./external.js');
    return openExternalBackend(config.EVENTSTORE_URL, config.MONGODB_URL, config.MONGODB_DATABASE, logger);
  }
  return openEmbeddedBackend(config.DATA_DIR, logger, options);
}
