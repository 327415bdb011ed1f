import { expect } from 'chai';
import { get, post, put, SECRET_KEY, startChildService } from '../support/child-service.js';
import { tempDataDir } from '../support/test-service.js';
import { eventually, Receiver } from '../support/webhook-receiver.js';

const ENV = { WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' };

describe('E2E: a receiver that answers an error with the message it was sent', function () {
  this.timeout(60_000);

  it("the service's log names the status only; what the receiver answered stays in the delivery's last_error", async () => {
    const receiver = await new Receiver().start();
    // A receiver echoing what it could not handle, personal data included (an operator probe saw it copied into the log).
    receiver.respond = (request) => ({ status: 500, body: `cannot handle ${request.body}` });
    const service = await startChildService(tempDataDir(), ENV);
    try {
      expect((await put(service.url, '/admin/webhooks/backend', { url: receiver.url, events: ['user.created'] })).status).to.equal(201);
      expect((await post(service.url, '/users', { app_user_id: 'echoed', metadata: { email: 'echoed@example.org' } })).status).to.equal(201);
      const logged = await eventually(
        async () => service.logs(),
        (logs) => logs.includes('webhook delivery failed'),
      );
      const line = logged.split('\n').find((entry) => entry.includes('webhook delivery failed'))!;
      expect(JSON.parse(line)).to.deep.include({ status: 500 });
      expect(logged).to.not.contain('echoed@example.org').and.not.contain('cannot handle');
      const deliveries = (await get(service.url, '/admin/webhooks/backend/deliveries', SECRET_KEY)).body.data.deliveries;
      expect(deliveries[0].last_error).to.match(/^HTTP 500: cannot handle /);
    } finally {
      await service.stop();
      await receiver.stop();
    }
  });
});
