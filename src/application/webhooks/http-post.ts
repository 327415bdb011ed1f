import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';

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

/**
 * POSTs `body` with a per-request timeout covering the whole exchange (connect, headers and
 * body). A 2xx is success; anything else is reported with the start of the response body.
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
    const finish = (outcome: PostOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const fail = (error: Error) => {
      const code = (error as { code?: string }).code;
      const reason = error instanceof RequestTimeout ? `timed out after ${timeoutMs} ms` : `${code ?? 'request failed'}: ${error.message}`;
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
    const timer = setTimeout(() => request.destroy(new RequestTimeout()), timeoutMs);
    request.on('error', fail);
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      const ok = status >= 200 && status < 300;
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        if (text.length < MAX_ERROR_BODY) text += chunk;
      });
      response.on('error', fail);
      response.on('end', () =>
        finish({
          statusCode: status,
          latencyMs: latency(),
          retryAfter: typeof response.headers['retry-after'] === 'string' ? response.headers['retry-after'] : null,
          error: ok ? null : `HTTP ${status}${text ? `: ${text.slice(0, MAX_ERROR_BODY)}` : ''}`,
        }),
      );
    });
    request.end(payload);
  });
}
