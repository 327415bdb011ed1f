import { expect } from 'chai';
import { RevenueCatEntitlements } from '../../src/adapters/revenuecat/revenuecat-entitlements.js';
import { RandomIds } from '../../src/adapters/system/random-ids.js';
import { EventLog } from '../../src/application/event-log.js';
import { openEmbeddedBackend } from '../../src/backends/embedded.js';
import type { ProjectorBatch } from '../../src/ports/read-store.js';
import { FaultSwitch, faultyBackend } from '../support/faulty-backend.js';
import { SECRET_KEY, startTestService, type TestService, tempDataDir } from '../support/test-service.js';
import { eventually, Receiver } from '../support/webhook-receiver.js';

const API_KEY = 'sk_test_revenuecat_secret';

/** A fake RevenueCat API on 127.0.0.1: records requests and answers as the test says. */
async function fakeRevenueCat(): Promise<Receiver> {
  const receiver = await new Receiver().start();
  receiver.url = receiver.url.replace(/\/hook$/, '');
  return receiver;
}

async function deliveries(service: TestService): Promise<any[]> {
  const response = await fetch(`${service.url}/admin/webhooks/_revenuecat/deliveries`, { headers: { 'x-api-key': SECRET_KEY } });
  return response.status === 200 ? ((await response.json()) as any).data.deliveries : [];
}

describe('API: RevenueCat fulfilment of partner_entitlement rewards (fake RevenueCat on 127.0.0.1)', function () {
  let service: TestService;
  let revenuecat: Receiver;

  beforeEach(async () => {
    revenuecat = await fakeRevenueCat();
    // The clock moves by up to a year here: delivered messages are kept that long to be listed.
    service = await startTestService({
      env: { REVENUECAT_SECRET_API_KEY: API_KEY, REVENUECAT_BASE_URL: revenuecat.url, WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_RETENTION_DAYS: '3650' },
    });
    expect(
      (await service.admin('PUT', '/admin/rewards/pro', { kind: 'partner_entitlement', name: 'Pro', entitlement_id: 'premium access', entitlement_key: 'pro' }))
        .status,
    ).to.equal(201);
    expect(
      (
        await service.admin('PUT', '/admin/rewards/forever', {
          kind: 'partner_entitlement',
          name: 'Forever',
          entitlement_id: 'lifetime',
          entitlement_key: 'forever',
        })
      ).status,
    ).to.equal(201);
    expect((await service.admin('PUT', '/admin/rewards/gift', { kind: 'basic', name: 'Gift' })).status).to.equal(201);
    expect((await service.call('POST', '/users', { app_user_id: 'user/1' })).status).to.equal(201);
  });
  afterEach(async () => {
    await service.stop();
    await revenuecat.stop();
  });

  it('refuses an entitlement id that is a dot segment: the call would go to another path of RevenueCat, with the secret key', async () => {
    for (const id of ['.', '..']) {
      const refused = await service.admin('PUT', '/admin/rewards/dots', {
        kind: 'partner_entitlement',
        name: 'Dots',
        entitlement_id: id,
        entitlement_key: 'dots',
      });
      expect(refused.status, id).to.equal(400);
      expect(refused.body.errors[0], id).to.include({ code: 'BAD_REQUEST', source: '/entitlement_id' });
    }
    expect((await service.admin('GET', '/admin/rewards/dots')).status).to.equal(404);
    // One recorded before the admin API refused it (or a user id of an older log) is never sent.
    const entitlements = new RevenueCatEntitlements(API_KEY, revenuecat.url, 2000);
    for (const [user, entitlement] of [
      ['user-1', '..'],
      ['user-1', '.'],
      ['..', 'premium'],
    ]) {
      const outcome = await entitlements.grant(user!, entitlement!, null);
      expect(outcome, `${user} ${entitlement}`).to.include({ statusCode: null });
      expect(outcome.error).to.contain('not sent');
      expect((await entitlements.revoke(user!, entitlement!)).error).to.contain('not sent');
    }
    expect(revenuecat.requests).to.deep.equal([]);
    expect((await entitlements.grant('user-1', 'premium', null)).error).to.equal(null);
    expect(revenuecat.requests.map((request) => request.path)).to.deep.equal(['/v1/subscribers/user-1/entitlements/premium/promotional']);
  });

  it('grants the promotional entitlement until the entry ends, and revokes it when the reward expires', async () => {
    const granted = await service.admin('POST', `/users/${encodeURIComponent('user/1')}/rewards/grant`, {
      key: 'pro',
      deactivation: { variant: 'interval', duration: 30, period: 'days' },
    });
    expect(granted.status).to.equal(201);
    const expiresAt = new Date(service.clock.now().getTime() + 30 * 86_400_000).toISOString();
    await revenuecat.waitFor((requests) => requests.length >= 1);
    const grant = revenuecat.requests[0]!;
    expect(grant.method).to.equal('POST');
    expect(grant.path).to.equal('/v1/subscribers/user%2F1/entitlements/premium%20access/promotional');
    expect(grant.headers.authorization).to.equal(`Bearer ${API_KEY}`);
    expect(grant.json).to.deep.equal({ end_time_ms: Date.parse(expiresAt) });

    // A basic reward goes nowhere.
    expect((await service.admin('POST', `/users/${encodeURIComponent('user/1')}/rewards/grant`, { key: 'gift' })).status).to.equal(201);

    service.clock.advance(31 * 86_400_000);
    await service.service.runMaintenance();
    await revenuecat.waitFor((requests) => requests.length >= 2);
    const revoke = revenuecat.requests[1]!;
    expect(revoke.path).to.equal('/v1/subscribers/user%2F1/entitlements/premium%20access/revoke_promotionals');
    expect(revoke.headers.authorization).to.equal(`Bearer ${API_KEY}`);
    expect(revenuecat.requests).to.have.length(2);
  });

  it('keeps the entitlement while another live reward grants it: the revoke is followed by a grant until that reward ends', async () => {
    const year = { kind: 'partner_entitlement', name: 'Pro for a year', entitlement_id: 'premium access', entitlement_key: 'pro' };
    expect((await service.admin('PUT', '/admin/rewards/pro-year', year)).status).to.equal(201);
    const grant = (key: string, duration: number) =>
      service.admin('POST', `/users/${encodeURIComponent('user/1')}/rewards/grant`, { key, deactivation: { variant: 'interval', duration, period: 'days' } });
    expect((await grant('pro-year', 365)).status).to.equal(201);
    const yearEnds = new Date(service.clock.now().getTime() + 365 * 86_400_000).toISOString();
    expect((await grant('pro', 30)).status).to.equal(201);
    await revenuecat.waitFor((requests) => requests.length >= 2);

    service.clock.advance(31 * 86_400_000);
    await service.service.runMaintenance();
    await revenuecat.waitFor((requests) => requests.length >= 4);
    const [revoke, regrant] = revenuecat.requests.slice(2);
    expect(revoke!.path).to.equal('/v1/subscribers/user%2F1/entitlements/premium%20access/revoke_promotionals');
    expect(regrant!.path).to.equal('/v1/subscribers/user%2F1/entitlements/premium%20access/promotional');
    expect(regrant!.json).to.deep.equal({ end_time_ms: Date.parse(yearEnds) });

    // When the year ends too, nothing holds it any more: a revoke alone.
    service.clock.advance(335 * 86_400_000);
    await service.service.runMaintenance();
    await revenuecat.waitFor((requests) => requests.length >= 5);
    expect(revenuecat.requests[4]!.path).to.match(/\/revoke_promotionals$/);
    expect((await deliveries(service)).map((row) => row.status)).to.deep.equal(['delivered', 'delivered', 'delivered', 'delivered']);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(revenuecat.requests).to.have.length(5);
  });

  it("waits for the users read model to include the revoke before reading the user's other entries; meanwhile it fails and retries", async () => {
    await service.stop();
    const faults = new FaultSwitch();
    service = await startTestService({
      backend: faultyBackend(faults),
      env: { REVENUECAT_SECRET_API_KEY: API_KEY, REVENUECAT_BASE_URL: revenuecat.url, WEBHOOK_TIMEOUT_MS: '2000' },
    });
    expect(
      (await service.admin('PUT', '/admin/rewards/pro', { kind: 'partner_entitlement', name: 'Pro', entitlement_id: 'premium', entitlement_key: 'pro' }))
        .status,
    ).to.equal(201);
    expect((await service.call('POST', '/users', { app_user_id: 'held' })).status).to.equal(201);
    const grant = { key: 'pro', deactivation: { variant: 'interval', duration: 1, period: 'days' } };
    expect((await service.admin('POST', '/users/held/rewards/grant', grant)).status).to.equal(201);
    await revenuecat.waitFor((requests) => requests.length >= 1);
    // The read models stop moving from here (the store refuses their commits for a while): the expiry's revoke must wait for them.
    faults.mode = 'unavailable';
    faults.when = (method, args) => method === 'commitBatches' && (args[0] as ProjectorBatch[]).some((batch) => batch.projector === 'users');
    service.clock.advance(2 * 86_400_000);
    await service.service.runMaintenance();
    const waiting = await eventually(
      () => deliveries(service),
      (rows) => rows[1]?.attempts >= 1,
      15_000,
    );
    expect(waiting[1]).to.include({ event_type: 'entitlement.revoke', status: 'failed' });
    expect(waiting[1].last_error).to.contain('users read model is behind');
    expect(revenuecat.requests).to.have.length(1);
    faults.mode = 'ok';
    service.clock.advance(Date.parse(waiting[1].next_attempt_at) - service.clock.now().getTime());
    await revenuecat.waitFor((requests) => requests.length >= 2);
    expect(revenuecat.requests[1]!.path).to.match(/\/premium\/revoke_promotionals$/);

    // A users read model held at a failing batch (waiting for an operator) is not waited for: the revoke goes at its first attempt.
    expect((await service.admin('POST', '/users/held/rewards/grant', grant)).status).to.equal(201);
    await revenuecat.waitFor((requests) => requests.length >= 3);
    faults.mode = 'broken';
    service.clock.advance(2 * 86_400_000);
    await service.service.runMaintenance();
    await revenuecat.waitFor((requests) => requests.length >= 4, 15_000);
    expect(revenuecat.requests[3]!.path).to.match(/\/premium\/revoke_promotionals$/);
    expect((await deliveries(service))[3]).to.include({ status: 'delivered', attempts: 1 });
  });

  it('grants a reward that never ends for a lifetime', async () => {
    expect((await service.admin('POST', `/users/${encodeURIComponent('user/1')}/rewards/grant`, { key: 'forever' })).status).to.equal(201);
    await revenuecat.waitFor((requests) => requests.length >= 1);
    expect(revenuecat.requests[0]!.path).to.equal('/v1/subscribers/user%2F1/entitlements/lifetime/promotional');
    expect(revenuecat.requests[0]!.json).to.deep.equal({ duration: 'lifetime' });
  });

  it('retries RevenueCat 5xx errors; records a permanent refusal (404) without blocking the next fulfilment, in /readyz and metrics', async () => {
    revenuecat.respond = (request, index) => {
      if (request.path.includes('/lifetime/')) return { status: 404, body: '{"code":7259,"message":"Entitlement not found"}' };
      return { status: index === 0 ? 503 : 201 };
    };
    expect((await service.admin('POST', `/users/${encodeURIComponent('user/1')}/rewards/grant`, { key: 'pro' })).status).to.equal(201);
    const first = (
      await eventually(
        () => deliveries(service),
        (rows) => rows[0]?.attempts >= 1,
      )
    )[0];
    expect(first).to.include({ status: 'failed', last_status_code: 503, event_type: 'entitlement.grant' });
    service.clock.advance(Date.parse(first.next_attempt_at) - service.clock.now().getTime());
    await eventually(
      () => deliveries(service),
      (rows) => rows[0]?.status === 'delivered',
    );

    expect((await service.admin('POST', `/users/${encodeURIComponent('user/1')}/rewards/grant`, { key: 'forever' })).status).to.equal(201);
    expect((await service.call('POST', '/users', { app_user_id: 'user/2' })).status).to.equal(201);
    expect(
      (await service.admin('POST', '/users/user%2F2/rewards/grant', { key: 'pro', deactivation: { variant: 'interval', duration: 1, period: 'days' } })).status,
    ).to.equal(201);
    const rows = await eventually(
      () => deliveries(service),
      (found) => found.length === 3 && found[2].status === 'delivered',
    );
    expect(rows[1]).to.include({ status: 'dead', attempts: 1, last_status_code: 404 });
    expect(rows[1].last_error).to.match(/Entitlement not found/);

    const ready = await service.call('GET', '/readyz');
    expect(ready.status).to.equal(200);
    expect(ready.body.data.webhooks.revenuecat.refused).to.equal(1);
    expect(ready.body.data.webhooks.revenuecat.recent_refusals[0]).to.include({ action: 'entitlement.grant', status_code: 404 });
    const metrics = await (await fetch(`${service.url}/metrics`)).text();
    expect(metrics).to.match(/webhook_deliveries_total\{endpoint="_revenuecat",outcome="refused"\} 1/);
    expect(metrics).to.match(/webhook_deliveries_total\{endpoint="_revenuecat",outcome="delivered"\} 2/);
    expect(metrics).to.match(/webhook_queue_depth/);
  });

  it('is off without REVENUECAT_SECRET_API_KEY', async () => {
    await service.stop();
    service = await startTestService({ env: { REVENUECAT_BASE_URL: revenuecat.url } });
    expect(
      (await service.admin('PUT', '/admin/rewards/pro', { kind: 'partner_entitlement', name: 'Pro', entitlement_id: 'premium', entitlement_key: 'pro' }))
        .status,
    ).to.equal(201);
    expect((await service.call('POST', '/users', { app_user_id: 'u' })).status).to.equal(201);
    expect((await service.admin('POST', '/users/u/rewards/grant', { key: 'pro' })).status).to.equal(201);
    expect((await service.call('GET', '/readyz')).body.data.webhooks.revenuecat).to.equal(null);
    expect(await deliveries(service)).to.deep.equal([]);
    expect(revenuecat.requests).to.have.length(0);
  });

  it('does not fulfil grants written before its first start (history is not sent by surprise)', async () => {
    await service.stop();
    const dataDir = tempDataDir();
    const backend = openEmbeddedBackend(dataDir);
    const log = new EventLog(backend.eventStore, new RandomIds());
    const context = { correlation_id: 'seed', causation_id: 'seed', actor: 'process:test' };
    const at = new Date().toISOString();
    await log.append(
      'reward-pro',
      [
        {
          type: 'RewardCreated',
          data: {
            reward: {
              key: 'pro',
              kind: 'partner_entitlement',
              name: 'Pro',
              description: null,
              metadata: null,
              entitlement_id: 'premium',
              entitlement_key: 'pro',
              created_at: at,
              updated_at: null,
            },
          },
        },
      ],
      'no_stream',
      context,
    );
    await log.append(
      'user-old',
      [
        {
          type: 'UserRegistered',
          data: { app_user_id: 'old', registered_at: at, is_trial: null, is_premium: null, first_seen_at: null, metadata: null, payment_customer_id: null },
        },
        {
          type: 'RewardGranted',
          data: {
            grant_id: 'g-old',
            entry_id: 'g-old',
            reward_key: 'pro',
            kind: 'partner_entitlement',
            credits: null,
            granted_at: at,
            expires_at: null,
            cause: { type: 'manual', operation_id: null },
            balance_after: null,
            clawback: 'none',
          },
        },
      ],
      'no_stream',
      context,
    );
    await backend.close();
    service = await startTestService({ dataDir, env: { REVENUECAT_SECRET_API_KEY: API_KEY, REVENUECAT_BASE_URL: revenuecat.url } });
    const plus = { kind: 'partner_entitlement', name: 'Plus', entitlement_id: 'plus', entitlement_key: 'plus' };
    expect((await service.admin('PUT', '/admin/rewards/plus', plus)).status).to.equal(201);
    const grant = { key: 'plus', deactivation: { variant: 'interval', duration: 7, period: 'days' } };
    expect((await service.admin('POST', '/users/old/rewards/grant', grant)).status).to.equal(201);
    await revenuecat.waitFor((requests) => requests.length >= 1);
    const rows = await eventually(
      () => deliveries(service),
      (found) => found.length === 1 && found[0].status === 'delivered',
    );
    expect(rows).to.have.length(1);
    expect(revenuecat.requests).to.have.length(1);
    expect(revenuecat.requests[0]!.path).to.equal('/v1/subscribers/old/entitlements/plus/promotional');
  });
});
