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
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const message =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? `The request line and headers are larger than ${MAX_HEADER_BYTES / 1024} KiB`
        : 'The request could not be parsed as HTTP';
    const body = JSON.stringify(errorBody(new ApiError(400, 'BAD_REQUEST', message, null).toJSON()));
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
