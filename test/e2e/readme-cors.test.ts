import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { startTestService, tempDataDir } from '../support/test-service.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const HEADING = '\n### Apps in a browser (CORS)';

describe("E2E: the README's CORS example, verbatim, against a service started as it says", function () {
  this.timeout(60_000);

  it('shows the preflight answered 204 with the origin, methods and headers named', async () => {
    const start = README.indexOf(HEADING);
    expect(start).to.be.greaterThan(-1);
    const section = README.slice(start, README.indexOf('\n### ', start + 1));
    const commands = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
    expect(commands).to.match(/^BASE=\$\{BASE:-http:\/\/localhost:8080\}\n/);
    const svc = await startTestService({ env: { CORS_ORIGINS: 'https://app.example.com' } });
    try {
      const run = await promisify(execFile)('bash', ['-e', '-o', 'pipefail', '-c', commands!], {
        cwd: tempDataDir(),
        env: { ...process.env, BASE: svc.url },
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(run.stderr).to.equal('');
      const lines = run.stdout
        .trim()
        .split(/\r?\n/)
        .map((line) => line.toLowerCase());
      expect(lines[0]).to.match(/^http\/1\.1 204/);
      expect(lines).to.include.members([
        'access-control-allow-origin: https://app.example.com',
        'access-control-allow-methods: get,post',
        'access-control-allow-headers: x-api-key,content-type,x-request-id',
        'access-control-max-age: 600',
      ]);
    } finally {
      await svc.stop();
    }
  });
});
