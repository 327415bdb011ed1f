import { expect } from 'chai';
import { readmeSection, runVerbatim, shellBlocks } from '../support/readme.js';
import { startTestService } from '../support/test-service.js';

describe("E2E: the README's erasure and access commands, verbatim", function () {
  this.timeout(60_000);

  it('gives alice a personal value, exports her, erases her (204), and her events then show {"erased": true}', async () => {
    const [commands] = shellBlocks(readmeSection('## Personal data: erasure and access'));
    const svc = await startTestService({ env: { CLIENT_API_KEYS: 'ck_demo', SECRET_API_KEYS: 'sk_demo' }, validateResponses: false });
    try {
      // Alice as the walkthrough creates her, without a personal value.
      const created = await fetch(`${svc.url}/users`, {
        method: 'POST',
        headers: { 'x-api-key': 'ck_demo', 'content-type': 'application/json' },
        body: JSON.stringify({ app_user_id: 'alice', is_premium: true }),
      });
      expect(created.status).to.equal(201);
      const run = await runVerbatim(commands!, svc.url);
      expect(run.stderr).to.equal('');
      const [updated, exported, status, log] = run.stdout.trim().split('\n');
      expect(updated).to.equal('200');
      expect(JSON.parse(exported!).data.export.user.metadata).to.deep.equal({ email: 'alice@example.org' });
      expect(status).to.equal('204');
      const events = JSON.parse(log!).data.events as { type: string; data: { changes?: { metadata?: unknown } } }[];
      expect(events.find((event) => event.type === 'UserProfileUpdated')!.data.changes!.metadata).to.deep.equal({ erased: true });
      expect(log).not.to.contain('alice@example.org');
    } finally {
      await svc.stop();
    }
  });
});
