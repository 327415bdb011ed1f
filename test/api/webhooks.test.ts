import { expect } from 'chai';
import { v5 as uuidv5 } from 'uuid';
import type { Backend } from '../../src/backends/backend.js';
import { MESSAGE_TYPES } from '../../src/domain/webhooks/message-catalogue.js';
import { StoreUnavailableError } from '../../src/ports/event-store.js';
import type { WebhookOutbox } from '../../src/ports/webhook-outbox.js';
import { never, putProgram, putReward } from '../support/fixtures.js';
import { ManualClock, startTestService, type TestService, tempDataDir } from '../support/test-service.js';
import { eventually, Receiver, verifyWebhook } from '../support/webhook-receiver.js';

const LOCAL = { WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' };

async function createEndpoint(service: TestService, id: string, url: string, extra: Record<string, unknown> = {}): Promise<string> {
  const response = await service.admin('PUT', `/admin/webhooks/${id}`, { url, ...extra });
  expect(response.status, JSON.stringify(response.body)).to.equal(201);
  return response.body.data.webhook.secret as string;
}

async function createUsers(service: TestService, ids: string[]): Promise<void> {
  for (const id of ids) expect((await service.call('POST', '/users', { app_user_id: id })).status).to.equal(201);
}

describe('API: outgoing webhook endpoints (SPEC §12)', function () {
  let service: TestService;
  let receiver: Receiver;

  beforeEach(async () => {
    service = await startTestService({ env: LOCAL });
    receiver = await new Receiver().start();
  });
  afterEach(async () => {
    await service.stop();
    await receiver.stop();
  });

  it('creates an endpoint with a secret shown once, updates, lists, gets and deletes it — each change an event', async () => {
    const created = await service.admin('PUT', '/admin/webhooks/backend', { url: receiver.url, description: 'our backend', events: ['reward.granted'] });
    expect(created.status).to.equal(201);
    const webhook = created.body.data.webhook;
    expect(webhook).to.include({ id: 'backend', url: receiver.url, description: 'our backend', enabled: true, updated_at: null });
    expect(webhook.events).to.deep.equal(['reward.granted']);
    expect(webhook.secret).to.match(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(webhook.secret.slice('whsec_'.length), 'base64')).to.have.length(32);

    const got = await service.admin('GET', '/admin/webhooks/backend');
    expect(got.status).to.equal(200);
    expect(got.body.data.webhook).to.not.have.property('secret');
    expect(got.body.data.webhook).to.not.have.property('secrets');

    // A type listed twice counts once, also in a list longer than the catalogue.
    const twice = await service.admin('PUT', '/admin/webhooks/backend', { url: receiver.url, events: ['reward.granted', 'reward.granted'] });
    expect(twice.status).to.equal(200);
    expect(twice.body.data.webhook.events).to.deep.equal(['reward.granted']);
    const every = [...MESSAGE_TYPES];
    const longer = await service.admin('PUT', '/admin/webhooks/longer', { url: receiver.url, events: [...every, 'user.created', 'reward.granted'] });
    expect(longer.status, JSON.stringify(longer.body)).to.equal(201);
    expect(longer.body.data.webhook.events).to.have.members(every);
    expect(longer.body.data.webhook.events).to.have.length(every.length);
    expect((await service.admin('DELETE', '/admin/webhooks/longer')).status).to.equal(204);
    // Left out of an update, events and description keep their values (documented in the README and the OpenAPI document).
    const updated = await service.admin('PUT', '/admin/webhooks/backend', { url: receiver.url, enabled: false });
    expect(updated.status).to.equal(200);
    expect(updated.body.data.webhook).to.include({ enabled: false, description: 'our backend' });
    expect(updated.body.data.webhook.events).to.deep.equal(['reward.granted']);
    expect(updated.body.data.webhook).to.not.have.property('secret');
    expect(updated.body.data.webhook.updated_at).to.be.a('string');

    const list = await service.admin('GET', '/admin/webhooks');
    expect(list.body.data.webhooks.map((item: { id: string }) => item.id)).to.deep.equal(['backend']);

    expect((await service.admin('DELETE', '/admin/webhooks/backend')).status).to.equal(204);
    const gone = await service.admin('GET', '/admin/webhooks/backend');
    expect(gone.status).to.equal(404);
    expect(gone.body.errors[0].code).to.equal('NOT_FOUND.WEBHOOK');
    expect((await service.admin('DELETE', '/admin/webhooks/backend')).status).to.equal(404);

    const history = await service.admin('GET', '/admin/events?stream=webhook-backend');
    expect(history.body.data.events.map((event: { type: string }) => event.type)).to.deep.equal([
      'WebhookEndpointCreated',
      'WebhookEndpointUpdated',
      'WebhookEndpointDeleted',
    ]);
    // Shown only in the answer that made it (SPEC §12): the log as the API reads it redacts it (security probe).
    expect(history.body.data.events[0].data.secret).to.deep.equal({ redacted: true });
    expect(JSON.stringify(history.body)).to.not.contain(webhook.secret);
  });

  it('answers bad input with 400 and unknown endpoints with 404', async () => {
    expect((await service.admin('PUT', '/admin/webhooks/x', { url: 'not a url' })).body.errors[0]).to.include({
      status: 400,
      code: 'BAD_REQUEST',
      source: '/url',
    });
    expect((await service.admin('PUT', '/admin/webhooks/x', { url: receiver.url, events: ['user.deleted'] })).body.errors[0]).to.include({
      status: 400,
      source: '/events/0',
    });
    expect((await service.admin('PUT', '/admin/webhooks/_x', { url: receiver.url })).body.errors[0]).to.include({ status: 400, source: 'path:/id' });
    // `inbound` names the inbound notifications' list, as the id's description says: no endpoint can take it.
    expect((await service.admin('PUT', '/admin/webhooks/inbound', { url: receiver.url })).status).to.equal(405);
    expect((await service.admin('DELETE', '/admin/webhooks/inbound')).body.errors[0]).to.include({ status: 405, code: 'METHOD_NOT_ALLOWED' });
    const webhookPath = (await service.call('GET', '/openapi.json')).body.paths['/admin/webhooks/{id}'];
    const idDoc = webhookPath.put.parameters[0];
    expect(idDoc.schema.description ?? idDoc.description).to.contain('Not `inbound`');
    // The document lists that 405 for the id the pattern allows but the inbound list takes.
    expect(Object.keys(webhookPath.put.responses)).to.include('405');
    expect(Object.keys(webhookPath.delete.responses)).to.include('405');
    // The secret is stated where it is always sent (creation, rotation), and nowhere else.
    const { schemas } = (await service.call('GET', '/openapi.json')).body.components;
    expect(schemas.WebhookWithSecret.required).to.include('secret');
    expect(schemas.Webhook.properties).to.not.have.property('secret');
    expect((await service.admin('POST', '/admin/webhooks/none/rotate-secret', {})).status).to.equal(404);
    expect((await service.admin('POST', '/admin/webhooks/none/ping')).status).to.equal(404);
    expect((await service.admin('GET', '/admin/webhooks/none/deliveries')).status).to.equal(404);
    await createEndpoint(service, 'x', receiver.url);
    expect((await service.admin('POST', '/admin/webhooks/x/rotate-secret', { overlap_seconds: 604_801 })).body.errors[0]).to.include({
      status: 400,
      source: '/overlap_seconds',
    });
    expect((await service.admin('POST', '/admin/webhooks/x/replay', {})).body.errors[0]).to.include({ status: 400, source: '/after_position' });
    expect((await service.admin('POST', '/admin/webhooks/x/replay', { after_position: 4 })).body.errors[0]).to.include({
      status: 400,
      source: '/after_position',
    });
    expect((await service.admin('POST', '/admin/webhooks/x/replay', { since: 'yesterday' })).body.errors[0]).to.include({ status: 400, source: '/since' });
    // A field sent with the wrong type is the one named, not the other member's missing field.
    for (const since of [5, 1e-7, true, null]) {
      expect((await service.admin('POST', '/admin/webhooks/x/replay', { since })).body.errors[0], String(since)).to.include({ status: 400, source: '/since' });
    }
    expect((await service.admin('GET', '/admin/webhooks/x/deliveries?limit=0')).body.errors[0]).to.include({ status: 400, source: 'query:/limit' });
    const unknown = await service.admin('POST', `/admin/webhooks/x/deliveries/${uuidv5('a', uuidv5.URL)}/redeliver`);
    expect(unknown.status).to.equal(404);
    expect(unknown.body.errors[0].code).to.equal('NOT_FOUND.DELIVERY');
    // The document says `format: uuid`, which is the 8-4-4-4-12 hex syntax: one whose version and
    // variant bits no RFC names is a well-formed id that names no delivery (404), not a bad request.
    const anyVariant = await service.admin('POST', '/admin/webhooks/x/deliveries/e3e70682-c209-4cac-629f-6fbed82c07cd/redeliver');
    expect(anyVariant.status).to.equal(404);
    expect(anyVariant.body.errors[0].code).to.equal('NOT_FOUND.DELIVERY');
    const malformed = await service.admin('POST', '/admin/webhooks/x/deliveries/e3e70682-c209-4cac-629f-6fbed82c07c/redeliver');
    expect(malformed.body.errors[0]).to.include({ status: 400, code: 'BAD_REQUEST', source: 'path:/message_id' });
    const noWebhook = await service.admin('POST', `/admin/webhooks/never-made/deliveries/${uuidv5('a', uuidv5.URL)}/redeliver`);
    expect(noWebhook.status).to.equal(404);
    expect(noWebhook.body.errors[0].code).to.equal('NOT_FOUND.WEBHOOK');
    expect((await service.call('GET', '/admin/webhooks')).status).to.equal(403);
  });

  it('delivers catalogue messages signed per Standard Webhooks, with a stable webhook-id, honouring the event filter', async () => {
    const secret = await createEndpoint(service, 'all', receiver.url);
    const filtered = await new Receiver().start();
    try {
      await createEndpoint(service, 'grants', filtered.url, { events: ['reward.granted'] });
      expect((await service.admin('PUT', '/admin/rewards/gift', { kind: 'basic', name: 'Gift' })).status).to.equal(201);
      await createUsers(service, ['alice', 'bob']);
      expect((await service.admin('POST', '/users/alice/rewards/grant', { key: 'gift' })).status).to.equal(201);
      await receiver.waitFor((requests) => requests.length >= 2);
      const [first, second] = receiver.requests;
      for (const request of [first!, second!]) {
        expect(request.headers['content-type']).to.equal('application/json');
        const payload = verifyWebhook(secret, request);
        expect(payload.type).to.equal('user.created');
      }
      expect(first!.json.data).to.include({ app_user_id: 'alice' });
      expect(first!.json.data.event_id).to.be.a('string');
      expect(first!.json.data.position).to.match(/^\d+$/);
      expect(first!.json.timestamp).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(second!.json.data.app_user_id).to.equal('bob');
      expect(BigInt(second!.json.data.position) > BigInt(first!.json.data.position)).to.equal(true);

      const deliveries = await eventually(
        () => service.admin('GET', '/admin/webhooks/all/deliveries'),
        (response) => response.body.data.deliveries.length >= 2 && response.body.data.deliveries[1].status === 'delivered',
      );
      const row = deliveries.body.data.deliveries[0];
      expect(row).to.include({
        message_id: first!.headers['webhook-id'],
        event_type: 'user.created',
        status: 'delivered',
        attempts: 1,
        last_status_code: 200,
        next_attempt_at: null,
      });
      expect(row.position).to.equal(first!.json.data.position);
      expect(row.delivered_at).to.be.a('string');
      // Paged: a page that holds the last delivery says no other follows (no empty page to go to).
      const count = deliveries.body.data.deliveries.length;
      const whole = (await service.admin('GET', `/admin/webhooks/all/deliveries?limit=${count}`)).body.data;
      expect(whole.next_after).to.equal(null);
      const first1 = (await service.admin('GET', `/admin/webhooks/all/deliveries?limit=${count - 1}`)).body.data;
      expect(first1.deliveries).to.have.length(count - 1);
      const rest = (await service.admin('GET', `/admin/webhooks/all/deliveries?limit=${count - 1}&after=${first1.next_after}`)).body.data;
      expect(rest.deliveries.map((one: { message_id: string }) => one.message_id)).to.deep.equal([deliveries.body.data.deliveries[count - 1].message_id]);

      // The grant goes to both; user.created only to the unfiltered endpoint.
      await filtered.waitFor((requests) => requests.length >= 1);
      expect(filtered.requests[0]!.json.type).to.equal('reward.granted');
      expect(filtered.requests[0]!.json.data).to.include({ app_user_id: 'alice', reward_key: 'gift', kind: 'basic' });
      await receiver.waitFor((requests) => requests.some((request) => request.json.type === 'reward.granted'));
      expect(filtered.requests.every((request) => request.json.type === 'reward.granted')).to.equal(true);
      // The same event gives each endpoint its own webhook-id.
      const grantId = receiver.requests.find((request) => request.json.type === 'reward.granted')!.headers['webhook-id'];
      expect(filtered.requests[0]!.headers['webhook-id']).to.not.equal(grantId);
    } finally {
      await filtered.stop();
    }
  });

  it("tells a receiver of a user's erasure (user.erased), so it can erase the copies user.created gave it", async () => {
    const secret = await createEndpoint(service, 'privacy', receiver.url, { events: ['user.created', 'user.erased'] });
    await createUsers(service, ['leaving']);
    expect((await service.admin('DELETE', '/admin/users/leaving')).status).to.equal(204);
    await receiver.waitFor((requests) => requests.some((request) => request.json.type === 'user.erased'));
    const [created, erased] = receiver.requests.map((request) => verifyWebhook(secret, request));
    expect(created.type).to.equal('user.created');
    expect(erased.type).to.equal('user.erased');
    expect(erased.data).to.include({ app_user_id: 'leaving' });
    expect(erased.data.fields).to.be.an('array');
    expect(erased.data).to.have.all.keys('app_user_id', 'erased_at', 'fields', 'event_id', 'position');
  });

  it('pings an endpoint with a signed webhook.ping', async () => {
    const secret = await createEndpoint(service, 'p', receiver.url);
    const ping = await service.admin('POST', '/admin/webhooks/p/ping');
    expect(ping.status).to.equal(200);
    expect(ping.body.data.ping).to.include({ delivered: true, status_code: 200, error: null });
    expect(verifyWebhook(secret, receiver.requests[0]!).type).to.equal('webhook.ping');
  });

  it('signs with both secrets during a rotation overlap, then only with the new one', async () => {
    const oldSecret = await createEndpoint(service, 'r', receiver.url);
    const rotated = await service.admin('POST', '/admin/webhooks/r/rotate-secret', { overlap_seconds: 3600 });
    const [rotation] = (await service.admin('GET', '/admin/events?stream=webhook-r&type=WebhookSecretRotated')).body.data.events;
    expect(rotation.data.secret).to.deep.equal({ redacted: true });
    expect(rotated.status).to.equal(200);
    const newSecret = rotated.body.data.webhook.secret as string;
    // The answer shows the endpoint as rotated: updated_at moved.
    expect(rotated.body.data.webhook.updated_at).to.equal(service.clock.now().toISOString());
    expect(newSecret)
      .to.match(/^whsec_/)
      .and.not.equal(oldSecret);
    const shown = (await service.admin('GET', '/admin/webhooks/r')).body.data.webhook;
    expect(shown).to.not.have.property('secret');
    expect(shown.updated_at).to.equal(service.clock.now().toISOString());

    await createUsers(service, ['during']);
    await receiver.waitFor((requests) => requests.length >= 1);
    const during = receiver.requests[0]!;
    expect(String(during.headers['webhook-signature']).split(' ')).to.have.length(2);
    expect(verifyWebhook(oldSecret, during).data.app_user_id).to.equal('during');
    expect(verifyWebhook(newSecret, during).data.app_user_id).to.equal('during');

    service.clock.advance(3601_000);
    await createUsers(service, ['after']);
    await receiver.waitFor((requests) => requests.length >= 2);
    const after = receiver.requests[1]!;
    expect(String(after.headers['webhook-signature']).split(' ')).to.have.length(1);
    expect(verifyWebhook(newSecret, after).data.app_user_id).to.equal('after');
    expect(() => verifyWebhook(oldSecret, after)).to.throw(/No matching signature/);

    // The body is optional ({overlap_seconds?}): without one, or with an empty one, the overlap is a day.
    for (const body of [undefined, '']) {
      const bare = await service.admin('POST', '/admin/webhooks/r/rotate-secret', body);
      expect(bare.status, JSON.stringify(body)).to.equal(200);
      const history = (await service.admin('GET', '/admin/events?stream=webhook-r')).body.data.events;
      const rotation = history[history.length - 1];
      expect(Date.parse(rotation.data.previous_expires_at) - Date.parse(rotation.data.rotated_at)).to.equal(86_400_000);
    }
  });

  it('a rotation retires every secret but the one it replaces: two signatures at most, and one after an overlap of 0', async () => {
    const first = await createEndpoint(service, 'rr', receiver.url);
    const rotate = async (body: unknown) => (await service.admin('POST', '/admin/webhooks/rr/rotate-secret', body)).body.data.webhook.secret as string;
    const ping = async () => {
      const before = receiver.requests.length;
      expect((await service.admin('POST', '/admin/webhooks/rr/ping')).body.data.ping).to.include({ delivered: true });
      const request = receiver.requests[before]!;
      return { request, signatures: String(request.headers['webhook-signature']).split(' ') };
    };
    const second = await rotate({});
    const third = await rotate({ overlap_seconds: 100 });
    const overlapping = await ping();
    expect(overlapping.signatures).to.have.length(2);
    expect(verifyWebhook(third, overlapping.request).type).to.equal('webhook.ping');
    expect(verifyWebhook(second, overlapping.request).type).to.equal('webhook.ping');
    expect(() => verifyWebhook(first, overlapping.request)).to.throw(/No matching signature/);

    const fourth = await rotate({ overlap_seconds: 0 });
    const alone = await ping();
    expect(alone.signatures).to.have.length(1);
    expect(verifyWebhook(fourth, alone.request).type).to.equal('webhook.ping');
    for (const retired of [first, second, third]) expect(() => verifyWebhook(retired, alone.request)).to.throw(/No matching signature/);
  });

  it("a redeliver while an attempt is in flight sends the message again, whatever that attempt's outcome", async () => {
    const secret = await createEndpoint(service, 'slow', receiver.url);
    // The first attempt is answered only after the redeliver: its outcome must not overwrite it.
    receiver.respond = (_request, index) => (index === 0 ? { status: 204, delayMs: 600 } : { status: 204 });
    await createUsers(service, ['in-flight']);
    await receiver.waitFor((requests) => requests.length >= 1);
    const id = receiver.requests[0]!.headers['webhook-id'];
    // The test clock stands still unless moved: the redeliver comes a second after the message was due.
    service.clock.advance(1_000);
    const redelivered = await service.admin('POST', `/admin/webhooks/slow/deliveries/${id}/redeliver`);
    expect(redelivered.body.data.delivery).to.include({ status: 'pending', attempts: 0 });
    await receiver.waitFor((requests) => requests.length >= 2, 5_000, 'the redelivered message');
    expect(receiver.requests.map((request) => request.headers['webhook-id'])).to.deep.equal([id, id]);
    expect(verifyWebhook(secret, receiver.requests[1]!).data.app_user_id).to.equal('in-flight');
    const deliveries = await eventually(
      async () => (await service.admin('GET', '/admin/webhooks/slow/deliveries')).body.data.deliveries as any[],
      (rows) => rows[0]?.status === 'delivered',
    );
    expect(deliveries[0]).to.include({ message_id: id, status: 'delivered', attempts: 1 });
  });

  it('redelivers one message and replays from a log position with the same webhook-ids', async () => {
    const secret = await createEndpoint(service, 'rp', receiver.url);
    await createUsers(service, ['u1', 'u2', 'u3']);
    await receiver.waitFor((requests) => requests.length >= 3);
    const ids = receiver.requests.map((request) => request.headers['webhook-id']);
    const positions = receiver.requests.map((request) => request.json.data.position as string);

    const redelivered = await service.admin('POST', `/admin/webhooks/rp/deliveries/${ids[1]}/redeliver`);
    expect(redelivered.status).to.equal(200);
    expect(redelivered.body.data.delivery).to.include({ message_id: ids[1], status: 'pending', attempts: 0 });
    await receiver.waitFor((requests) => requests.length >= 4);
    expect(receiver.requests[3]!.headers['webhook-id']).to.equal(ids[1]);
    expect(verifyWebhook(secret, receiver.requests[3]!).data.app_user_id).to.equal('u2');

    const replay = await service.admin('POST', '/admin/webhooks/rp/replay', { after_position: positions[0] });
    expect(replay.status).to.equal(200);
    expect(replay.body.data).to.include({ requeued: 2, first_position: positions[1], last_position: positions[2] });
    await receiver.waitFor((requests) => requests.length >= 6);
    expect(receiver.requests.slice(4).map((request) => request.headers['webhook-id'])).to.deep.equal([ids[1], ids[2]]);

    const since = await service.admin('POST', '/admin/webhooks/rp/replay', { since: new Date(Date.now() - 60_000).toISOString() });
    expect(since.body.data.requeued).to.equal(3);
    await receiver.waitFor((requests) => requests.length >= 9);
    expect(receiver.requests.slice(6).map((request) => request.headers['webhook-id'])).to.deep.equal(ids);

    // Both bounds given: both apply (README, Webhooks). The position leaves only the third user;
    // a time after every event leaves none.
    const both = await service.admin('POST', '/admin/webhooks/rp/replay', { after_position: positions[1], since: new Date(Date.now() - 60_000).toISOString() });
    expect(both.body.data).to.include({ requeued: 1, first_position: positions[2], last_position: positions[2] });
    await receiver.waitFor((requests) => requests.length >= 10);
    expect(receiver.requests[9]!.headers['webhook-id']).to.equal(ids[2]);
    const later = await service.admin('POST', '/admin/webhooks/rp/replay', { after_position: '0', since: new Date(Date.now() + 60_000).toISOString() });
    expect(later.body.data).to.deep.equal({ requeued: 0, first_position: null, last_position: null });
  });
});

describe('API: a webhook replay `since` a time', function () {
  it('sends again the events recorded at that very time and after, not those before', async () => {
    const service = await startTestService({ env: LOCAL });
    const receiver = await new Receiver().start();
    try {
      await createEndpoint(service, 'edge', receiver.url);
      const users = ['first', 'second', 'third', 'fourth'];
      await createUsers(service, users);
      await receiver.waitFor((requests) => requests.length >= 4);
      const recorded = new Map<string, string>();
      for (const id of users) recorded.set(id, (await service.admin('GET', `/admin/events?stream=user-${id}`)).body.data.events[0].recorded_at);
      // `since` is the very time the third user was recorded at (the log's clock is the wall clock: others may share it).
      const since = recorded.get('third')!;
      const replayed = users.filter((id) => recorded.get(id)! >= since);
      expect(replayed).to.include.members(['third', 'fourth']);
      const replay = await service.admin('POST', '/admin/webhooks/edge/replay', { since });
      expect(replay.body.data.requeued).to.equal(replayed.length);
      await receiver.waitFor((requests) => requests.length >= 4 + replayed.length);
      expect(receiver.requests.slice(4).map((request) => request.json.data.app_user_id)).to.deep.equal(replayed);
    } finally {
      await service.stop();
      await receiver.stop();
    }
  });
});

describe('API: outgoing webhook retention (WEBHOOK_RETENTION_DAYS)', function () {
  it('forgets messages delivered longer ago than the retention, keeps the recent ones, and a replay sends the old ones again', async () => {
    const clock = new ManualClock(new Date('2026-01-01T00:00:00.000Z'));
    const service = await startTestService({ clock, env: { ...LOCAL, SWEEP_INTERVAL_S: '1', WEBHOOK_RETENTION_DAYS: '30' } });
    const receiver = await new Receiver().start();
    try {
      await createEndpoint(service, 'kept', receiver.url);
      await createUsers(service, ['old-1', 'old-2']);
      await receiver.waitFor((requests) => requests.length >= 2);
      const [oldId] = receiver.requests.map((request) => request.headers['webhook-id']);
      const statuses = async () =>
        ((await service.admin('GET', '/admin/webhooks/kept/deliveries')).body.data.deliveries as { status: string }[]).map((d) => d.status);
      // Recorded as delivered (the receiver sees a message before the service records its answer) before the clock moves.
      await eventually(statuses, (all) => all.length === 2 && all.every((status) => status === 'delivered'));
      clock.advance(31 * 86_400_000);
      await createUsers(service, ['new-1']);
      await receiver.waitFor((requests) => requests.length >= 3);
      const listed = async (query = '') =>
        ((await service.admin('GET', `/admin/webhooks/kept/deliveries${query}`)).body.data.deliveries as { status: string; message_id: string }[]).map(
          (delivery) => delivery.message_id,
        );
      const newId = receiver.requests[2]!.headers['webhook-id'];
      expect(await eventually(listed, (ids) => ids.length === 1)).to.deep.equal([newId]);
      expect(await listed('?status=delivered')).to.have.length(1);
      expect((await service.admin('POST', `/admin/webhooks/kept/deliveries/${oldId}/redeliver`)).status).to.equal(404);
      const replay = await service.admin('POST', '/admin/webhooks/kept/replay', { since: '2025-12-31T00:00:00.000Z' });
      expect(replay.body.data.requeued).to.equal(3);
      await receiver.waitFor((requests) => requests.length >= 6);
      expect(receiver.requests.slice(3).map((request) => request.headers['webhook-id'])).to.include(oldId);
    } finally {
      await service.stop();
      await receiver.stop();
    }
  });
});

/**
 * A backend whose outbox feed can be held back (as when it runs behind the log): after `hold()`,
 * feeds wait until `letGo()`. `replace` swaps other outbox methods (given the real outbox).
 */
function heldFeed(replace: (outbox: WebhookOutbox) => Partial<WebhookOutbox> = () => ({})) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let holding = false;
  const backend = (inner: Backend): Backend => {
    const outbox = inner.webhookOutbox;
    const methods: Record<string, unknown> = {
      feed: (async (...args) => {
        if (holding) await released;
        return outbox.feed(...args);
      }) satisfies WebhookOutbox['feed'],
      ...replace(outbox),
    };
    return { ...inner, webhookOutbox: new Proxy(outbox, { get: (target, property) => methods[String(property)] ?? Reflect.get(target, property) }) };
  };
  return {
    backend,
    hold: () => {
      holding = true;
    },
    letGo: () => {
      holding = false;
      release();
    },
  };
}

describe('API: an endpoint deleted and created again under its id (SPEC §12)', () => {
  it('gets exactly the events after its new creation, never a message queued for its predecessor, however far behind the feed is', async () => {
    const feed = heldFeed();
    feed.hold();
    const service = await startTestService({ backend: feed.backend, env: LOCAL });
    const first = await new Receiver().start();
    const second = await new Receiver().start();
    try {
      await putReward(service, 'gift', { kind: 'basic', name: 'Gift' });
      await putProgram(service, 'friends', {
        rewards: { sender: [], receiver: [{ reward_key: 'gift', activation: { variant: 'claim' }, deactivation: never }] },
      });
      await createEndpoint(service, 'reused', first.url, { events: ['user.created'] });
      await createUsers(service, ['before-delete']);
      expect((await service.admin('DELETE', '/admin/webhooks/reused')).status).to.equal(204);
      const referrer = (await service.call('POST', '/users', { app_user_id: 'referrer' })).body.data.user;
      await createEndpoint(service, 'reused', second.url, { events: ['code.claimed'] });
      feed.letGo();
      await createUsers(service, ['claimer']);
      expect((await service.call('POST', '/users/claimer/claim-code', { code: referrer.referral_code })).status).to.equal(200);
      await second.waitFor((requests) => requests.length >= 1);
      await new Promise((resolve) => setTimeout(resolve, 300));
      // In log order, a message for before-delete would have gone first: the lane sends its messages one by one.
      expect(second.requests.map((request) => [request.json.type, request.json.data.app_user_id])).to.deep.equal([['code.claimed', 'claimer']]);
      // The first endpoint's message was fed only after its deletion: its lane had nothing to send.
      expect(first.requests).to.have.length(0);
    } finally {
      await service.stop();
      await first.stop();
      await second.stop();
    }
  });
});

describe('API: a replay asked for right after an endpoint is created, while the feed is behind', function () {
  this.timeout(60_000);
  it('is refused (503, Retry-After, nothing queued) until the feed has passed the creation; then it sends the history', async () => {
    const feed = heldFeed();
    const service = await startTestService({ backend: feed.backend, env: LOCAL });
    const receiver = await new Receiver().start();
    try {
      await createUsers(service, ['history-1', 'history-2']);
      feed.hold();
      await createEndpoint(service, 'late', receiver.url, { events: ['user.created'] });
      const refused = await service.admin('POST', '/admin/webhooks/late/replay', { after_position: '0' });
      expect(refused.status).to.equal(503);
      expect(refused.headers.get('retry-after')).to.equal('5');
      expect(refused.body.errors[0].message).to.contain("has not reached this endpoint's creation");
      feed.letGo();
      const replayed = await eventually(
        () => service.admin('POST', '/admin/webhooks/late/replay', { after_position: '0' }),
        (answer) => answer.status === 200,
      );
      expect(replayed.body.data.requeued).to.equal(2);
      await receiver.waitFor((requests) => requests.length >= 2, 10_000, 'the replayed history');
      expect(receiver.requests.map((request) => request.json.data.app_user_id)).to.deep.equal(['history-1', 'history-2']);
    } finally {
      await service.stop();
      await receiver.stop();
    }
  });
});

describe("API: an endpoint created again while its predecessor's messages span feed pages and a removal fails", function () {
  this.timeout(120_000);
  it('the successor gets none of them', async () => {
    let failedRemovals = 0;
    let fed = false;
    // The first removals the feed makes fail (a store hiccup), after the messages before them were fed.
    const feed = heldFeed((outbox) => ({
      removeEndpoint: async (id) => {
        if (fed && failedRemovals < 3) {
          failedRemovals += 1;
          throw new StoreUnavailableError('injected: removal failed');
        }
        return outbox.removeEndpoint(id);
      },
    }));
    feed.hold();
    const service = await startTestService({ backend: feed.backend, env: LOCAL });
    const first = await new Receiver().start();
    const second = await new Receiver().start();
    try {
      await createEndpoint(service, 'reused', first.url, { events: ['user.created'] });
      // More than one feed page (500 events) of the predecessor's messages.
      await createUsers(
        service,
        Array.from({ length: 520 }, (_, index) => `early-${index}`),
      );
      expect((await service.admin('DELETE', '/admin/webhooks/reused')).status).to.equal(204);
      await createEndpoint(service, 'reused', second.url, { events: ['user.created'] });
      fed = true;
      feed.letGo();
      await createUsers(service, ['after']);
      await second.waitFor((requests) => requests.some((request) => request.json.data.app_user_id === 'after'), 20_000, "the successor's own message");
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(failedRemovals).to.equal(3);
      expect(second.requests.map((request) => request.json.data.app_user_id)).to.deep.equal(['after']);
    } finally {
      await service.stop();
      await first.stop();
      await second.stop();
    }
  });
});

describe('API: webhook URL rules (SPEC §12)', function () {
  let service: TestService;
  before(async () => {
    service = await startTestService();
  });
  after(async () => service.stop());

  for (const [url, why] of [
    ['http://example.com/hook', 'http without WEBHOOKS_ALLOW_HTTP'],
    ['https://127.0.0.1/hook', 'loopback'],
    ['https://10.1.2.3/hook', 'private'],
    ['https://169.254.169.254/latest', 'link-local (cloud metadata)'],
    ['https://0.0.0.0/hook', 'unspecified'],
    ['https://[::1]/hook', 'IPv6 loopback'],
    ['https://[::ffff:192.168.0.1]/hook', 'IPv4-mapped private'],
    ['https://localhost/hook', 'a name that resolves to loopback'],
    ['ftp://example.com/hook', 'not http(s)'],
  ]) {
    it(`refuses ${why} with 422 WEBHOOK.URL_NOT_ALLOWED`, async () => {
      const response = await service.admin('PUT', '/admin/webhooks/x', { url });
      expect(response.status, JSON.stringify(response.body)).to.equal(422);
      expect(response.body.errors[0]).to.include({ code: 'WEBHOOK.URL_NOT_ALLOWED', source: '/url' });
    });
  }

  it('a ping to a stored URL the settings no longer allow is 422 WEBHOOK.URL_NOT_ALLOWED pointing at nothing sent (source null)', async () => {
    const dataDir = tempDataDir();
    const permissive = await startTestService({ dataDir, env: LOCAL });
    await createEndpoint(permissive, 'local', 'http://127.0.0.1:9/hook');
    await permissive.stop();
    const strict = await startTestService({ dataDir });
    try {
      const response = await strict.admin('POST', '/admin/webhooks/local/ping');
      expect(response.status, JSON.stringify(response.body)).to.equal(422);
      expect(response.body.errors[0]).to.include({ code: 'WEBHOOK.URL_NOT_ALLOWED', source: null });
    } finally {
      await strict.stop();
    }
  });
});
