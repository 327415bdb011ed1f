import http from 'node:http';
import https from 'node:https';
import type { LookupFunction, Socket } from 'node:net';

/** What one outgoing POST came to. `statusCode` null: no response (timeout, refused, reset). */
export interface PostOutcome {
  statusCode: number | null;
  latencyMs: number;
  /** The response's Retry-After header, as sent. */
  retryAfter: string | null;
  error: string | null;
}

const MAX_ERROR_BODY = 200;
/**
 * How much of an answer is read, counted in bytes off the socket (status lines, headers, any
 * number of 1xx answers, chunk framing and body): a receiver's answer is not what a delivery is
 * about, and one that streams without end would otherwise be read (and parsed) for the whole
 * timeout. A short answer is read to its end, so the connection is kept for the next delivery;
 * past this, the answer is cut off and its connection closed.
 */
const MAX_ANSWER_READ = 64 * 1024;
/**
 * Kept-alive connections, with no cap per host: each endpoint's lane has one request in flight
 * and the engine runs a bounded number of lanes, so endpoints on one host (one receiver, several
 * paths) never wait for each other's sockets. A cap of 8 let eight hanging endpoints time out a
 * ninth, healthy one on the same host before it was even sent.
 */
const agents = {
  'http:': new http.Agent({ keepAlive: true }),
  'https:': new https.Agent({ keepAlive: true }),
};

class RequestTimeout extends Error {}
class AnswerTooLong extends Error {}

/**
 * POSTs `body` with a per-request timeout covering the whole exchange (connect, headers and
 * body). A 2xx is success; anything else is reported with the start of the response body. The
 * promise settles by the timeout whatever the socket does (a `101 Switching Protocols` answer,
 * for one, emits neither a response nor an error), and reads at most MAX_ANSWER_READ of an answer.
 * node:http with kept-alive connections (several times cheaper per request than fetch here).
 */
export function postWithTimeout(
  url: string,
  headers: Record<string, string>,
  body: string | undefined,
  timeoutMs: number,
  options: { lookup?: LookupFunction | undefined } = {},
): Promise<PostOutcome> {
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (outcome: PostOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const fail = (error: Error) => {
      const code = (error as { code?: string }).code;
      const reason =
        error instanceof RequestTimeout
          ? `timed out after ${timeoutMs} ms`
          : error instanceof AnswerTooLong
            ? `answered more than ${MAX_ANSWER_READ / 1024} KiB before a final status`
            : `${code ?? 'request failed'}: ${error.message}`;
      finish({ statusCode: null, latencyMs: latency(), retryAfter: null, error: reason });
    };
    let target: URL;
    try {
      target = new URL(url);
    } catch (error) {
      fail(error as Error);
      return;
    }
    const transport = target.protocol === 'https:' ? https : http;
    const payload = body === undefined ? undefined : Buffer.from(body);
    const request = transport.request(target, {
      method: 'POST',
      agent: agents[target.protocol as 'http:' | 'https:'],
      ...(options.lookup ? { lookup: options.lookup } : {}),
      headers: { ...headers, 'content-length': String(payload?.length ?? 0) },
    });
    // Settled here, not by the request's own error: a request already torn down emits none.
    timer = setTimeout(() => {
      fail(new RequestTimeout());
      request.destroy();
    }, timeoutMs);
    request.on('error', fail);
    // Bytes the socket had read before this request: it may be a kept-alive one.
    let socket: Socket | null = null;
    let readBefore = 0;
    request.on('socket', (assigned) => {
      socket = assigned;
      readBefore = assigned.bytesRead;
    });
    const readTooMuch = () => socket !== null && socket.bytesRead - readBefore > MAX_ANSWER_READ;
    // 1xx answers (103 Early Hints…) come before the final one: they count too.
    request.on('information', () => {
      if (!readTooMuch()) return;
      fail(new AnswerTooLong());
      request.destroy();
    });
    const answered = (status: number, retryAfter: string | string[] | undefined, start: Buffer) => {
      // The first MAX_ERROR_BODY characters, not UTF-16 units: a cut never splits a character.
      const text = Array.from(start.toString('utf8')).slice(0, MAX_ERROR_BODY).join('');
      const ok = status >= 200 && status < 300;
      finish({
        statusCode: status,
        latencyMs: latency(),
        retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
        error: ok ? null : `HTTP ${status}${text ? `: ${text}` : ''}`,
      });
    };
    // A switch of protocols is not an answer to a delivery: the attempt fails with that status.
    request.on('upgrade', (response, upgraded) => {
      upgraded.destroy();
      answered(response.statusCode ?? 101, undefined, Buffer.alloc(0));
    });
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let kept = 0;
      response.on('data', (chunk: Buffer) => {
        if (kept < MAX_ERROR_BODY * 4) chunks.push(chunk);
        kept += chunk.length;
        if (readTooMuch()) {
          response.destroy();
          answered(status, response.headers['retry-after'], Buffer.concat(chunks));
        }
      });
      response.on('error', fail);
      response.on('end', () => answered(status, response.headers['retry-after'], Buffer.concat(chunks)));
    });
    request.end(payload);
  });
}
