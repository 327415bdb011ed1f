import { expect } from 'chai';
import { walkthrough } from '../../examples/typed-client/walkthrough.js';
import { CLIENT_KEY, SECRET_KEY, startTestService, type TestService } from '../support/test-service.js';

describe('Typed client (openapi-fetch over the generated types) drives the walkthrough', () => {
  let svc: TestService;

  before(async () => {
    svc = await startTestService();
  });
  after(async () => svc.stop());

  it('creates rewards, a program and users, claims, withdraws (idempotently) and reads the ledger', async () => {
    const lines: string[] = [];
    const result = await walkthrough({ baseUrl: svc.url, clientKey: CLIENT_KEY, secretKey: SECRET_KEY, log: (line) => lines.push(line) });
    expect(result.bob.referred_by).to.include({ code: result.alice.referral_code, type: 'referral' });
    expect(result.bob.rewards.active.basic.map((entry) => entry.reward.key)).to.deep.equal(['premium-week']);
    expect(result.alice.stats.claims).to.equal(1);
    expect(result.withdrawn).to.equal(20);
    expect(result.repeatedWithdrawn).to.equal(20);
    expect(result.alice.rewards.active.credit.reduce((sum, entry) => sum + (entry.credits ?? 0), 0)).to.equal(30);
    expect(result.ledgerRows).to.equal(2);
    expect(lines).to.include('unknown user: 404 NOT_FOUND.USER');
  });
});
