import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { expect } from 'chai';
import { createHttpServer, MAX_HEADER_BYTES } from '../../../src/http/http-server.js';

/** Sends `request` raw (then ends the client's side when `end`) and reads the whole answer (the server closes the connection). */
async function raw(server: Server, request: string, { end = false } = {}): Promise<string> {
  const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
  if (end) socket.end(request);
  else socket.write(request);
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The first line of each HTTP response in `answer`, in order. */
const statusLines = (answer: string) => [...answer.matchAll(/HTTP\/1\.1 \d{3} [^\r]*/g)].map((match) => match[0]);

/** An app that names what it was asked (status 200, or 405 for a method it does not know), echoing x-request-id. */
const echo: RequestListener = (req: IncomingMessage, res: ServerResponse) => {
  const known = ['GET', 'POST', 'HEAD'].includes(req.method ?? '');
  const body = `${req.method} ${req.url} id=${req.headers['x-request-id'] ?? '-'} version=${req.httpVersion}`;
  req.resume();
  req.on('end', () => res.writeHead(known ? 200 : 405, { 'content-length': Buffer.byteLength(body), ...(known ? {} : { allow: 'GET' }) }).end(body));
};

describe('the HTTP server: every request is answered in the API shape, or by the app', () => {
  const servers: Server[] = [];
  async function serve(app: RequestListener = echo, timeouts = {}): Promise<Server> {
    const server = createHttpServer(app, timeouts);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return server;
  }
  after(async () => {
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('answers a request Node cannot parse 400 in the API shape: headers past the limit, or not HTTP', async () => {
    const server = await serve();
    const cases: [string, number, string][] = [
      [`GET / HTTP/1.1\r\nhost: x\r\nx-pad: ${'a'.repeat(MAX_HEADER_BYTES)}\r\n\r\n`, 400, 'BAD_REQUEST'],
      ['NOT HTTP\r\n\r\n', 400, 'BAD_REQUEST'],
    ];
    for (const [request, status, code] of cases) {
      const [head, body] = (await raw(server, request)).split('\r\n\r\n') as [string, string];
      expect(head.split('\r\n')[0], code).to.match(new RegExp(`^HTTP/1.1 ${status} `));
      expect(head).to.match(/^x-request-id: [0-9a-f-]{36}$/m);
      expect(head, code)
        .to.match(/^cache-control: no-store$/m)
        .and.match(/^x-content-type-options: nosniff$/m);
      expect(JSON.parse(body).errors[0]).to.include({ status, code, source: null });
    }
  });

  it('a client too slow to send its request gets 408 REQUEST_TIMEOUT in the API shape, not a complaint about what it sent', async () => {
    // The app sets the request id first, as the API's does; it answers once the body has come.
    const app: RequestListener = (req, res) => {
      res.setHeader('x-request-id', 'from-the-app');
      req.resume();
      req.on('end', () => res.end('whole'));
    };
    const server = await serve(app, { headersTimeout: 500, requestTimeout: 500, connectionsCheckingInterval: 100 });
    // Its head never ends: no request to answer on, so a response of its own.
    const [head, body] = (await raw(server, 'GET / HTTP/1.1\r\nhost: x\r\n')).split('\r\n\r\n') as [string, string];
    expect(head.split('\r\n')[0]).to.equal('HTTP/1.1 408 Request Timeout');
    expect(head).to.match(/^x-request-id: [0-9a-f-]{36}$/m);
    expect(head)
      .to.match(/^cache-control: no-store$/m)
      .and.match(/^x-content-type-options: nosniff$/m);
    expect(JSON.parse(body).errors[0]).to.deep.equal({
      code: 'REQUEST_TIMEOUT',
      status: 408,
      message: 'The request did not arrive whole in time',
      source: null,
    });
    // Its body never comes whole: answered on that request, with the id the app gave it.
    const stalled = await raw(server, 'POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 20\r\n\r\n{"app_user_id":');
    const [stalledHead, stalledBody] = stalled.split('\r\n\r\n') as [string, string];
    expect(stalledHead.split('\r\n')[0]).to.equal('HTTP/1.1 408 Request Timeout');
    expect(stalledHead).to.match(/^x-request-id: from-the-app$/m);
    expect(stalledHead)
      .to.match(/^cache-control: no-store$/m)
      .and.match(/^x-content-type-options: nosniff$/m);
    expect(JSON.parse(stalledBody).errors[0]).to.include({ code: 'REQUEST_TIMEOUT', status: 408 });
  });

  it('hands the app a method Node does not know (with its headers) and CONNECT; a line that is no request line stays a 400', async () => {
    const server = await serve();
    const unknown = await raw(server, 'FOO /users/ann?x=1 HTTP/1.1\r\nhost: x\r\nx-request-id: mine\r\n\r\n');
    expect(unknown.split('\r\n')[0]).to.equal('HTTP/1.1 405 Method Not Allowed');
    expect(unknown).to.match(/^allow: GET$/im);
    expect(unknown).to.include('FOO /users/ann?x=1 id=mine');
    const connect = await raw(server, 'CONNECT /users HTTP/1.1\r\nhost: x\r\nx-request-id: tunnel\r\n\r\n');
    expect(connect.split('\r\n')[0]).to.equal('HTTP/1.1 405 Method Not Allowed');
    expect(connect).to.include('CONNECT /users id=tunnel');
    expect((await raw(server, 'FOO BAR\r\n\r\n')).split('\r\n')[0]).to.equal('HTTP/1.1 400 Bad Request');
    // Its HTTP version as sent: an HTTP/1.0 request needs no Host.
    expect(await raw(server, 'FOO /old HTTP/1.0\r\n\r\n'))
      .to.include('FOO /old id=-')
      .and.to.include('version=1.0');
  });

  it('a response the server makes itself (an unknown method, CONNECT) closes as any response does, after it finishes', async () => {
    // The request activity deliveries yield to counts a request as open until its response closes:
    // a response that never closed kept every later webhook waiting WEBHOOK_YIELD_MAX_S.
    let open = 0;
    const closes: string[] = [];
    const server = await serve((req, res) => {
      open += 1;
      res.once('close', () => {
        open -= 1;
        closes.push(req.method ?? '');
      });
      echo(req, res);
    });
    await raw(server, 'FOO /users/ann HTTP/1.1\r\nhost: x\r\n\r\n');
    await raw(server, 'CONNECT /users HTTP/1.1\r\nhost: x\r\n\r\n');
    await raw(server, 'GET /users/ann HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(closes).to.have.members(['FOO', 'CONNECT', 'GET']);
    expect(open).to.equal(0);
  });

  it('answers requests pipelined before a malformed one first, in order, then the 400', async () => {
    const server = await serve();
    const answer = await raw(server, 'POST /users HTTP/1.1\r\nhost: x\r\nx-request-id: first\r\ncontent-length: 2\r\n\r\n{}GET /bad path HTTP/1.1\r\n\r\n');
    expect(statusLines(answer)).to.deep.equal(['HTTP/1.1 200 OK', 'HTTP/1.1 400 Bad Request']);
    expect(answer).to.include('POST /users id=first');
    const unknown = await raw(server, 'GET /a HTTP/1.1\r\nhost: x\r\n\r\nFOO /b HTTP/1.1\r\nhost: x\r\n\r\n');
    expect(statusLines(unknown)).to.deep.equal(['HTTP/1.1 200 OK', 'HTTP/1.1 405 Method Not Allowed']);
  });

  it('answers each pipelined request in turn: the one whose body never comes gets the 400, those before it their own answers', async () => {
    const server = await serve();
    const post = (id: string, body: string, length = body.length) =>
      `POST /users HTTP/1.1\r\nhost: x\r\nx-request-id: ${id}\r\ncontent-length: ${length}\r\n\r\n${body}`;
    const cut = await raw(server, `${post('pa', '{}')}${post('pb', '{}')}${post('pc', '{"a', 50)}`, { end: true });
    expect(statusLines(cut)).to.deep.equal(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK', 'HTTP/1.1 400 Bad Request']);
    expect(cut).to.include('POST /users id=pa').and.to.include('POST /users id=pb').and.to.include('"code":"BODY_INVALID"');
    // A body whose chunked framing breaks: that request gets the 400 at once, and the connection closes.
    const broken = await raw(server, `${post('ok', '{}')}POST /users HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\nZZ\r\n`);
    expect(statusLines(broken)).to.deep.equal(['HTTP/1.1 200 OK', 'HTTP/1.1 400 Bad Request']);
    expect(broken).to.include('"code":"BODY_INVALID"');
    // CONNECT behind a request still being answered waits its turn (it used to take the socket from it).
    const connect = await raw(server, 'GET /a HTTP/1.1\r\nhost: x\r\n\r\nCONNECT /users HTTP/1.1\r\nhost: x\r\n\r\n');
    expect(statusLines(connect)).to.deep.equal(['HTTP/1.1 200 OK', 'HTTP/1.1 405 Method Not Allowed']);
    // CONNECT to a host: no path to answer for.
    const proxy = await raw(server, 'CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n');
    expect(statusLines(proxy)).to.deep.equal(['HTTP/1.1 400 Bad Request']);
    expect(proxy).to.include('"code":"BAD_REQUEST"');
  });

  it('answers a request whose client half-closed after sending it (Node would drop the answer)', async () => {
    const server = await serve();
    const answer = await raw(server, 'POST /users HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}', { end: true });
    expect(statusLines(answer)).to.deep.equal(['HTTP/1.1 200 OK']);
    const old = await raw(server, 'POST /users HTTP/1.0\r\ncontent-length: 2\r\n\r\n{}', { end: true });
    expect(old).to.match(/^HTTP\/1\.1 200 /);
  });

  it('ignores an Expect it does not know (RFC 9110 allows it) instead of a bare 417', async () => {
    const server = await serve();
    const answer = await raw(server, 'POST /users HTTP/1.1\r\nhost: x\r\nexpect: 200-ok\r\nconnection: close\r\ncontent-length: 2\r\n\r\n{}');
    expect(statusLines(answer)).to.deep.equal(['HTTP/1.1 200 OK']);
  });

  it('invites a body with 100 Continue only when some route could take it', async () => {
    const server = await serve();
    const small = await raw(server, 'POST /users HTTP/1.1\r\nhost: x\r\nexpect: 100-continue\r\nconnection: close\r\ncontent-length: 2\r\n\r\n{}');
    expect(statusLines(small)).to.deep.equal(['HTTP/1.1 100 Continue', 'HTTP/1.1 200 OK']);
    // The app (here: one that answers without reading) is asked without the invitation.
    const refusing = await serve((_req, res) => res.writeHead(413, { connection: 'close' }).end());
    const huge = await raw(refusing, 'POST /users HTTP/1.1\r\nhost: x\r\nexpect: 100-continue\r\ncontent-length: 1000000000\r\n\r\n');
    expect(statusLines(huge)).to.deep.equal(['HTTP/1.1 413 Payload Too Large']);
  });

  it('a body cut short of its content-length is answered 400 BODY_INVALID on the request under way; a GET so cut is answered by the app', async () => {
    const server = await serve((req, res) => {
      res.setHeader('x-request-id', 'the-request');
      req.resume();
      // The app answers a GET whatever its body; a POST waits for its body, which never comes.
      if (req.method === 'GET') res.end('ok');
    });
    const cut = await raw(server, 'POST /users HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 50\r\n\r\n{"app_user_id":"a"', {
      end: true,
    });
    const [head, body] = cut.split('\r\n\r\n') as [string, string];
    expect(head.split('\r\n')[0]).to.equal('HTTP/1.1 400 Bad Request');
    expect(head).to.match(/^x-request-id: the-request$/m);
    expect(head)
      .to.match(/^cache-control: no-store$/m)
      .and.match(/^x-content-type-options: nosniff$/m);
    expect(JSON.parse(body).errors[0]).to.include({ status: 400, code: 'BODY_INVALID', source: null });
    const get = await raw(server, 'GET /users/a HTTP/1.1\r\nhost: x\r\ncontent-length: 50\r\n\r\n{', { end: true });
    expect(statusLines(get)).to.deep.equal(['HTTP/1.1 200 OK']);
  });

  it('leaves a request that parses to the app', async () => {
    const server = await serve();
    const answer = await raw(server, 'GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
    expect(answer.split('\r\n')[0]).to.equal('HTTP/1.1 200 OK');
  });
});
