import 'reflect-metadata';
import { RandomIds } from '../src/adapters/system/random-ids.js';
import { EventLog } from '../src/application/event-log.js';
import type { Backend } from '../src/backends/backend.js';
import { openBackend } from '../src/backends/open-backend.js';
import { ConfigError, loadConfig, type Config } from '../src/config.js';

export interface ScriptContext {
  config: Config;
  backend: Backend;
  log: EventLog;
}

/** Opens the configured backend (same environment variables as the service) for a script. */
export async function openScriptContext(env: NodeJS.ProcessEnv = process.env): Promise<ScriptContext> {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
  const backend = await openBackend(config);
  return { config, backend, log: new EventLog(backend.eventStore, new RandomIds()) };
}

/** Simple `--name value` / `--flag` argument parsing for the scripts. */
export function parseArgs(argv: string[]): Map<string, string | true> {
  const args = new Map<string, string | true>();
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index]!;
    if (!arg.startsWith('--')) continue;
    const next = argv[index + 1];
    if (next !== undefined && !next.startsWith('--')) {
      args.set(arg.slice(2), next);
      index += 1;
    } else {
      args.set(arg.slice(2), true);
    }
  }
  return args;
}
