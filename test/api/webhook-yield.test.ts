import http from 'node:http';
import { expect } from 'chai';
import { CLIENT_KEY, startTestService, type TestService } from '../support/test-service.js';
import { Receiver, verifyWebhook } from '../support/webhook-receiver.js';

const LOCAL = { WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' };

/**
 * A request the service is still answering: its headers are sent, its body is not finished, so
 * it stays in flight until `finish()` sends the rest.
 */
function requestInFlight(service: TestService): { finish(): Promise<number> } {
  const body = JSON.stringify({ app_user_id: 'slow-writer' });
  const request = http.request(`${service.url}/users`, {
    method: 'POST',
    headers: { 'x-api-key': CLIENT_KEY, 'content-type': 'application/json', 'content-length': String(body.length) },
  });
  const answered = new Promise<number>((resolve, reject) => {
    request.on('response', (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', reject);
  });
  request.write(body.slice(0, 5));
  return {
    finish: () => {
      request.end(body.slice(5));
      return answered;
    },
  };
}

/** Lets the engine run for a while: it looks for due messages every 100 ms and at once when woken. */
const aWhile = () => new Promise((resolve) => setTimeout(resolve, 400));

describe('API: webhook deliveries yield to requests being answered (WEBHOOK_YIELD_MAX_S)', () => {
  let service: TestService;
  let receiver: Receiver;
  let secret: string;
  let busy: { finish(): Promise<number> } | null = null;

  async function start(env: Record<string, string> = {}) {
    service = await startTestService({ env: { ...LOCAL, ...env } });
    receiver = await new Receiver().start();
    const created = await service.admin('PUT', '/admin/webhooks/app', { url: receiver.url, events: ['user.created'] });
    expect(created.status).to.equal(201);
    secret = created.body.data.webhook.secret;
  }
  afterEach(async () => {
    await busy?.finish();
    busy = null;
    await service.stop();
    await receiver.stop();
  });

  it('holds a message while a request is in flight, and delivers it once the requests pause', async () => {
    await start();
    busy = requestInFlight(service);
    expect((await service.call('POST', '/users', { app_user_id: 'alice' })).status).to.equal(201);
    await aWhile();
    expect(receiver.requests, 'nothing delivered while a request is in flight').to.have.length(0);
    expect(await busy.finish()).to.equal(201);
    busy = null;
    await receiver.waitFor((requests) => requests.length >= 2, 5_000, 'both user.created messages');
    expect(receiver.requests.map((request) => verifyWebhook(secret, request).data.app_user_id)).to.deep.equal(['alice', 'slow-writer']);
  });

  it('under requests that never pause, a message waits at most WEBHOOK_YIELD_MAX_S after it was enqueued', async () => {
    await start({ WEBHOOK_YIELD_MAX_S: '30' });
    busy = requestInFlight(service);
    expect((await service.call('POST', '/users', { app_user_id: 'bob' })).status).to.equal(201);
    service.clock.advance(29_000);
    await aWhile();
    expect(receiver.requests, 'still within the 30 s').to.have.length(0);
    service.clock.advance(2_000);
    await receiver.waitFor((requests) => requests.length >= 1, 5_000, 'the message past its 30 s');
    expect(verifyWebhook(secret, receiver.requests[0]!).data.app_user_id).to.equal('bob');
  });

  it('a message held while requests are answered is not sent once its endpoint was deleted, nor to one created again under its id', async () => {
    await start();
    const successor = await new Receiver().start();
    try {
      busy = requestInFlight(service);
      expect((await service.call('POST', '/users', { app_user_id: 'dave' })).status).to.equal(201);
      await aWhile();
      expect((await service.admin('DELETE', '/admin/webhooks/app')).status).to.equal(204);
      expect((await service.admin('PUT', '/admin/webhooks/app', { url: successor.url, events: ['user.created'] })).status).to.equal(201);
      expect(await busy.finish()).to.equal(201);
      busy = null;
      // slow-writer's user.created came after the new endpoint: it is the first message the successor gets.
      await successor.waitFor((requests) => requests.length >= 1, 5_000, "the successor endpoint's first message");
      await aWhile();
      expect(successor.requests.map((request) => request.json.data.app_user_id)).to.deep.equal(['slow-writer']);
      expect(receiver.requests).to.have.length(0);
    } finally {
      await successor.stop();
    }
  });

  it('WEBHOOK_YIELD_MAX_S=0: deliveries never wait for requests', async () => {
    await start({ WEBHOOK_YIELD_MAX_S: '0' });
    busy = requestInFlight(service);
    expect((await service.call('POST', '/users', { app_user_id: 'carol' })).status).to.equal(201);
    await receiver.waitFor((requests) => requests.length >= 1, 5_000, 'the message, at once');
  });
});
