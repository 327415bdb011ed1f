import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { openEmbeddedBackend } from '../../../src/backends/embedded.js';
import { withDevelopmentKeys } from '../../../src/dev-keys.js';
import { loadConfig } from '../../../src/config.js';
import { tempDir } from '../../support/temp-dir.js';

const modeOf = (file: string) => (fs.statSync(file).mode & 0o777).toString(8);

/** DATA_DIR holds personal data, the keys that erase it and webhook secrets: private to the service's user. */
describe('embedded DATA_DIR: created private, whatever the umask', () => {
  let root: string;
  let umask: number;

  beforeEach(() => {
    root = tempDir('private-data');
    umask = process.umask(0o022);
  });
  afterEach(() => {
    process.umask(umask);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('the directory is 0700 and every file in it (databases, -wal, -shm, development keys) 0600', async () => {
    const dataDir = path.join(root, 'nested', 'data');
    withDevelopmentKeys(loadConfig({ DATA_DIR: dataDir }), () => {});
    const backend = openEmbeddedBackend(dataDir);
    try {
      await backend.eventStore.append(
        'user-ann',
        [{ id: 'e1', type: 'UserRegistered', data: {}, metadata: { correlation_id: 'c', causation_id: 'c', actor: 'test', schema_version: 1 } }],
        'no_stream',
      );
      const files = fs.readdirSync(dataDir);
      for (const name of ['referrals.db', 'data-keys.db', 'webhooks.db', 'referrals.db-wal', 'referrals.db-shm', 'api-keys.json'])
        expect(files).to.include(name);
      expect(modeOf(dataDir)).to.equal('700');
      expect(Object.fromEntries(files.map((name) => [name, modeOf(path.join(dataDir, name))]))).to.deep.equal(
        Object.fromEntries(files.map((name) => [name, '600'])),
      );
    } finally {
      await backend.close();
    }
  });

  it('keeps the mode of a directory and files that exist (an operator may have chosen it)', async () => {
    const dataDir = path.join(root, 'data');
    fs.mkdirSync(dataDir, { mode: 0o750 });
    fs.chmodSync(dataDir, 0o750);
    const backend = openEmbeddedBackend(dataDir);
    await backend.close();
    fs.chmodSync(path.join(dataDir, 'referrals.db'), 0o640);
    const again = openEmbeddedBackend(dataDir);
    await again.close();
    expect(modeOf(dataDir)).to.equal('750');
    expect(modeOf(path.join(dataDir, 'referrals.db'))).to.equal('640');
  });

  it('a relative DATA_DIR starting with a blank holds its files: SQLite is given absolute paths (its binding trims a file name)', async () => {
    const cwd = process.cwd();
    process.chdir(root);
    try {
      const backend = openEmbeddedBackend(' data');
      await backend.eventStore.append(
        'user-ann',
        [{ id: 'e1', type: 'UserRegistered', data: {}, metadata: { correlation_id: 'c', causation_id: 'c', actor: 'test', schema_version: 1 } }],
        'no_stream',
      );
      await backend.close();
      expect(fs.readdirSync(path.join(root, ' data'))).to.include.members(['referrals.db', 'data-keys.db', 'webhooks.db', 'rate-limits.db']);
      expect(fs.existsSync(path.join(root, 'data')), 'the name trimmed').to.equal(false);
      expect(fs.statSync(path.join(root, ' data', 'referrals.db')).size).to.be.greaterThan(0);
    } finally {
      process.chdir(cwd);
    }
    // The setting itself is read past its blanks, as every setting is; a blank one is refused.
    expect(loadConfig({ DATA_DIR: ' ./data ' }).DATA_DIR).to.equal('./data');
    expect(() => loadConfig({ DATA_DIR: ' ' })).to.throw(/DATA_DIR/);
  });
});
