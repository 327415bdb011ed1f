import { randomUUID } from 'node:crypto';
import { createServer, IncomingMessage, type RequestListener, STATUS_CODES, type Server, type ServerOptions, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { BODY_METHODS } from './body-guard.js';
import { BULK_BODY_LIMIT, WEBHOOK_BODY_LIMIT } from './body-limits.js';
import { ApiError, errorBody } from './errors.js';

/**
 * Room for a request line and headers (Node's default is 16 KiB). Every request the OpenAPI
 * document allows fits: its longest query (`/admin/events`, 2,600 characters that may each take
 * 12 bytes percent-encoded) is about 31 KiB.
 */
export const MAX_HEADER_BYTES = 64 * 1024;

/** A request line whose only fault is a method Node does not know (`FOO /users/ann HTTP/1.1`). */
const UNKNOWN_METHOD_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\/[^\s]*) HTTP\/1\.([01])\r?$/;

/** The largest body any route takes. */
const LARGEST_BODY = Math.max(BULK_BODY_LIMIT, WEBHOOK_BODY_LIMIT);

type ServerSocket = Duplex & { _httpMessage?: ServerResponse | null };

/**
 * The HTTP server of `app`, answering every request the way the API answers (a JSON body and an
 * `x-request-id`), including those Node would otherwise answer or drop on its own:
 *
 * - a request Node cannot parse (headers past MAX_HEADER_BYTES, a malformed request line):
 *   400 in the API's shape, after the requests pipelined before it on the connection are answered;
 * - a well-formed request whose method Node does not know (`FOO`, refused by its parser before
 *   the path), and `CONNECT` (which Node hands to a `connect` listener, or drops): handed to `app`,
 *   which answers as for any method a path does not have (405 with `allow`, or 404);
 * - an `Expect` other than `100-continue` (Node's bare 417): ignored, as RFC 9110 allows; a
 *   `100-continue` for a body larger than any route takes gets the 413 without the invitation;
 * - a client that half-closes after sending its request (as `curl` and HTTP/1.0 clients may):
 *   still answered, then the connection is closed (Node would drop the answer);
 * - a body that never comes whole (cut short of its content-length, or its chunked framing
 *   broken): 400 `BODY_INVALID` on that request itself, in its turn (`inTurn`);
 * - a request that does not arrive whole in time (Node's headersTimeout and requestTimeout):
 *   408 `REQUEST_TIMEOUT` (Node's own 408 has no body and no `x-request-id`).
 */
export function createHttpServer(
  app: RequestListener,
  timeouts: Pick<ServerOptions, 'headersTimeout' | 'requestTimeout' | 'connectionsCheckingInterval'> = {},
): Server {
  // Without a Host header, an HTTP/1.1 request is refused by the app (400 in its shape), not by Node (a bare 400).
  const server = createServer({ ...timeouts, maxHeaderSize: MAX_HEADER_BYTES, requireHostHeader: false }, app);
  // Node's own switch (an http.Server property it has long had, not in its types): a client's FIN
  // ends the connection only once the requests it sent are answered.
  Object.assign(server, { httpAllowHalfOpen: true });
  server.on('checkExpectation', app);
  // `Expect: 100-continue`: no invitation to send a body larger than any route takes (the app
  // answers 413 at once); Node's own handler invites every body.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    if (!(Number(req.headers['content-length']) > LARGEST_BODY)) res.writeContinue();
    app(req, res);
  });
  server.on('connect', (req: IncomingMessage, socket: Socket) =>
    inTurn(socket, {
      // CONNECT names a host (`CONNECT example.com:443`), not a path: this service is no proxy.
      last: () =>
        req.url?.startsWith('/') ? answerAlone(app, req, socket) : socket.end(rawAnswer(new ApiError('BAD_REQUEST', 'The request target is not a path', null))),
    }),
  );
  const answering = new WeakSet<Duplex>();
  server.on('clientError', (error: NodeJS.ErrnoException & { rawPacket?: Buffer; bytesParsed?: number }, socket: ServerSocket) => {
    // Gone: nothing can be answered.
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    // A parser that failed once may report again: answer once.
    if (answering.has(socket)) return;
    answering.add(socket);
    // A client too slow to send its request (its head within headersTimeout, all of it within
    // requestTimeout): 408, not a complaint about what it sent; on that request itself when its
    // head was read (its body is what never came), in its turn.
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      const timedOut = new ApiError('REQUEST_TIMEOUT', 'The request did not arrive whole in time', null);
      inTurn(socket, { unread: (res) => answerOn(res, timedOut), last: () => socket.end(rawAnswer(timedOut)) });
      return;
    }
    const cutShort = error.code === 'HPE_INVALID_EOF_STATE';
    const head = requestHead(error.rawPacket, error.bytesParsed);
    const line = error.code === 'HPE_INVALID_METHOD' ? UNKNOWN_METHOD_LINE.exec(head.line) : null;
    inTurn(socket, {
      // The parser stopped inside the body of a request it had read the head of (the body ended
      // early, or its framing is broken): that request is answered as one whose body could not
      // be read, and nothing follows it.
      unread: (res) => {
        const code = BODY_METHODS.has(res.req.method ?? '') ? 'BODY_INVALID' : 'BAD_REQUEST';
        const message = cutShort
          ? 'The body ended before the length its content-length announced'
          : 'The body could not be read: its framing is not valid HTTP';
        answerOn(res, new ApiError(code, message, null));
      },
      // Otherwise it stopped in a request it could not read at all, answered after those before it.
      last: () => {
        if (line) {
          const req = new IncomingMessage(socket as Socket);
          const minor = Number(line[3]);
          Object.assign(req, { method: line[1], url: line[2], httpVersionMajor: 1, httpVersionMinor: minor, httpVersion: `1.${minor}`, headers: head.headers });
          req.push(null);
          answerAlone(app, req, socket as Socket);
        } else if (cutShort && !error.rawPacket?.length) {
          // The connection ended after whole requests, all answered: nothing more to say.
          socket.end();
        } else {
          socket.end(rawAnswer(answerTo(error.code)));
        }
      },
    });
  });
  return server;
}

/**
 * Answers on `socket` in HTTP's order: each response of a request read before is written first.
 * A request whose body will never come (`unread`: the parser failed inside it) is answered there,
 * and the connection ends after it; else `last` answers once every earlier response is written.
 */
function inTurn(socket: ServerSocket, answers: { unread?: (res: ServerResponse) => void; last: () => void }): void {
  const current = socket._httpMessage;
  if (!current) {
    if (socket.writable) answers.last();
    return;
  }
  if (!current.req.complete && answers.unread) {
    // The app answered it already (a 413 that did not wait for the body): that is its answer.
    if (current.writableEnded) current.once('finish', () => socket.end());
    else if (!current.headersSent) answers.unread(current);
    else socket.destroy();
    return;
  }
  // Node attaches the next pipelined response as the one before it finishes.
  current.once('finish', () => setImmediate(() => inTurn(socket, answers)));
}

/** Runs `app` on `req` with a response of its own on `socket`, then closes the connection. */
function answerAlone(app: RequestListener, req: IncomingMessage, socket: Socket & ServerSocket): void {
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  // Outside any request's handler, a throw would end the process: a socket that cannot take
  // this answer (another response holds it) is closed instead.
  if (socket._httpMessage) {
    socket.destroy();
    return;
  }
  res.assignSocket(socket);
  res.once('finish', () => {
    res.detachSocket(socket);
    socket.end();
    // As Node does for the responses it makes: 'close' follows 'finish' (detached, the socket's own
    // close no longer reaches this response). Whatever waits for a response's close (the request
    // activity deliveries yield to) would otherwise count this request as open for good.
    process.nextTick(() => res.emit('close'));
  });
  app(req, res);
}

/** Like every answer of the app's own (src/http/app.ts): an error may name personal data. */
const NOT_STORED = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };

function answerOn(res: ServerResponse, error: ApiError): void {
  const body = JSON.stringify(errorBody(error.toJSON()));
  res.shouldKeepAlive = false;
  res
    .writeHead(error.status, {
      ...NOT_STORED,
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      connection: 'close',
    })
    .end(body);
}

/** `error` as a whole HTTP response, for a socket no response object can be given (the request could not be read). */
function rawAnswer(error: ApiError): string {
  const body = JSON.stringify(errorBody(error.toJSON()));
  return [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${randomUUID()}`,
    ...Object.entries(NOT_STORED).map(([name, value]) => `${name}: ${value}`),
    'connection: close',
    '',
    body,
  ].join('\r\n');
}

function answerTo(code: string | undefined): ApiError {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return new ApiError('BAD_REQUEST', `The request line and headers are too large (over ${MAX_HEADER_BYTES / 1024} KiB, or too many headers)`, null);
  }
  return new ApiError('BAD_REQUEST', 'The request could not be parsed as HTTP', null);
}

/**
 * The request line and the headers of the request the parser failed in (the line holding byte
 * `failedAt` of what it was given, after any requests pipelined before it), as Node would name them.
 */
function requestHead(raw: Buffer | undefined, failedAt = 0): { line: string; headers: Record<string, string> } {
  const packet = raw ? raw.toString('latin1') : '';
  const start = packet.lastIndexOf('\n', Math.max(0, failedAt - 1)) + 1;
  const text = packet.slice(start, start + MAX_HEADER_BYTES);
  const end = text.indexOf('\r\n\r\n');
  const [line = '', ...fields] = (end === -1 ? text : text.slice(0, end)).split(/\r?\n/);
  const headers: Record<string, string> = {};
  for (const field of fields) {
    const colon = field.indexOf(':');
    if (colon > 0) headers[field.slice(0, colon).trim().toLowerCase()] ??= field.slice(colon + 1).trim();
  }
  return { line, headers };
}
