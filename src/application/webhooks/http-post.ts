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
 * POSTs `body` with a per-request timeout covering the whole exchange (connect, headers and
 * body). A 2xx is success; anything else is reported with the start of the response body.
 */
export async function postWithTimeout(url: string, headers: Record<string, string>, body: string | undefined, timeoutMs: number): Promise<PostOutcome> {
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  try {
    const response = await fetch(url, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    const text = await response.text();
    const ok = response.status >= 200 && response.status < 300;
    return {
      statusCode: response.status,
      latencyMs: latency(),
      retryAfter: response.headers.get('retry-after'),
      error: ok ? null : `HTTP ${response.status}${text ? `: ${text.slice(0, MAX_ERROR_BODY)}` : ''}`,
    };
  } catch (error) {
    const name = (error as Error).name;
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason =
      name === 'TimeoutError' || name === 'AbortError'
        ? `timed out after ${timeoutMs} ms`
        : `${cause?.code ?? 'request failed'}${cause?.message ? `: ${cause.message}` : `: ${(error as Error).message}`}`;
    return { statusCode: null, latencyMs: latency(), retryAfter: null, error: reason };
  }
}
