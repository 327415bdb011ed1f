import { expect } from 'chai';
import { demoDataDir, readmeSection, runVerbatim, shellBlocks } from '../support/readme.js';
import { startTestService } from '../support/test-service.js';

describe("E2E: the README's RevenueCat notification by hand, verbatim, after npm run demo", function () {
  this.timeout(180_000);

  it('is applied, then a duplicate, and ranks the referrer code by revenue (499 minor units of USD)', async () => {
    const [start, commands] = shellBlocks(readmeSection('### Try it without a provider account'));
    expect(start).to.contain("REVENUECAT_WEBHOOK_AUTH='Bearer rc-try' npm start");
    expect(commands).to.match(/^BASE=\$\{BASE:-http:\/\/localhost:8080\}\n/);
    const dataDir = await demoDataDir();
    // Started as the section says (validated against /openapi.json).
    const svc = await startTestService({ dataDir, env: { CLIENT_API_KEYS: 'ck_demo', SECRET_API_KEYS: 'sk_demo', REVENUECAT_WEBHOOK_AUTH: 'Bearer rc-try' } });
    try {
      const run = await runVerbatim(commands!, svc.url);
      expect(run.stderr).to.equal('');
      const [applied, duplicate, ranked] = run.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(applied).to.deep.equal({ data: { status: 'applied' } });
      expect(duplicate).to.deep.equal({ data: { status: 'duplicate' } });
      const ana = (await svc.call('GET', '/users/demo-ana', undefined, { 'x-api-key': 'ck_demo' })).body.data.user;
      expect(ranked.data.codes).to.have.length(1);
      expect(ranked.data.codes[0]).to.deep.include({ code: ana.referral_code, kind: 'referral', app_user_id: 'demo-ana' });
      expect(ranked.data.codes[0].revenue).to.deep.equal([{ currency: 'USD', gross_minor: 499, refunded_minor: 0 }]);
    } finally {
      await svc.stop();
    }
  });
});
