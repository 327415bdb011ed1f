/**
 * Child process of scripts/bench/webhooks.ts: one local webhook receiver per secret given as
 * arguments, answering 204 and checking the Standard Webhooks signature of every 100th message.
 * Reports its URLs, then its counts when asked (IPC), so the load generator's process does
 * not also carry the receivers.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

interface Counts {
  received: number;
  verified: number;
  firstAt: number;
  lastAt: number;
}

const secrets = process.argv.slice(2);
const counts: Counts[] = [];
const urls: string[] = [];
for (const secret of secrets) {
  const webhook = new Webhook(secret);
  const state: Counts = { received: 0, verified: 0, firstAt: 0, lastAt: 0 };
  counts.push(state);
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      state.received += 1;
      state.firstAt ||= Date.now();
      state.lastAt = Date.now();
      if (state.received % 100 === 1) {
        webhook.verify(body, req.headers as Record<string, string>);
        state.verified += 1;
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  urls.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`);
}
process.send!({ urls });
process.on('message', () => process.send!({ counts }));
process.on('disconnect', () => process.exit(0));
