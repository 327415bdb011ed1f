import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { postWithTimeout } from '../../../src/application/webhooks/http-post.js';

describe('postWithTimeout', () => {
  it('endpoints on one host do not wait for each other: twelve hanging requests leave a thirteenth its own connection', async () => {
    const hanging: http.ServerResponse[] = [];
    const server = http.createServer((request, response) => {
      if (request.url === '/fast') response.writeHead(204).end();
      else hanging.push(response);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const slow = Array.from({ length: 12 }, (_, index) => postWithTimeout(`${base}/slow-${index}`, {}, '{}', 5_000));
      while (hanging.length < 12) await new Promise((resolve) => setTimeout(resolve, 10));
      const fast = await postWithTimeout(`${base}/fast`, {}, '{}', 5_000);
      expect(fast).to.include({ statusCode: 204, error: null });
      for (const response of hanging) response.writeHead(503).end();
      expect((await Promise.all(slow)).map((outcome) => outcome.statusCode)).to.deep.equal(Array(12).fill(503));
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a request that gets no answer in time fails as timed out, and one to a closed port as refused', async () => {
    const server = http.createServer(() => {});
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const timedOut = await postWithTimeout(`http://127.0.0.1:${port}/`, {}, '{}', 100);
      expect(timedOut.statusCode).to.equal(null);
      expect(timedOut.error).to.equal('timed out after 100 ms');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    const refused = await postWithTimeout(`http://127.0.0.1:${port}/`, {}, '{}', 1_000);
    expect(refused.statusCode).to.equal(null);
    expect(refused.error).to.match(/^ECONNREFUSED/);
  });
});
