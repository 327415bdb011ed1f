import '../src/supported-node.js';
import 'reflect-metadata';
import fs from 'node:fs';
import { RandomIds } from '../src/adapters/system/random-ids.js';
import { databasePath } from '../src/adapters/sqlite/sqlite-database.js';
import { EventLog } from '../src/application/event-log.js';
import type { Backend } from '../src/backends/backend.js';
import { openBackend } from '../src/backends/open-backend.js';
import { ConfigError, loadConfig, misspeltSettings, type Config } from '../src/config.js';
import { EXIT } from './cli/command-line.js';

export interface ScriptContext {
  config: Config;
  backend: Backend;
  log: EventLog;
}

/** The service's configuration for a script; a bad one is reported (every problem) and exits 78. */
export function loadScriptConfig(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    const config = loadConfig(env);
    for (const warning of misspeltSettings(env)) process.stderr.write(`Warning: ${warning}\n`);
    return config;
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(EXIT.CONFIG);
    }
    throw error;
  }
}

/**
 * Where an embedded store's database should be, when it is not there (null when it is, or
 * when the external backend is configured). Scripts that read a store refuse to go on rather
 * than create an empty database for a mistyped DATA_DIR.
 */
function missingDatabase(config: Config): string | null {
  if (config.EVENTSTORE_URL !== null && config.MONGODB_URL !== null) return null;
  const file = databasePath(config.DATA_DIR);
  return fs.existsSync(file) ? null : file;
}

/** Prints why a store cannot be read (no database at the configured path) and exits 66. */
function refuseMissingDatabase(script: string, file: string, config: Config): never {
  process.stderr.write(
    `${script}: no database at ${file} (DATA_DIR=${config.DATA_DIR}). ` +
      'Set DATA_DIR to the directory the service uses (it holds referrals.db), or start the service once to create it. Nothing was created.\n',
  );
  process.exit(EXIT.NO_INPUT);
}

export interface ScriptContextOptions {
  /**
   * The script reads an existing store (audit, replay, export): name it here and a DATA_DIR
   * without a database is refused (exit 66) instead of being created empty.
   */
  readsExistingStore?: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * Opens the configured backend (same environment variables as the service) for a script.
 * Exits 78 on a bad configuration, and 66 when a reading script finds no database.
 */
export async function openScriptContext(options: ScriptContextOptions = {}): Promise<ScriptContext> {
  const config = loadScriptConfig(options.env);
  const missing = options.readsExistingStore === undefined ? null : missingDatabase(config);
  if (missing !== null) refuseMissingDatabase(options.readsExistingStore!, missing, config);
  const backend = await openBackend(config);
  return { config, backend, log: new EventLog(backend.eventStore, new RandomIds()) };
}
