import { expect } from 'chai';
import { readmeSection, runVerbatim, shellBlocks } from '../support/readme.js';
import { startTestService } from '../support/test-service.js';

describe("E2E: the README's fraud-rule commands, verbatim", function () {
  this.timeout(60_000);

  it('creates both rules (201), lists the reviews and answers the decision on the first (404 while none is waiting)', async () => {
    const [commands] = shellBlocks(readmeSection('## Fraud rules and reviews'));
    const svc = await startTestService({ env: { CLIENT_API_KEYS: 'ck_demo', SECRET_API_KEYS: 'sk_demo' }, validateResponses: false });
    try {
      const run = await runVerbatim(commands!, svc.url);
      expect(run.stderr).to.equal('');
      const [hourly, young, reviews, decision] = run.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(hourly.data.rule).to.include({ id: 'referrer-hourly', kind: 'referrer_claims_per_hour', action: 'hold', enabled: true });
      expect(young.data.rule).to.include({ id: 'young-accounts', kind: 'min_seconds_user_to_claim', action: 'reject' });
      expect(reviews.data).to.deep.equal({ reviews: [], next_after: null });
      expect(decision.errors[0]).to.include({ code: 'NOT_FOUND.REVIEW', status: 404 });
    } finally {
      await svc.stop();
    }
  });
});
