import { expect } from 'chai';
import { readmeSection, runVerbatim, shellBlocks } from '../support/readme.js';
import { startTestService } from '../support/test-service.js';

describe("E2E: the README's webhook endpoint command, verbatim", function () {
  this.timeout(60_000);

  it('creates the endpoint (201, its secret shown once) or, where example.com does not resolve, answers the 422 the README names', async () => {
    const [commands] = shellBlocks(readmeSection('### Configure an endpoint'));
    expect(commands).to.match(/^BASE=\$\{BASE:-http:\/\/localhost:8080\}\n/);
    const svc = await startTestService({ env: { CLIENT_API_KEYS: 'ck_demo', SECRET_API_KEYS: 'sk_demo' } });
    try {
      const run = await runVerbatim(commands!, svc.url);
      expect(run.stderr).to.equal('');
      const lines = run.stdout.trim().split('\n');
      expect(lines).to.have.length(1);
      const answer = JSON.parse(lines[0]!);
      if (answer.errors) {
        expect(answer.errors[0]).to.include({ code: 'WEBHOOK.URL_NOT_ALLOWED', status: 422 });
        expect(answer.errors[0].message).to.contain('does not resolve');
      } else {
        expect(answer.data.webhook).to.include({ id: 'backend', url: 'https://example.com/hooks/referrals', enabled: true });
        expect(answer.data.webhook.events).to.deep.equal(['reward.granted', 'reward.expired']);
        expect(answer.data.webhook.secret).to.match(/^whsec_/);
      }
    } finally {
      await svc.stop();
    }
  });
});
