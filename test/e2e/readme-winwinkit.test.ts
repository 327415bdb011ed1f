import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { startTestService, tempDataDir } from '../support/test-service.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const HEADING = '\n## WinWinKit SDKs';

describe("E2E: the README's WinWinKit section, verbatim, against a started service", function () {
  this.timeout(60_000);

  it('runs its commands as written: the wire user, two links and the admin listing', async () => {
    const start = README.indexOf(HEADING);
    expect(start).to.be.greaterThan(-1);
    const section = README.slice(start, README.indexOf('\n## ', start + 1));
    const commands = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
    expect(commands).to.match(/^BASE=\$\{BASE:-http:\/\/localhost:8080\}\n/);
    const svc = await startTestService({ env: { CLIENT_API_KEYS: 'ck_demo', SECRET_API_KEYS: 'sk_demo' } });
    try {
      // Asynchronously: the service runs in this process and must answer while the commands run.
      const run = await promisify(execFile)('bash', ['-e', '-o', 'pipefail', '-c', commands!], {
        cwd: tempDataDir(),
        env: { ...process.env, BASE: svc.url },
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(run.stderr).to.equal('');
      const [created, appStore, googlePlay, listing, rest] = run.stdout.split('\n');
      expect(rest).to.equal('');
      expect(JSON.parse(created!).data.user).to.include({ app_user_id: 'carol', stripe_customer_id: 'cus_123' });
      expect([appStore, googlePlay]).to.deep.equal(['204', '204']);
      const { links } = JSON.parse(listing!).data;
      expect(links.map((link: { provider: string }) => link.provider)).to.deep.equal(['app-store', 'google-play']);
    } finally {
      await svc.stop();
    }
  });
});
