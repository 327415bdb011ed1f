import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { unsupportedNode } from '../../../src/supported-node.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
/** The machine's own Node, when it is one the project does not support (Node 20 on these machines). */
const SYSTEM_NODE = '/usr/bin/node';

describe('The service refuses a Node release it does not support', () => {
  it('accepts 22.22 and later, 24 and later; refuses 20, 22.21 and older, naming the version and what to do', () => {
    for (const version of ['22.22.0', '22.23.1', '24.0.0', '24.21.0', '25.1.0']) expect(unsupportedNode(version), version).to.equal(null);
    for (const version of ['20.20.2', '22.21.9', '18.0.0', '8.17.0']) {
      const refusal = unsupportedNode(version);
      expect(refusal, version).to.contain(`Node ${version} cannot run this service`);
      expect(refusal).to.contain('scripts/runtime/install-node.sh 24');
    }
  });

  it('started on such a Node, the service says so and exits 1 before loading anything native', async function () {
    const version = fs.existsSync(SYSTEM_NODE) ? (await promisify(execFile)(SYSTEM_NODE, ['-p', 'process.versions.node'])).stdout.trim() : null;
    if (version === null || unsupportedNode(version) === null) this.skip(); // no unsupported Node on this machine
    try {
      await promisify(execFile)(SYSTEM_NODE, ['--import', 'tsx', 'src/main.ts'], {
        cwd: ROOT,
        env: { ...process.env, DATA_DIR: '/nonexistent/never-created' },
        timeout: 20_000,
      });
      expect.fail('the service started on an unsupported Node');
    } catch (error) {
      const failure = error as { code?: number; stderr?: string; signal?: string | null };
      expect(failure.signal ?? null, 'exits by itself, not by a crash').to.equal(null);
      expect(failure.code).to.equal(1);
      expect(failure.stderr).to.contain(`Node ${version} cannot run this service`);
    }
  });
});
