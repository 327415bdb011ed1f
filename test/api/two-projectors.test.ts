import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { PROJECTOR_LOCK_FILE } from '../../src/adapters/sqlite/projector-lock.js';
import { ProjectionRunner } from '../../src/application/projections/projection-runner.js';
import type { EventStore } from '../../src/ports/event-store.js';
import type { ReadConsistency } from '../../src/ports/read-consistency.js';
import type { ProjectorBatch } from '../../src/ports/read-store.js';
import { TOKENS } from '../../src/ports/tokens.js';
import type { WebhookOutbox } from '../../src/ports/webhook-outbox.js';
import { post, STRIPE_SECRET } from '../support/revenue-senders.js';
import { FaultSwitch, faultyBackend } from '../support/faulty-backend.js';
import { never, putProgram, putReward } from '../support/fixtures.js';
import { ManualClock, startTestService, type TestService } from '../support/test-service.js';
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

/**
 * A read model the projector holds at a failing batch, seen from the standby (or an API process
 * of a split deployment): named by its /readyz as by the projector's own, and not waited for by
 * read-your-writes there either. Before, the standby could not tell it from a slow one: /readyz
 * said nothing of it and every command waited its 5 s for it.
 */
describe('API: a read model held by the projector, seen from a standby on the same DATA_DIR', function () {
  this.timeout(60_000);

  it('the standby names it in /readyz, its commands do not wait for it, and it clears once the projector moves on', async () => {
    const faults = new FaultSwitch();
    const projector = await startTestService({ backend: faultyBackend(faults) });
    const standby = await startTestService({ dataDir: projector.dataDir });
    try {
      faults.mode = 'broken';
      faults.when = (method, args) => method === 'commitBatches' && (args[0] as ProjectorBatch[]).some((batch) => batch.projector === 'codes');
      expect((await standby.call('POST', '/users', { app_user_id: 'ann' })).status).to.equal(201);
      const failureOf = async (svc: TestService) => {
        const response = await svc.call('GET', '/readyz');
        return response.body.data.projections.find((projection: { name: string }) => projection.name === 'codes').failure as { error: string } | null;
      };
      const held = await eventuallyTrue(async () => (await failureOf(standby)) !== null);
      expect(held).to.equal(true);
      expect((await failureOf(standby))!.error).to.contain('injected');
      expect(await failureOf(projector)).to.deep.equal(await failureOf(standby));
      // The process managers run beside the projector only: the standby does not report them as its own.
      expect((await projector.call('GET', '/readyz')).body.data.reactions).to.not.equal(null);
      expect((await standby.call('GET', '/readyz')).body.data.reactions).to.equal(null);
      // A command on the standby: read-your-writes does not wait for the held read model.
      expect((await standby.call('POST', '/users', { app_user_id: 'bob' })).status).to.equal(201);
      const consistency = standby.service.container.resolve<ReadConsistency>(TOKENS.ReadConsistency);
      const head = (await standby.service.container.resolve<EventStore>(TOKENS.EventStore).headPosition())!;
      expect(await consistency.waitFor(head, 0)).to.equal(true);
      expect(await consistency.waitFor(head, 0, 'codes')).to.equal(false);

      faults.mode = 'ok';
      expect(await eventuallyTrue(async () => (await failureOf(standby)) === null && (await standby.call('GET', '/readyz')).status === 200)).to.equal(true);
    } finally {
      await standby.stop();
      await projector.stop();
    }
  });
});

describe('API: an API-only process (RUN_PROJECTOR=false) whose projector stopped', function () {
  this.timeout(60_000);

  it('is not ready once the read models stay behind the log without moving for 10 s (every write would wait, then answer 503)', async () => {
    const projector = await startTestService({});
    const api = await startTestService({ dataDir: projector.dataDir, role: 'api' });
    const realNow = Date.now;
    try {
      expect((await api.call('POST', '/users', { app_user_id: 'before' })).status).to.equal(201);
      expect((await api.call('GET', '/readyz')).status).to.equal(200);
      await projector.stop();
      // Nobody projects now: the write is recorded, its answer cannot be read back.
      expect((await api.call('POST', '/users', { app_user_id: 'after' })).status).to.equal(503);
      const first = await api.call('GET', '/readyz');
      expect(first.status, 'a read model just behind may be moving: not stalled yet').to.equal(200);
      Date.now = () => realNow() + 10_001;
      const later = await api.call('GET', '/readyz');
      Date.now = realNow;
      expect(later.status).to.equal(503);
      const users = later.body.data.projections.find((projection: { name: string }) => projection.name === 'users');
      expect(users).to.deep.include({ lag: 1, caught_up: false, failure: null });
    } finally {
      Date.now = realNow;
      await api.stop();
      await projector.stop();
    }
  });

  it('answers a command on a known user 503 with Retry-After, saying the write is recorded, not 200 with a user that does not show it; the write shows once a projector runs', async () => {
    const projector = await startTestService({});
    const api = await startTestService({ dataDir: projector.dataDir, role: 'api' });
    let restarted: TestService | null = null;
    try {
      await putReward(api, 'coins', { kind: 'credit', name: 'Coins', credits: 10 });
      await putProgram(api, 'friends', {
        rewards: { sender: [], receiver: [{ reward_key: 'coins', activation: { variant: 'claim' }, deactivation: never }] },
      });
      const referrer = (await api.call('POST', '/users', { app_user_id: 'referrer' })).body.data.user;
      expect((await api.call('POST', '/users', { app_user_id: 'claimer' })).status).to.equal(201);
      expect((await api.call('POST', '/users', { app_user_id: 'updated' })).status).to.equal(201);
      await projector.stop();
      // Nobody projects now. Each answer would have shown the user as before the write.
      const [claimed, updated, unchanged] = await Promise.all([
        api.call('POST', '/users/claimer/claim-code', { code: referrer.referral_code }),
        api.call('POST', '/users', { app_user_id: 'updated', is_premium: true }),
        api.call('POST', '/users', { app_user_id: 'referrer' }),
      ]);
      // A command that wrote nothing says so: its answer waited for the log's head all the same.
      expect(unchanged.status).to.equal(503);
      expect(unchanged.body.errors[0].message).to.contain('nothing was written');
      for (const answer of [claimed, updated]) {
        expect(answer.status).to.equal(503);
        expect(answer.headers.get('retry-after')).to.equal('5');
        expect(answer.body.errors[0]).to.deep.include({ code: 'SERVICE_UNAVAILABLE', source: null });
        expect(answer.body.errors[0].message).to.contain('The write is recorded');
      }
      restarted = await startTestService({ dataDir: projector.dataDir });
      const claimer = await eventually(
        async () => (await api.call('GET', '/users/claimer')).body.data.user,
        (user) => user.referred_by !== null,
      );
      expect(claimer.referred_by).to.deep.include({ code: referrer.referral_code });
      expect((await api.call('GET', '/users/updated')).body.data.user.is_premium).to.equal(true);
      // Repeating the claim the client was told is recorded: it is the claimer's one claim.
      const again = await api.call('POST', '/users/claimer/claim-code', { code: referrer.referral_code });
      expect(again.body.errors[0].code).to.equal('CLAIM.ALREADY_CLAIMED');
    } finally {
      await restarted?.stop();
      await api.stop();
      await projector.stop();
    }
  });
  it('answers what does not need the read models as before: a forged notification 401, a credit ledger with expiries due 200, a deleted endpoint leaves no message behind', async () => {
    const clock = new ManualClock();
    const env = { ...LOCAL, STRIPE_WEBHOOK_SECRET: STRIPE_SECRET };
    const projector = await startTestService({ clock, env });
    const api = await startTestService({ dataDir: projector.dataDir, role: 'api', clock, env });
    const receiver = await new Receiver().start();
    try {
      await putReward(api, 'coins', { kind: 'credit', name: 'Coins', credits: 10 });
      expect((await api.call('POST', '/users', { app_user_id: 'holder' })).status).to.equal(201);
      const granted = await api.admin('POST', '/users/holder/rewards/grant', {
        key: 'coins',
        deactivation: { variant: 'interval', duration: 1, period: 'days' },
      });
      expect(granted.status).to.equal(201);
      expect((await api.admin('PUT', '/admin/webhooks/gone', { url: receiver.url })).status).to.equal(201);
      expect((await api.call('POST', '/users', { app_user_id: 'announced' })).status).to.equal(201);
      const outbox = api.service.container.resolve<WebhookOutbox>(TOKENS.WebhookOutbox);
      await eventually(
        () => outbox.list('gone', { limit: 10 }),
        (messages) => messages.length > 0,
      );
      await projector.stop();
      clock.advance(2 * 24 * 3600_000);
      const [forged, ledger, deleted] = await Promise.all([
        post(api, '/webhooks/stripe', JSON.stringify({ id: 'evt_forged', type: 'invoice.paid' }), { 'stripe-signature': 't=1,v1=00' }),
        api.admin('GET', '/admin/users/holder/credit-ledger'),
        api.admin('DELETE', '/admin/webhooks/gone'),
      ]);
      // The rejection is kept; its answer is the 401 whatever the read models show.
      expect(forged.status).to.equal(401);
      expect(forged.body.errors[0].code).to.equal('WEBHOOK.UNAUTHORIZED');
      // A read answers from the read models as they stand (the expiry it recorded shows once they
      // catch up), and again while they still list that expiry as due.
      expect(ledger.status).to.equal(200);
      expect((await api.admin('GET', '/admin/users/holder/credit-ledger')).status).to.equal(200);
      // The endpoint's removal is recorded and its messages removed before the answer waits.
      expect(deleted.status).to.equal(503);
      expect(await outbox.list('gone', { limit: 10 })).to.deep.equal([]);
      expect((await api.admin('DELETE', '/admin/webhooks/gone')).status).to.equal(404);
    } finally {
      await receiver.stop();
      await api.stop();
      await projector.stop();
    }
  });
  it('answers a review decision that wrote 503 saying the write is recorded, and a repeated one that nothing was written', async () => {
    const projector = await startTestService({});
    const api = await startTestService({ dataDir: projector.dataDir, role: 'api' });
    try {
      await putReward(api, 'c5', { kind: 'credit', name: 'Five', credits: 5 });
      await putProgram(api, 'main', {
        rewards: { sender: [{ reward_key: 'c5', activation: { variant: 'claim', amount: 1, limit: 0 }, deactivation: never }], receiver: [] },
      });
      const referrer = (await api.call('POST', '/users', { app_user_id: 'ref' })).body.data.user;
      expect((await api.call('POST', '/users', { app_user_id: 'held' })).status).to.equal(201);
      const rule = await api.admin('PUT', '/admin/rules/hold', { kind: 'blocked_users', params: { app_user_ids: ['held'] }, action: 'hold', enabled: true });
      expect(rule.status).to.be.oneOf([200, 201]);
      expect((await api.call('POST', '/users/held/claim-code', { code: referrer.referral_code })).status).to.equal(200);
      const reviews = await eventually(
        async () => (await api.admin('GET', '/admin/reviews?limit=10')).body.data.reviews as { id: string }[],
        (listed) => listed.length === 1,
      );
      await projector.stop();
      const approved = await api.admin('POST', `/admin/reviews/${reviews[0]!.id}/approve`);
      expect(approved.status).to.equal(503);
      expect(approved.body.errors[0].message).to.contain('The write is recorded');
      const again = await api.admin('POST', `/admin/reviews/${reviews[0]!.id}/approve`);
      expect(again.status).to.equal(503);
      expect(again.body.errors[0].message).to.contain('nothing was written');
    } finally {
      await api.stop();
      await projector.stop();
    }
  });
});

const eventuallyTrue = (check: () => Promise<boolean>) => eventually(check, (yes) => yes);

describe('API: projector.lock deleted under a running projector', function () {
  this.timeout(60_000);

  it('the projector takes the new file within a second: a service started afterwards stands by', async () => {
    const first = await startTestService();
    let second: TestService | null = null;
    try {
      const lockFile = path.join(first.dataDir, PROJECTOR_LOCK_FILE);
      fs.rmSync(lockFile);
      expect(await eventuallyTrue(async () => fs.existsSync(lockFile))).to.equal(true);
      second = await startTestService({ dataDir: first.dataDir });
      const projecting = (svc: TestService) => svc.service.container.resolve(ProjectionRunner).following;
      expect([projecting(first), projecting(second)]).to.deep.equal([true, false]);
    } finally {
      await second?.stop();
      await first.stop();
    }
  });
});
