import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { loadConfig } from '../../../src/config.js';
import { withDevelopmentKeys } from '../../../src/dev-keys.js';
import { tempDir } from '../../support/temp-dir.js';

describe('development API keys (outside production)', () => {
  const dataDir = () => tempDir('dev-keys');

  it('without keys, makes one client and one secret key and keeps them', () => {
    const printed: string[] = [];
    const config = withDevelopmentKeys(loadConfig({ DATA_DIR: dataDir() }), (text) => printed.push(text));
    expect(config.CLIENT_API_KEYS).to.have.length(1);
    expect(config.SECRET_API_KEYS).to.have.length(1);
    expect(printed.join('')).to.contain('generated development keys');
  });

  it('with one list set and the other empty, keeps them as configured and says which is empty', () => {
    for (const [set, empty] of [
      ['SECRET_API_KEYS', 'CLIENT_API_KEYS'],
      ['CLIENT_API_KEYS', 'SECRET_API_KEYS'],
    ] as const) {
      const printed: string[] = [];
      const dir = dataDir();
      const config = withDevelopmentKeys(loadConfig({ DATA_DIR: dir, [set]: 'only-key' }), (text) => printed.push(text));
      expect(config[set], set).to.deep.equal(['only-key']);
      expect(config[empty], set).to.deep.equal([]);
      expect(printed, set).to.have.length(1);
      expect(printed[0], set).to.match(new RegExp(`^${empty} is empty`));
      expect(fs.existsSync(path.join(dir, 'api-keys.json')), set).to.equal(false);
    }
  });

  it('with both lists set, says nothing', () => {
    const printed: string[] = [];
    withDevelopmentKeys(loadConfig({ DATA_DIR: dataDir(), CLIENT_API_KEYS: 'ck', SECRET_API_KEYS: 'sk' }), (text) => printed.push(text));
    expect(printed).to.deep.equal([]);
  });
});
