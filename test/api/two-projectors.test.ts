import { expect } from 'chai';
import { ProjectionRunner } from '../../src/application/projections/projection-runner.js';
import { never, putProgram, putReward } from '../support/fixtures.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { eventually, Receiver } from '../support/webhook-receiver.js';

const LOCAL = { WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' };

/**
 * Two full services on one embedded DATA_DIR (`npm start` run twice, or `npm run demo` beside a
 * running service): one projects, the other serves the API as a standby and takes over when the
 * first stops. Without that, both fought over every checkpoint (commands waited seconds, some
 * answered 503) and both delivered every webhook.
 */
describe('API: two full services on one embedded DATA_DIR', function () {
  this.timeout(60_000);
  let first: TestService;
  let second: TestService;
  let receiver: Receiver;

  before(async () => {
    first = await startTestService({ env: LOCAL });
    second = await startTestService({ dataDir: first.dataDir, env: LOCAL });
    receiver = await new Receiver().start();
  });
  after(async () => {
    await second?.stop();
    await first?.stop();
    await receiver?.stop();
  });

  /** Whether a service's own projector runs (the other one stands by). */
  const projecting = (svc: TestService) => svc.service.container.resolve(ProjectionRunner).following;
  const deliveredIds = () => receiver.requests.map((request) => request.headers['webhook-id']);
  const claimersOf = async (svc: TestService, referrer: string) => (await svc.call('GET', `/users/${referrer}`)).body.data.user.stats.claims as number;

  it('one of them projects: every webhook is delivered once, and claims on either are counted once for the referrer', async () => {
    expect([projecting(first), projecting(second)]).to.deep.equal([true, false]);
    await putReward(first, 'gift', { kind: 'basic', name: 'Gift' });
    await putProgram(first, 'friends', {
      rewards: { sender: [], receiver: [{ reward_key: 'gift', activation: { variant: 'claim' }, deactivation: never }] },
    });
    const endpoint = await second.admin('PUT', '/admin/webhooks/backend', { url: receiver.url, events: ['user.created'] });
    expect(endpoint.status, JSON.stringify(endpoint.body)).to.equal(201);
    const code = (await first.call('POST', '/users', { app_user_id: 'referrer' })).body.data.user.referral_code as string;
    const claimers = Array.from({ length: 24 }, (_, index) => `claimer-${index}`);
    await Promise.all(
      claimers.map(async (id, index) => {
        const svc = index % 2 === 0 ? first : second;
        expect((await svc.call('POST', '/users', { app_user_id: id })).status).to.equal(201);
        const claimed = await svc.call('POST', `/users/${id}/claim-code`, { code });
        expect(claimed.status, JSON.stringify(claimed.body)).to.equal(200);
        // Read-your-writes on the process that answered, whichever one projects.
        expect((await svc.call('GET', `/users/${id}`)).body.data.user.referred_by.code).to.equal(code);
      }),
    );
    await receiver.waitFor((requests) => requests.length >= 25);
    expect(
      await eventually(
        () => claimersOf(second, 'referrer'),
        (claims) => claims === 24,
      ),
    ).to.equal(24);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.requests).to.have.length(25);
    expect(new Set(deliveredIds()).size).to.equal(25);
  });

  it('when the projecting one stops, the other takes over: its reactions and webhooks go on, still once each', async () => {
    await first.stop();
    expect(
      await eventually(
        async () => projecting(second),
        (yes) => yes,
      ),
    ).to.equal(true);
    const code = (await second.call('GET', '/users/referrer')).body.data.user.referral_code as string;
    for (const id of ['late-1', 'late-2', 'late-3']) {
      expect((await second.call('POST', '/users', { app_user_id: id })).status).to.equal(201);
      expect((await second.call('POST', `/users/${id}/claim-code`, { code })).status).to.equal(200);
    }
    expect(
      await eventually(
        () => claimersOf(second, 'referrer'),
        (claims) => claims === 27,
      ),
    ).to.equal(27);
    await receiver.waitFor((requests) => requests.length >= 28);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.requests).to.have.length(28);
    expect(new Set(deliveredIds()).size).to.equal(28);
  });
});
