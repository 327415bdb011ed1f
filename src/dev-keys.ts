import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config.js';

const FILE = 'api-keys.json';

/**
 * Outside production, a service started without keys generates one client and one secret
 * key, keeps them in DATA_DIR and prints them the first time only.
 */
export function withDevelopmentKeys(config: Config, print: (message: string) => void): Config {
  if (config.CLIENT_API_KEYS.length > 0 || config.SECRET_API_KEYS.length > 0) return config;
  const file = path.join(config.DATA_DIR, FILE);
  let keys: { client: string; secret: string };
  if (fs.existsSync(file)) {
    keys = JSON.parse(fs.readFileSync(file, 'utf8')) as typeof keys;
  } else {
    keys = { client: `ck_${randomBytes(18).toString('base64url')}`, secret: `sk_${randomBytes(18).toString('base64url')}` };
    fs.mkdirSync(config.DATA_DIR, { recursive: true });
    fs.writeFileSync(file, `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600 });
    print(
      `No API keys configured: generated development keys (kept in ${file}).\n` +
        `  client key: ${keys.client}\n  secret key: ${keys.secret}\n` +
        'Set CLIENT_API_KEYS and SECRET_API_KEYS to use your own.',
    );
  }
  return { ...config, CLIENT_API_KEYS: [keys.client], SECRET_API_KEYS: [keys.secret] };
}
