import { readFile } from 'node:fs/promises';
import { type Config, ConfigError } from '../../config.js';
import { type AppStoreConnect, appStoreNotConfigured } from '../../ports/app-store.js';
import type { Clock } from '../../ports/clock.js';
import { SystemClock } from '../system/system-clock.js';
import { AppStoreConnectClient } from './app-store-connect-client.js';
import { AscTokenSigner, importAscPrivateKey } from './asc-token.js';

/**
 * The App Store Connect port for this configuration: a client when ASC_ISSUER_ID, ASC_KEY_ID
 * and ASC_PRIVATE_KEY_PATH are set (the key is read and checked now, so a bad key stops
 * start-up), else the port that knows nothing. `clock` decides which prices are in effect.
 */
export async function openAppStoreConnect(config: Config, clock: Clock): Promise<AppStoreConnect> {
  const { ASC_ISSUER_ID: issuerId, ASC_KEY_ID: keyId, ASC_PRIVATE_KEY_PATH: keyPath } = config;
  if (issuerId === null || keyId === null || keyPath === null) return appStoreNotConfigured;
  let pem: string;
  try {
    pem = await readFile(keyPath, 'utf8');
  } catch (error) {
    throw new ConfigError([`ASC_PRIVATE_KEY_PATH: cannot read ${keyPath} (${(error as NodeJS.ErrnoException).code ?? String(error)})`]);
  }
  let privateKey: Awaited<ReturnType<typeof importAscPrivateKey>>;
  try {
    privateKey = await importAscPrivateKey(pem);
  } catch {
    throw new ConfigError([`ASC_PRIVATE_KEY_PATH: ${keyPath} is not an App Store Connect API key (PKCS #8 PEM, P-256)`]);
  }
  return new AppStoreConnectClient({
    baseUrl: config.ASC_BASE_URL,
    timeoutMs: config.ASC_TIMEOUT_MS,
    // Tokens must be valid at Apple's (real) time, whatever clock the service runs on.
    signer: new AscTokenSigner({ issuerId, keyId, privateKey }, new SystemClock()),
    clock,
  });
}
