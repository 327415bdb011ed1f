import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The parsed JSON body (null when not JSON). */
  json: any;
}

/** How the receiver answers one request: a status, optional headers, optional delay before answering. */
export interface Answer {
  status: number;
  headers?: Record<string, string>;
  delayMs?: number;
  body?: string;
}

/**
 * A real HTTP receiver on 127.0.0.1 that records every request and answers as `respond` says
 * (200 by default). `waitFor` resolves as soon as the recorded requests satisfy a condition.
 */
export class Receiver {
  readonly requests: ReceivedRequest[] = [];
  respond: (request: ReceivedRequest, index: number) => Answer = () => ({ status: 200 });
  private server: Server | null = null;
  private waiters: (() => void)[] = [];
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let json: any = null;
        try {
          json = body ? JSON.parse(body) : null;
        } catch {
          json = null;
        }
        const request = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, json };
        const index = this.requests.length;
        this.requests.push(request);
        for (const wake of this.waiters.splice(0)) wake();
        const answer = this.respond(request, index);
        const send = () => {
          if (res.destroyed) return;
          res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
          res.end(answer.body ?? '{}');
        };
        if (answer.delayMs) setTimeout(send, answer.delayMs);
        else send();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  /** Resolves when `condition` holds over the requests received (checked on every request); rejects after `timeoutMs`. */
  async waitFor(condition: (requests: ReceivedRequest[]) => boolean, timeoutMs = 10_000, what = 'requests'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition(this.requests)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; received ${this.requests.length}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = null;
  }
}

/** Verifies a received webhook with the standardwebhooks library; returns the parsed payload (throws when invalid). */
export function verifyWebhook(secret: string, request: ReceivedRequest): any {
  return new Webhook(secret).verify(request.body, {
    'webhook-id': String(request.headers['webhook-id'] ?? ''),
    'webhook-timestamp': String(request.headers['webhook-timestamp'] ?? ''),
    'webhook-signature': String(request.headers['webhook-signature'] ?? ''),
  });
}

/** Polls `read` until `done` says yes (bounded); for state the service reaches asynchronously. */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not reached in ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
