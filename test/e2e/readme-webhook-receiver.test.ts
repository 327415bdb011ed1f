import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { eventually } from '../support/fixtures.js';
import { codeBlocks, readmeSection, runVerbatim, shellBlocks } from '../support/readme.js';
import { SECRET_KEY, startTestService, tempDataDir } from '../support/test-service.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** A port free on 127.0.0.1 now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/**
 * README "Receive and verify": its sample receiver, as printed, run with tsx in a folder of its
 * own, receives the service's signed ping and refuses a message signed with another secret.
 */
describe("E2E: the README's sample webhook receiver, verbatim", function () {
  this.timeout(60_000);

  it('acknowledges the real ping with 204 and refuses a forged message with 400', async () => {
    const [source] = codeBlocks(readmeSection('### Receive and verify'), 'ts');
    expect(source).to.contain("app.post('/hooks/referrals'");
    const folder = tempDataDir();
    fs.writeFileSync(path.join(folder, 'receiver.ts'), source!);
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(folder, 'node_modules'));
    // Step 2 of "On one machine": the endpoint, created with the README's command (its receiver's port moved to a free one).
    const [create, pingCommand] = shellBlocks(readmeSection('### Receive and verify'));
    expect(create).to.contain('http://127.0.0.1:3000/hooks/referrals');
    const svc = await startTestService({ env: { WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true', SECRET_API_KEYS: `sk_demo,${SECRET_KEY}` } });
    let receiver: ChildProcess | null = null;
    try {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}/hooks/referrals`;
      const created = JSON.parse((await runVerbatim(create!.replace(':3000/', `:${port}/`), svc.url)).stdout);
      expect(created.data.webhook, JSON.stringify(created)).to.include({ id: 'backend', url });
      const secret = created.data.webhook.secret as string;
      receiver = spawn(process.execPath, ['--import', 'tsx', 'receiver.ts'], {
        cwd: folder,
        env: { ...process.env, REFERRALS_WEBHOOK_SECRET: secret, PORT: String(port) },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      const forged = new Webhook(`whsec_${Buffer.from('not the endpoint secret, 32 bytes').toString('base64')}`);
      const body = JSON.stringify({ type: 'reward.granted', timestamp: new Date().toISOString(), data: {} });
      const forgedAnswer = await eventually(async () => {
        const id = 'msg_forged';
        const headers = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'content-type': 'application/json' };
        const signature = forged.sign(id, new Date(Number(headers['webhook-timestamp']) * 1000), body);
        return fetch(url, { method: 'POST', headers: { ...headers, 'webhook-signature': signature }, body });
      });
      expect(forgedAnswer.status).to.equal(400);

      // The README's ping, verbatim.
      expect(pingCommand).to.contain('/admin/webhooks/backend/ping');
      const ping = JSON.parse((await runVerbatim(pingCommand!, svc.url)).stdout);
      expect(ping.data.ping, JSON.stringify(ping)).to.deep.include({ delivered: true, status_code: 204 });
    } finally {
      receiver?.kill('SIGKILL');
      await svc.stop();
    }
  });
});
