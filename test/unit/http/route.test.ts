import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import express from 'express';
import { errorHandler, pathNotFound } from '../../../src/http/errors.js';
import { ApiDescription } from '../../../src/http/openapi.js';
import { expressPath, mountRoutes, route, sendJsonPieces } from '../../../src/http/route.js';
import { z } from '../../../src/http/schemas/zod-openapi.js';
import type { Logger } from '../../../src/ports/logger.js';

const silent = { info() {}, warn() {}, error() {}, debug() {}, child: () => silent } as unknown as Logger;

/** Runs a command to its end without blocking this process (which serves what it reads). */
function run(command: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Serves `app` on a free port of 127.0.0.1 for the tests of the calling `describe`. */
function listening(app: express.Express): { readonly base: string } {
  const state = { base: '', server: null as ReturnType<express.Express['listen']> | null };
  before(async () => {
    state.server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => state.server!.once('listening', resolve));
    state.base = `http://127.0.0.1:${(state.server.address() as AddressInfo).port}`;
  });
  after(() => state.server?.close());
  return {
    get base() {
      return state.base;
    },
  };
}

/** A route declared once: its OpenAPI entry and its express route come from the same object. */
describe('HTTP: one declaration per route', () => {
  const api = new ApiDescription();
  const app = express();
  app.use(express.json());
  app.use((_req, res, next) => {
    res.locals.requestId = 'r';
    next();
  });
  mountRoutes(app, api, [
    route({
      method: 'put',
      path: '/things/{id}',
      operationId: 'putThing',
      summary: 'Put a thing',
      tags: ['operator'],
      auth: 'none',
      params: z.object({ id: z.string().regex(/^[a-z]+$/) }),
      query: z.object({ loud: z.enum(['yes', 'no']).default('no') }),
      body: z.object({ size: z.number().int() }),
      responses: { 200: { description: 'Put', schema: z.object({ data: z.object({ id: z.string(), size: z.number(), loud: z.boolean() }) }) } },
      errors: [],
      async handle({ params, query, body }) {
        return { status: 200, body: { data: { id: params.id, size: body.size, loud: query.loud === 'yes' } } };
      },
    }),
    route({
      method: 'get',
      path: '/things/{id}',
      operationId: 'getThing',
      summary: 'Answers a status it did not declare',
      tags: ['operator'],
      auth: 'none',
      params: z.object({ id: z.string() }),
      responses: { 200: { description: 'Found' } },
      errors: [],
      async handle() {
        return { status: 201 };
      },
    }),
  ]);
  app.use(pathNotFound);
  app.use(errorHandler(silent));
  const served = listening(app);

  it('turns the OpenAPI path into the express path', () => {
    expect(expressPath('/users/{app_user_id}/rewards/{key}')).to.equal('/users/:app_user_id/rewards/:key');
  });

  it('describes each declared operation in the document', () => {
    const document = api.document() as { paths: Record<string, Record<string, { operationId: string }>> };
    expect(Object.keys(document.paths['/things/{id}']!).sort()).to.deep.equal(['get', 'put']);
    expect(document.paths['/things/{id}']!.put!.operationId).to.equal('putThing');
  });

  it('parses path parameters, query and body with the declared schemas before the handler runs', async () => {
    const ok = await fetch(`${served.base}/things/abc?loud=yes`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"size":3}' });
    expect(ok.status).to.equal(200);
    expect(await ok.json()).to.deep.equal({ data: { id: 'abc', size: 3, loud: true } });
    const badPath = await fetch(`${served.base}/things/ABC`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"size":3}' });
    expect(((await badPath.json()) as { errors: { source: string }[] }).errors[0]!.source).to.equal('path:/id');
    const badQuery = await fetch(`${served.base}/things/abc?loud=maybe`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{"size":3}',
    });
    expect(((await badQuery.json()) as { errors: { source: string }[] }).errors[0]!.source).to.equal('query:/loud');
    const badBody = await fetch(`${served.base}/things/abc`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"size":1.5}' });
    expect(((await badBody.json()) as { errors: { source: string }[] }).errors[0]!.source).to.equal('/size');
  });

  it('answers other methods on a declared path with 405 and the declared methods in Allow', async () => {
    const response = await fetch(`${served.base}/things/abc`, { method: 'DELETE' });
    expect(response.status).to.equal(405);
    expect(response.headers.get('allow')).to.equal('PUT, GET');
  });

  it('refuses to send a status the declaration does not document (a 500, never an undocumented answer)', async () => {
    const response = await fetch(`${served.base}/things/abc`);
    expect(response.status).to.equal(500);
  });
});

describe('HTTP: the error handler', () => {
  it('logs nothing for a middleware that met a response the server had already written (a body it could not read)', () => {
    const errors: unknown[] = [];
    const logger = { ...silent, error: (...args: unknown[]) => errors.push(args) } as unknown as Logger;
    const sent = Object.assign(new Error('Cannot set headers after they are sent to the client'), { code: 'ERR_HTTP_HEADERS_SENT' });
    const res = { headersSent: true, getHeader: () => 'r' } as unknown as express.Response;
    errorHandler(logger)(sent, { method: 'POST', path: '/users' } as express.Request, res, () => {});
    expect(errors).to.deep.equal([]);
    // Any other failure after the answer is still logged.
    errorHandler(logger)(new Error('boom'), { method: 'POST', path: '/users' } as express.Request, res, () => {});
    expect(errors).to.have.length(1);
  });
});

describe('HTTP: a JSON document written piece by piece (sendJsonPieces)', () => {
  const errors: unknown[] = [];
  const logger = { ...silent, error: (...args: unknown[]) => errors.push(args) } as unknown as Logger;
  let pieces: () => AsyncIterable<string> = async function* () {};
  let produced = 0;
  const app = express();
  app.get('/doc', async (_req, res, next) => {
    try {
      await sendJsonPieces(res, pieces());
    } catch (error) {
      next(error);
    }
  });
  app.use(errorHandler(logger));
  const served = listening(app);

  it('answers 200 with the pieces as one JSON document, chunked', async () => {
    pieces = async function* () {
      yield '{"data":[';
      yield '1,2';
      yield ',3]}';
    };
    const response = await fetch(`${served.base}/doc`);
    expect(response.status).to.equal(200);
    expect(response.headers.get('transfer-encoding')).to.equal('chunked');
    expect(await response.json()).to.deep.equal({ data: [1, 2, 3] });
  });

  it('lets other work run between any two pieces, however fast the reader takes them', async () => {
    // Turns of the event loop (each with its poll for I/O) seen between pieces: an immediate that re-arms itself counts them.
    let turns = 0;
    const starved: number[] = [];
    pieces = async function* () {
      let last = 0;
      let tick = setImmediate(function count() {
        turns += 1;
        tick = setImmediate(count);
      });
      try {
        yield '[0';
        // Pieces above the socket's buffer mark (each waits for a 'drain'), read by another process as fast as it can.
        for (let i = 1; i < 40; i++) {
          if (turns === last) starved.push(i);
          last = turns;
          yield `,"${'x'.repeat(256 * 1024)}"`;
        }
        yield ']';
      } finally {
        clearImmediate(tick);
      }
    };
    const reader = await run(process.execPath, [
      '-e',
      `fetch(${JSON.stringify(`${served.base}/doc`)}).then((r) => r.text()).then((t) => console.log(t.length))`,
    ]);
    expect(reader.code, reader.stderr).to.equal(0);
    expect(Number(reader.stdout.trim())).to.be.greaterThan(39 * 256 * 1024);
    // The first piece after '[0' may come in the turn that wrote it.
    expect(starved.filter((i) => i > 1)).to.deep.equal([]);
  });

  it('cuts the answer short when a piece fails after the first: the client never sees it as whole, and the failure is logged', async () => {
    errors.length = 0;
    pieces = async function* () {
      yield '{"data":[1';
      throw new Error('the store went away');
    };
    // The status line may or may not have left before the cut: either way the read fails.
    let failed: unknown = null;
    await fetch(`${served.base}/doc`)
      .then((response) => response.text())
      .catch((error) => {
        failed = error;
      });
    expect(failed).to.be.instanceOf(Error);
    expect(errors).to.have.length(1);
  });

  it('stops reading pieces when the client goes away', async () => {
    produced = 0;
    const piece = `"${'x'.repeat(64 * 1024)}",`;
    pieces = async function* () {
      yield '[';
      for (let i = 0; i < 10_000; i++) {
        produced += 1;
        yield piece;
      }
      yield '0]';
    };
    const controller = new AbortController();
    const response = await fetch(`${served.base}/doc`, { signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const after = produced;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(produced).to.equal(after);
    expect(produced).to.be.lessThan(10_000);
  });
});
