import { randomUUID } from 'node:crypto';
import { IncomingMessage, type RequestListener, type Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { BODY_METHODS } from './body-guard.js';
import { ApiError, errorBody } from './errors.js';

/**
 * Room for a request line and headers (Node's default is 16 KiB). Every request the OpenAPI
 * document allows fits: its longest query (`/admin/events`, 2,600 characters that may each take
 * 12 bytes percent-encoded) is about 31 KiB.
 */
export const MAX_HEADER_BYTES = 64 * 1024;

/** A request line whose only fault is a method Node does not know (`FOO /users/ann HTTP/1.1`). */
const UNKNOWN_METHOD_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\/[^\s]*) HTTP\/1\.[01]\r?$/;

/**
 * A request Node cannot parse (headers past MAX_HEADER_BYTES, a malformed request line) never
 * reaches express: Node answered it with a bare 400 or 431, without a body or `x-request-id`.
 * This answers it as the API answers every bad request (SPEC §1, §9), then closes the connection.
 *
 * A well-formed request whose method Node does not know (`FOO`, which its parser refuses before
 * the path) is handed to `app` with its method and path, without headers or body: the app answers
 * it as it answers any method a path does not have (405 with `allow`, or 404 for an unknown path).
 */
export function answerUnparsableRequests(server: Server, app?: RequestListener): void {
  server.on('clientError', (error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex & { _httpMessage?: ServerResponse }) => {
    // Gone, or a response already started on it: nothing can be answered (as Node's own handler).
    if (error.code === 'ECONNRESET' || !socket.writable || socket._httpMessage?.headersSent) {
      socket.destroy();
      return;
    }
    // (Not behind a pipelined request still being answered on this connection: that one has the socket.)
    const line = error.code === 'HPE_INVALID_METHOD' && app && !socket._httpMessage ? UNKNOWN_METHOD_LINE.exec(requestLine(error.rawPacket)) : null;
    if (line && app) {
      answerUnknownMethod(app, socket as Socket, line[1]!, line[2]!);
      return;
    }
    // The connection ended before the body its content-length announced: the request under way
    // is answered as a body that could not be read completely (its x-request-id kept).
    const inFlight = socket._httpMessage;
    if (error.code === 'HPE_INVALID_EOF_STATE' && inFlight && BODY_METHODS.has(inFlight.req.method ?? '')) {
      const answer = new ApiError(400, 'BODY_INVALID', 'The body ended before the length its content-length announced', null);
      inFlight.shouldKeepAlive = false;
      const body = JSON.stringify(errorBody(answer.toJSON()));
      inFlight.writeHead(400, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' }).end(body);
      return;
    }
    // A client too slow to send its request: Node's 408, not a complaint about what it sent.
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      socket.end('HTTP/1.1 408 Request Timeout\r\nconnection: close\r\n\r\n');
      return;
    }
    const answer = answerTo(error.code);
    const body = JSON.stringify(errorBody(answer.toJSON()));
    socket.end(
      [
        'HTTP/1.1 400 Bad Request',
        'content-type: application/json; charset=utf-8',
        `content-length: ${Buffer.byteLength(body)}`,
        `x-request-id: ${randomUUID()}`,
        'connection: close',
        '',
        body,
      ].join('\r\n'),
    );
  });
}

function answerTo(code: string | undefined): ApiError {
  if (code === 'HPE_HEADER_OVERFLOW')
    return new ApiError(400, 'BAD_REQUEST', `The request line and headers are larger than ${MAX_HEADER_BYTES / 1024} KiB`, null);
  return new ApiError(400, 'BAD_REQUEST', 'The request could not be parsed as HTTP', null);
}

/** The first line of what the client sent (up to its first 8 KiB). */
function requestLine(raw: Buffer | undefined): string {
  if (!raw) return '';
  const head = raw.subarray(0, 8192).toString('latin1');
  const end = head.indexOf('\n');
  return end === -1 ? '' : head.slice(0, end);
}

/** Runs `app` on a request of `method` and `url` alone (no headers, no body), answering on `socket`, then closes it. */
function answerUnknownMethod(app: RequestListener, socket: Socket, method: string, url: string): void {
  const req = new IncomingMessage(socket);
  req.method = method;
  req.url = url;
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 1;
  req.httpVersion = '1.1';
  req.push(null);
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket);
  res.once('finish', () => {
    res.detachSocket(socket);
    socket.end();
  });
  app(req, res);
}
