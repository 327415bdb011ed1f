import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, errorBody } from './errors.js';

/**
 * Room for a request line and headers (Node's default is 16 KiB). Every request the OpenAPI
 * document allows fits: its longest query (`/admin/events`, 2,600 characters that may each take
 * 12 bytes percent-encoded) is about 31 KiB.
 */
export const MAX_HEADER_BYTES = 64 * 1024;

/**
 * A request Node cannot parse (headers past MAX_HEADER_BYTES, a malformed request line) never
 * reaches express: Node answered it with a bare 400 or 431, without a body or `x-request-id`.
 * This answers it as the API answers every bad request (SPEC §1, §9), then closes the connection.
 */
export function answerUnparsableRequests(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex & { _httpMessage?: { headersSent?: boolean } }) => {
    // Gone, or a response already started on it: nothing can be answered (as Node's own handler).
    if (error.code === 'ECONNRESET' || !socket.writable || socket._httpMessage?.headersSent) {
      socket.destroy();
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
