import { expect } from 'chai';
import { readmeSection, runVerbatim, shellBlocks } from '../support/readme.js';
import { startTestService } from '../support/test-service.js';

describe("E2E: the README's WinWinKit section, verbatim, against a started service", function () {
  this.timeout(60_000);

  it('runs its commands as written: the wire user, two links and the admin listing', async () => {
    const [commands] = shellBlocks(readmeSection('## WinWinKit SDKs: switch by changing one URL'));
    expect(commands).to.match(/^BASE=\$\{BASE:-http:\/\/localhost:8080\}\n/);
    const svc = await startTestService({ env: { CLIENT_API_KEYS: 'ck_demo', SECRET_API_KEYS: 'sk_demo' } });
    try {
      const run = await runVerbatim(commands!, svc.url);
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
