import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { openAppStoreConnect } from '../../../src/adapters/appstore/open-app-store-connect.js';
import { ConfigError, loadConfig } from '../../../src/config.js';
import type { Clock } from '../../../src/ports/clock.js';
import { ascKeyPair, ISSUER_ID, KEY_ID } from './fake-app-store-connect.js';
import { tempDir } from '../../support/temp-dir.js';

const clock: Clock = { now: () => new Date() };

describe('openAppStoreConnect', () => {
  const dir = tempDir('asc-key');
  const config = (keyPath?: string) =>
    loadConfig({ NODE_ENV: 'test', ...(keyPath ? { ASC_ISSUER_ID: ISSUER_ID, ASC_KEY_ID: KEY_ID, ASC_PRIVATE_KEY_PATH: keyPath } : {}) });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('is not configured without ASC credentials', async () => {
    const port = await openAppStoreConnect(config(), clock);
    expect(port.configured).to.equal(false);
    expect(await port.fetchOfferCode('1')).to.equal(null);
  });

  it('is configured with a readable .p8 key', async () => {
    const keyPath = path.join(dir, 'AuthKey.p8');
    fs.writeFileSync(keyPath, (await ascKeyPair()).pem);
    expect((await openAppStoreConnect(config(keyPath), clock)).configured).to.equal(true);
  });

  it('stops start-up naming ASC_PRIVATE_KEY_PATH when the key file is missing or not a key', async () => {
    const notAKey = path.join(dir, 'not-a-key.p8');
    fs.writeFileSync(notAKey, 'hello');
    for (const keyPath of [path.join(dir, 'missing.p8'), notAKey]) {
      try {
        await openAppStoreConnect(config(keyPath), clock);
        expect.fail('expected a ConfigError');
      } catch (error) {
        expect(error).to.be.instanceOf(ConfigError);
        expect((error as ConfigError).message).to.contain('ASC_PRIVATE_KEY_PATH');
      }
    }
  });
});
