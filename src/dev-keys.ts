import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config.js';
import { privateDataDir } from './private-files.js';

const FILE = 'api-keys.json';

/** A block that stands out among the JSON log lines. */
function framed(lines: string[]): string {
  const width = Math.max(...lines.map((line) => line.length));
  const rule = `+${'-'.repeat(width + 2)}+`;
  return `${[rule, ...lines.map((line) => `| ${line.padEnd(width)} |`), rule].join('\n')}\n`;
}

/**
 * Outside production, a service started without keys generates one client and one secret
 * key and keeps them in DATA_DIR. The first start prints them in a framed block on stderr
 * (away from the JSON logs on stdout); every later start names the file they are in.
 */
export function withDevelopmentKeys(config: Config, print: (text: string) => void): Config {
  const [clients, secrets] = [config.CLIENT_API_KEYS.length, config.SECRET_API_KEYS.length];
  // One list set and the other empty is kept as configured (no key is made up for it), but said.
  if (clients > 0 && secrets === 0)
    print('SECRET_API_KEYS is empty: no key can reach /admin (nor grant rewards by hand). Set it, or neither list to use development keys.\n');
  if (secrets > 0 && clients === 0)
    print('CLIENT_API_KEYS is empty: apps have no key (only secret keys reach /users, /codes and /store). Set it, or neither list to use development keys.\n');
  if (clients > 0 || secrets > 0) return config;
  const file = path.join(config.DATA_DIR, FILE);
  let keys: { client: string; secret: string };
  if (fs.existsSync(file)) {
    keys = JSON.parse(fs.readFileSync(file, 'utf8')) as typeof keys;
    print(`Using the development API keys kept in ${file} (set CLIENT_API_KEYS and SECRET_API_KEYS to use your own).\n`);
  } else {
    keys = { client: `ck_${randomBytes(18).toString('base64url')}`, secret: `sk_${randomBytes(18).toString('base64url')}` };
    privateDataDir(config.DATA_DIR);
    fs.writeFileSync(file, `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600 });
    print(
      framed([
        'No API keys configured: generated development keys.',
        '',
        `  client key (x-api-key for apps):       ${keys.client}`,
        `  secret key (x-api-key for /admin/*):   ${keys.secret}`,
        '',
        `Kept in ${file}; later starts reuse them.`,
        'Set CLIENT_API_KEYS and SECRET_API_KEYS to use your own.',
      ]),
    );
  }
  return { ...config, CLIENT_API_KEYS: [keys.client], SECRET_API_KEYS: [keys.secret] };
}
