import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { expect } from 'chai';
import { answerUnparsableRequests, MAX_HEADER_BYTES } from '../../../src/http/unparsable-requests.js';

/** Sends `request` raw (then ends the client's side when `end`) and reads the whole answer (the server closes the connection). */
async function raw(server: Server, request: string, { end = false } = {}): Promise<string> {
  const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
  if (end) socket.end(request);
  else socket.write(request);
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

describe('requests Node cannot parse', () => {
  let server: Server;
  before(async () => {
    server = createServer({ maxHeaderSize: MAX_HEADER_BYTES, headersTimeout: 500, requestTimeout: 500, connectionsCheckingInterval: 100 }, (_req, res) =>
      res.end('ok'),
    );
    answerUnparsableRequests(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('are answered 400 in the API shape: headers past the limit, or not HTTP', async () => {
    const cases: [string, number, string][] = [
      [`GET / HTTP/1.1\r\nhost: x\r\nx-pad: ${'a'.repeat(MAX_HEADER_BYTES)}\r\n\r\n`, 400, 'BAD_REQUEST'],
      ['NOT HTTP\r\n\r\n', 400, 'BAD_REQUEST'],
    ];
    for (const [request, status, code] of cases) {
      const [head, body] = (await raw(server, request)).split('\r\n\r\n') as [string, string];
      expect(head.split('\r\n')[0], code).to.match(new RegExp(`^HTTP/1.1 ${status} `));
      expect(head).to.match(/^x-request-id: [0-9a-f-]{36}$/m);
      expect(JSON.parse(body).errors[0]).to.include({ status, code, source: null });
    }
  });

  it('a client too slow to send its request gets 408, not a complaint about what it sent', async () => {
    const answer = await raw(server, 'GET / HTTP/1.1\r\nhost: x\r\n');
    expect(answer.split('\r\n')[0]).to.equal('HTTP/1.1 408 Request Timeout');
  });

  it('a method Node does not know, in a well-formed request line, is left to the app (its method and path, nothing else)', async () => {
    const app = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => res.writeHead(418).end(`${req.method} ${req.url}`));
    answerUnparsableRequests(app, (req, res) => res.writeHead(405, { allow: 'GET' }).end(`${req.method} ${req.url}`));
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    try {
      const answer = await raw(app, 'FOO /users/ann?x=1 HTTP/1.1\r\nhost: x\r\n\r\n');
      expect(answer.split('\r\n')[0]).to.equal('HTTP/1.1 405 Method Not Allowed');
      expect(answer).to.match(/^allow: GET$/im);
      expect(answer).to.include('FOO /users/ann?x=1');
      // Not a request line at all: still the 400.
      expect((await raw(app, 'FOO BAR\r\n\r\n')).split('\r\n')[0]).to.equal('HTTP/1.1 400 Bad Request');
    } finally {
      app.closeAllConnections();
      await new Promise((resolve) => app.close(resolve));
    }
  });

  it('a body cut short of its content-length is answered 400 BODY_INVALID on the request under way; a GET so cut stays a 400 BAD_REQUEST', async () => {
    const app = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
      res.setHeader('x-request-id', 'the-request');
      req.resume();
    });
    answerUnparsableRequests(app);
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    try {
      const cut = await raw(app, 'POST /users HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 50\r\n\r\n{"app_user_id":"a"', {
        end: true,
      });
      const [head, body] = cut.split('\r\n\r\n') as [string, string];
      expect(head.split('\r\n')[0]).to.equal('HTTP/1.1 400 Bad Request');
      expect(head).to.match(/^x-request-id: the-request$/m);
      expect(JSON.parse(body).errors[0]).to.include({ status: 400, code: 'BODY_INVALID', source: null });
      const get = await raw(app, 'GET /users/a HTTP/1.1\r\nhost: x\r\ncontent-length: 50\r\n\r\n{', { end: true });
      expect(JSON.parse(get.split('\r\n\r\n')[1]!).errors[0]).to.include({ status: 400, code: 'BAD_REQUEST' });
    } finally {
      app.closeAllConnections();
      await new Promise((resolve) => app.close(resolve));
    }
  });

  it('a request that parses is left alone', async () => {
    const answer = await raw(server, 'GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
    expect(answer.split('\r\n')[0]).to.equal('HTTP/1.1 200 OK');
  });
});
