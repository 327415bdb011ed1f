import { expect } from 'chai';
import { post, put, startChildService } from '../support/child-service.js';
import { tempDataDir } from '../support/test-service.js';
import { Receiver, verifyWebhook } from '../support/webhook-receiver.js';

const ENV = { WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' };
const USERS = 60;

describe('E2E: SIGKILL of the service in the middle of webhook deliveries', function () {
  this.timeout(120_000);

  it('after a restart every event is delivered at least once, with the same webhook-id, in log order', async () => {
    const dataDir = tempDataDir();
    const receiver = await new Receiver().start();
    // Slow enough that the kill lands while deliveries are still going on.
    receiver.respond = () => ({ status: 200, delayMs: 20 });
    const first = await startChildService(dataDir, ENV);
    let secret: string;
    try {
      const created = await put(first.url, '/admin/webhooks/backend', { url: receiver.url, events: ['user.created'] });
      expect(created.status).to.equal(201);
      secret = created.body.data.webhook.secret;
      for (let index = 0; index < USERS; index += 1) {
        expect((await post(first.url, '/users', { app_user_id: `u${String(index).padStart(3, '0')}` })).status).to.equal(201);
      }
      await receiver.waitFor((requests) => requests.length >= 10, 20_000);
    } finally {
      await first.kill();
    }
    const beforeRestart = receiver.requests.length;
    expect(beforeRestart).to.be.lessThan(USERS);

    const second = await startChildService(dataDir, ENV);
    try {
      await receiver.waitFor((requests) => new Set(requests.map((request) => request.json.data.app_user_id)).size >= USERS, 30_000, 'every user.created');
    } finally {
      await second.stop();
      await receiver.stop();
    }
    const expected = Array.from({ length: USERS }, (_, index) => `u${String(index).padStart(3, '0')}`);
    const idOf = new Map<string, string>();
    const firstSeen: string[] = [];
    let previousPosition = -1n;
    for (const request of receiver.requests) {
      const payload = verifyWebhook(secret, request);
      const user = payload.data.app_user_id as string;
      const id = String(request.headers['webhook-id']);
      // Redelivered after the restart: the same webhook-id as before the kill.
      if (idOf.has(user)) expect(idOf.get(user)).to.equal(id);
      idOf.set(user, id);
      if (!firstSeen.includes(user)) {
        firstSeen.push(user);
        const position = BigInt(payload.data.position);
        expect(position > previousPosition, 'first deliveries in log order').to.equal(true);
        previousPosition = position;
      }
    }
    expect(firstSeen).to.deep.equal(expected);
  });
});
