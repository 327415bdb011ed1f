import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import type { EventStore } from '../../src/ports/event-store.js';
import type { ProjectorBatch } from '../../src/ports/read-store.js';
import type { ReadConsistency } from '../../src/ports/read-consistency.js';
import { TOKENS } from '../../src/ports/tokens.js';
import { CATCH_UP_MIN_LAG } from '../../src/application/projections/catch-up-guard.js';
import { createUser, eventually, events, getUser, never, putPromo, putReward } from '../support/fixtures.js';
import { FaultSwitch, faultyBackend } from '../support/faulty-backend.js';
import { BUNDLE_ID, makeAppleTestChain } from '../support/apple-signing.js';
import { REVENUECAT_AUTH, STRIPE_SECRET } from '../support/revenue-senders.js';
import { CLIENT_KEY, SECRET_KEY, startTestService, type TestService } from '../support/test-service.js';

const YEAR = 365 * 86_400_000;

function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let level = 0; level < depth; level += 1) value = { a: value };
  return value;
}

describe('API: hostile and unusual input never breaks the service', () => {
  let svc: TestService;
  const faults = new FaultSwitch();

  before(async () => {
    svc = await startTestService({ backend: faultyBackend(faults) });
    await putReward(svc, 'coins', { kind: 'credit', name: 'Coins', credits: 5 });
    await putReward(svc, 'offer', { kind: 'offer_code', name: 'Offer', offer_code_id: 'oc', offer_code_ref_name: 'ref', subscription_product_id: 'p' });
  });
  after(async () => svc.stop());
  afterEach(() => {
    faults.mode = 'ok';
    faults.when = () => true;
  });

  async function ready() {
    return (await svc.call('GET', '/readyz')).status === 200;
  }

  it('refuses JSON nested deeper than 32 levels (400), writes nothing, and stays ready', async () => {
    const response = await svc.call('POST', '/users', { app_user_id: 'deep', metadata: nested(40) });
    expect(response.status).to.equal(400);
    expect(response.body.errors[0].code).to.equal('BAD_REQUEST');
    expect(response.body.errors[0].source).to.match(/^\/metadata(\/a)+$/);
    expect((await svc.call('GET', '/users/deep')).status).to.equal(404);
    expect((await svc.call('POST', '/users', { app_user_id: 'shallow', metadata: nested(20) })).status).to.equal(201);
    expect(await ready()).to.equal(true);
  });

  it('a body that is not an object is BODY_INVALID however deep it nests (the depth is checked in objects only)', async () => {
    const deepArray = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    for (const [path, key] of [
      ['/users', CLIENT_KEY],
      ['/admin/reviews/nope/approve', SECRET_KEY],
    ] as const) {
      for (const body of [deepArray, '[]', `[${JSON.stringify(nested(40))}]`]) {
        const refused = await svc.call('POST', path, body, { 'x-api-key': key });
        expect(refused.status, `${path} ${body.slice(0, 12)}`).to.equal(400);
        expect(refused.body.errors[0], `${path} ${body.slice(0, 12)}`).to.include({ code: 'BODY_INVALID', source: null });
      }
    }
  });

  it('refuses lone UTF-16 surrogates anywhere (400) and writes nothing', async () => {
    const response = await svc.call('POST', '/users', '{"app_user_id":"lone\\ud800"}');
    expect(response.status).to.equal(400);
    expect(response.body.errors[0]).to.include({ code: 'BAD_REQUEST', source: '/app_user_id' });
    expect((await events(svc, 'type=UserRegistered')).some((event) => String(event.data.app_user_id).startsWith('lone'))).to.equal(false);
    await createUser(svc, 'surrogate-op');
    const withdraw = await svc.call('POST', '/users/surrogate-op/rewards/withdraw-credits', '{"key":"coins","amount":1,"operation_id":"op\\udc00"}');
    expect(withdraw.body.errors[0]).to.include({ code: 'BAD_REQUEST', source: '/operation_id' });
    expect((await svc.call('GET', '/users/bad%ED%A0%80')).status).to.equal(400);
  });

  it('refuses a JSON body whose bytes are not UTF-8 (400 BODY_INVALID) rather than storing U+FFFD, and writes nothing', async () => {
    const post = (body: Buffer, contentType = 'application/json') =>
      fetch(`${svc.url}/users`, { method: 'POST', headers: { 'x-api-key': CLIENT_KEY, 'content-type': contentType }, body });
    const invalid = Buffer.concat([Buffer.from('{"app_user_id":"u8","payment_customer_id":"a'), Buffer.from([0xff]), Buffer.from('b"}')]);
    for (const contentType of ['application/json', 'application/json; charset=utf-8']) {
      const response = await post(invalid, contentType);
      expect(response.status, contentType).to.equal(400);
      expect(((await response.json()) as { errors: { code: string }[] }).errors[0]!.code).to.equal('BODY_INVALID');
    }
    expect((await events(svc, 'type=UserRegistered')).some((event) => event.data.app_user_id === 'u8')).to.equal(false);
    // A real U+FFFD, sent as its UTF-8 bytes, is kept.
    expect((await post(Buffer.from('{"app_user_id":"u8","metadata":{"mark":"\uFFFD"}}'))).status).to.equal(201);
    expect((await getUser(svc, 'u8')).metadata).to.deep.equal({ mark: '\uFFFD' });
  });

  it('counts characters, not UTF-16 units, and refuses C1 control characters', async () => {
    const emoji = '😀'.repeat(128);
    expect((await svc.call('POST', '/users', { app_user_id: emoji })).status).to.equal(201);
    expect((await svc.call('POST', '/users', { app_user_id: `${emoji}😀` })).body.errors[0]).to.include({ code: 'BAD_REQUEST', source: '/app_user_id' });
    expect((await svc.call('POST', '/users', { app_user_id: 'c1\u0085x' })).body.errors[0]).to.include({ code: 'BAD_REQUEST', source: '/app_user_id' });
  });

  it('keeps metadata exactly as sent, "__proto__" keys included', async () => {
    const response = await svc.call('POST', '/users', '{"app_user_id":"proto","metadata":{"__proto__":{"x":1},"y":2}}');
    expect(response.status).to.equal(201);
    const user = await getUser(svc, 'proto');
    expect(Object.keys(user.metadata)).to.deep.equal(['__proto__', 'y']);
  });

  it('keeps metadata with an "$encrypted" key that is not an encrypted value\'s shape; refuses only that shape (400)', async () => {
    for (const [user, metadata] of [
      ['dollar-1', { $encrypted: 'hello' }],
      ['dollar-2', { $encrypted: 'pd1.a.b', note: 'two keys' }],
    ] as const) {
      expect((await svc.call('POST', '/users', { app_user_id: user, metadata })).status).to.equal(201);
      expect((await getUser(svc, user)).metadata).to.deep.equal(metadata);
    }
    const refused = await svc.call('POST', '/users', { app_user_id: 'dollar-3', metadata: { $encrypted: 'pd1.a.b.c.d' } });
    expect(refused.body.errors[0]).to.include({ status: 400, code: 'BAD_REQUEST', source: '/metadata' });
    expect((await svc.call('GET', '/users/dollar-3')).status).to.equal(404);
  });

  it('caps deactivation intervals at 100 years (400), so no expiry date can leave the calendar', async () => {
    const program = await svc.admin('PUT', '/admin/programs/far', {
      name: 'Far',
      distribution_percentage: 0,
      limit: 0,
      rewards: {
        sender: [
          {
            reward_key: 'coins',
            activation: { variant: 'claim', amount: 1, limit: 0 },
            deactivation: { variant: 'interval', duration: 10_000, period: 'years' },
          },
        ],
        receiver: [],
      },
    });
    expect(program.status).to.equal(400);
    expect(program.body.errors[0]).to.include({ code: 'BAD_REQUEST', source: '/rewards/sender/0/deactivation/duration' });
    await createUser(svc, 'far-grant');
    const grant = await svc.admin('POST', '/users/far-grant/rewards/grant', {
      key: 'coins',
      deactivation: { variant: 'interval', duration: 101, period: 'years' },
    });
    expect(grant.body.errors[0]).to.include({ code: 'BAD_REQUEST', source: '/deactivation/duration' });
    const longest = await svc.admin('POST', '/users/far-grant/rewards/grant', {
      key: 'coins',
      deactivation: { variant: 'interval', duration: 100, period: 'years' },
    });
    expect(longest.status).to.equal(201);
    expect(Date.parse(longest.body.data.rewards_granted.credit[0].expires_at) - svc.clock.now().getTime()).to.be.greaterThan(99 * YEAR);
  });

  it('400 (not 500) for oversized activation numbers, bad percent-encoding and corrupt compressed bodies', async () => {
    const huge = await svc.admin('PUT', '/admin/programs/huge', {
      name: 'Huge',
      distribution_percentage: 0,
      limit: 0,
      rewards: { sender: [{ reward_key: 'coins', activation: { variant: 'claim', amount: 1e12, limit: 0 }, deactivation: never }], receiver: [] },
    });
    expect(huge.body.errors[0]).to.include({ code: 'BAD_REQUEST', source: '/rewards/sender/0/activation/amount' });
    for (const path of ['/users/%FF', '/codes/%E0%A4%A']) {
      const response = await svc.call('GET', path);
      expect(response.status, path).to.equal(400);
      expect(response.body.errors[0].code).to.equal('BAD_REQUEST');
    }
    const corrupt = await fetch(`${svc.url}/users`, {
      method: 'POST',
      headers: { 'x-api-key': CLIENT_KEY, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: Buffer.concat([gzipSync(Buffer.from('{"app_user_id":"zip"}')).subarray(0, 12), Buffer.from('garbage')]),
    });
    expect(corrupt.status).to.equal(400);
    expect(((await corrupt.json()) as { errors: { code: string }[] }).errors[0]!.code).to.equal('BODY_INVALID');
  });

  it('checks the body of a POST that takes none (bad JSON 400, 415, 413), as its OpenAPI operation declares', async () => {
    const secret = (headers: Record<string, string> = {}) => ({ 'x-api-key': SECRET_KEY, ...headers });
    // Each answer is validated against /openapi.json by the test service: an undeclared one throws.
    const notJson = await svc.call('POST', '/admin/reviews/nope/approve', 'x', secret());
    expect(notJson.status).to.equal(400);
    expect(notJson.body.errors[0].code).to.equal('BODY_INVALID');
    const text = await svc.call('POST', '/admin/reviews/nope/reject', 'hello', secret({ 'content-type': 'text/plain' }));
    expect(text.status).to.equal(415);
    const large = await svc.call('POST', '/admin/reviews/nope/approve', JSON.stringify({ blob: 'x'.repeat(70_000) }), secret());
    expect(large.status).to.equal(413);
    // JSON that is not an object is refused before anything is looked up (the review would not be found here).
    for (const body of ['[]', '"x"', '1', 'null']) {
      for (const path of ['/admin/reviews/nope/approve', '/admin/reviews/nope/reject', '/admin/webhooks/nope/ping']) {
        const refused = await svc.call('POST', path, body, secret());
        expect(refused.body.errors[0], `${path} ${body}`).to.include({ status: 400, code: 'BODY_INVALID' });
      }
    }
    // An object, or no body at all, is what they take.
    expect((await svc.call('POST', '/admin/reviews/nope/approve', '{}', secret())).status).to.equal(404);
    expect((await svc.call('POST', '/admin/reviews/nope/approve', undefined, secret())).status).to.equal(404);
  });

  it('takes a body of exactly 64 KiB and refuses one byte more with 413 (SPEC §1: over 64 KiB)', async () => {
    const sized = (user: string, bytes: number) => {
      const bare = JSON.stringify({ app_user_id: user, pad: '' });
      return JSON.stringify({ app_user_id: user, pad: ' '.repeat(bytes - Buffer.byteLength(bare)) });
    };
    const exact = sized('edge-64k', 65_536);
    expect(Buffer.byteLength(exact)).to.equal(65_536);
    expect((await svc.call('POST', '/users', exact)).status).to.equal(201);
    const over = await svc.call('POST', '/users', sized('edge-64k-over', 65_537));
    expect(over.body.errors[0]).to.include({ status: 413, code: 'BODY_TOO_LARGE' });
  });

  it('checks the body of a DELETE as any other (SPEC §1: 415, 413, BODY_INVALID), and erases nothing when it refuses one', async () => {
    await createUser(svc, 'del-body', { metadata: { keep: true } });
    const secret = (headers: Record<string, string> = {}) => ({ 'x-api-key': SECRET_KEY, ...headers });
    const text = await svc.call('DELETE', '/admin/users/del-body', 'hello', secret({ 'content-type': 'text/plain' }));
    expect(text.body.errors[0]).to.include({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', source: 'header:content-type' });
    const large = await svc.call('DELETE', '/admin/users/del-body', JSON.stringify({ blob: 'x'.repeat(70_000) }), secret());
    expect(large.body.errors[0]).to.include({ status: 413, code: 'BODY_TOO_LARGE' });
    for (const body of ['[1]', '{"a":', 'null']) {
      expect((await svc.call('DELETE', '/admin/users/del-body', body, secret())).body.errors[0], body).to.include({ status: 400, code: 'BODY_INVALID' });
    }
    const erasures = async () => (await events(svc, 'type=UserErased')).filter((event) => event.stream === 'user-del-body').length;
    expect(await erasures()).to.equal(0);
    expect((await getUser(svc, 'del-body')).metadata).to.deep.equal({ keep: true });
    // An object, or no body at all, is what it takes.
    expect((await svc.call('DELETE', '/admin/users/del-body', '{}', secret())).status).to.equal(204);
    expect(await erasures()).to.equal(1);
  });

  it('reads a body named as UTF-8 by another of its names, or as US-ASCII, as UTF-8; any other charset is 415 (RFC 8259 §8.1)', async () => {
    for (const [index, charset] of ['charset=utf8', 'charset=UTF-8', 'charset=us-ascii', 'charset=ASCII', 'charset = utf8', 'charset="utf-8"'].entries()) {
      const user = `charset-${index}`;
      const response = await svc.call('POST', '/users', { app_user_id: user, metadata: { name: 'Zoë' } }, { 'content-type': `application/json; ${charset}` });
      expect(response.status, charset).to.equal(201);
      expect((await getUser(svc, user)).metadata, charset).to.deep.equal({ name: 'Zoë' });
    }
    // Spaces around `=` are read as the body reader reads them (it saw latin1 where another parser saw no charset).
    for (const charset of [
      'charset=utf-16',
      'charset=utf-16le',
      'charset=iso-8859-1',
      'charset=bogus',
      'charset = latin1',
      'charset = utf-16le',
      'charset="latin1"',
    ]) {
      const refused = await svc.call('POST', '/users', { app_user_id: 'charset-no' }, { 'content-type': `application/json; ${charset}` });
      expect(refused.body.errors[0], charset).to.include({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', source: 'header:content-type' });
    }
    expect((await svc.call('GET', '/users/charset-no')).status).to.equal(404);
  });

  it('refuses a number too small for a double, which would read back as 0 (400, where it is), and writes nothing', async () => {
    for (const [text, source] of [
      ['{"app_user_id":"tiny","metadata":{"x":1e-400}}', '/metadata/x'],
      ['{"app_user_id":"tiny","metadata":{"list":[0,-2.5E-999]}}', '/metadata/list/1'],
      [`{"app_user_id":"tiny","metadata":{"x":0.${'0'.repeat(290)}1e-40}}`, '/metadata/x'],
      ['\uFEFF{"app_user_id":"tiny","metadata":{"x":1e-400}}', '/metadata/x'],
      [`{"app_user_id":"tiny","metadata":{"x":0.${'0'.repeat(400)}1}}`, '/metadata/x'],
    ] as const) {
      expect((await svc.call('POST', '/users', text)).body.errors[0], text.slice(0, 60)).to.include({ status: 400, code: 'BAD_REQUEST', source });
    }
    expect((await svc.call('GET', '/users/tiny')).status).to.equal(404);
    // A body that is not an object is BODY_INVALID first, whatever it holds.
    expect((await svc.call('POST', '/users', '[1e-400]')).body.errors[0]).to.include({ status: 400, code: 'BODY_INVALID' });
    // Zero written any way, and the smallest numbers a double holds, are kept.
    const kept = await svc.call('POST', '/users', '{"app_user_id":"tiny","metadata":{"a":0e-400,"b":-0,"c":0.000,"d":5e-324,"e":1e-300}}');
    expect(kept.status).to.equal(201);
    expect((await getUser(svc, 'tiny')).metadata).to.deep.equal({ a: 0, b: 0, c: 0, d: 5e-324, e: 1e-300 });
  });

  describe('inbound notifications, every provider configured', () => {
    // A provider that is off answers 404 before its body is looked at (test/api/revenue-stripe-revenuecat.test.ts).
    let providers: TestService;
    before(async () => {
      const chain = makeAppleTestChain();
      providers = await startTestService({
        env: {
          STRIPE_WEBHOOK_SECRET: STRIPE_SECRET,
          REVENUECAT_WEBHOOK_AUTH: REVENUECAT_AUTH,
          APPLE_ROOT_CERTS: chain.rootPath,
          APPLE_BUNDLE_ID: BUNDLE_ID,
          APPLE_ENVIRONMENT: 'Sandbox',
          GOOGLE_PLAY_PACKAGE_NAME: 'com.example.referrals',
          GOOGLE_PLAY_PUSH_TOKEN: 'shared-secret-token',
        },
      });
    });
    after(async () => providers.stop());

    it('answers an inbound notification in an unsupported content-encoding or not sent as JSON 415, as its operation declares', async () => {
      for (const provider of ['stripe', 'revenuecat', 'app-store', 'google-play']) {
        const response = await providers.call('POST', `/webhooks/${provider}`, '{}', { 'content-type': 'application/json', 'content-encoding': 'x-foo' });
        expect(response.status, provider).to.equal(415);
        expect(response.body.errors[0]).to.include({ code: 'UNSUPPORTED_MEDIA_TYPE', source: 'header:content-encoding' });
        for (const contentType of ['text/plain', 'application/x-www-form-urlencoded']) {
          const notJson = await providers.call('POST', `/webhooks/${provider}`, '{}', { 'content-type': contentType });
          expect(notJson.body.errors[0], `${provider} ${contentType}`).to.include({
            status: 415,
            code: 'UNSUPPORTED_MEDIA_TYPE',
            source: 'header:content-type',
          });
        }
      }
    });

    it('answers an inbound notification in another charset 415 and one whose bytes are not UTF-8 400 BODY_INVALID, as the rest of the API', async () => {
      for (const provider of ['stripe', 'revenuecat', 'app-store', 'google-play']) {
        for (const charset of ['iso-8859-1', 'utf-16']) {
          const other = await providers.call('POST', `/webhooks/${provider}`, '{}', { 'content-type': `application/json; charset=${charset}` });
          expect(other.body.errors[0], `${provider} ${charset}`).to.include({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', source: 'header:content-type' });
        }
        const notUtf8 = await fetch(`${providers.url}/webhooks/${provider}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]), // {"a":"\xff"}
        });
        expect(notUtf8.status, provider).to.equal(400);
        expect(((await notUtf8.json()) as { errors: { code: string }[] }).errors[0]!.code).to.equal('BODY_INVALID');
        for (const charset of ['UTF-8', 'utf8', 'us-ascii']) {
          const utf8 = await providers.call('POST', `/webhooks/${provider}`, '{}', { 'content-type': `application/json; charset=${charset}` });
          expect(utf8.status, `${provider} ${charset}`).to.not.be.oneOf([400, 415]);
        }
      }
    });
  });

  it('answers a known path asked with another method 405 with its Allow header, whatever key is sent (none, client, secret)', async () => {
    for (const [method, path, allow] of [
      ['PATCH', '/admin/rewards', 'GET'],
      ['DELETE', '/users/ann', 'GET'],
      ['PUT', '/users/ann/claim-code', 'POST'],
      ['POST', '/admin/webhooks/inbound', 'GET'],
      // A parameter that is not validly percent-encoded does not hide the path.
      ['PATCH', '/users/%zz', 'GET'],
      ['GET', '/admin/webhooks/x/deliveries/%E0%A4%A/redeliver', 'POST'],
    ] as const) {
      for (const key of [null, CLIENT_KEY, SECRET_KEY]) {
        const response = await fetch(`${svc.url}${path}`, { method, headers: key ? { 'x-api-key': key } : {} });
        expect(response.status, `${method} ${path} ${key}`).to.equal(405);
        expect(response.headers.get('allow'), `${method} ${path}`).to.equal(allow);
        expect(((await response.json()) as { errors: { code: string }[] }).errors[0]!.code).to.equal('METHOD_NOT_ALLOWED');
      }
    }
    // A method the path has still needs its key.
    expect((await fetch(`${svc.url}/admin/rewards`)).status).to.equal(401);
    expect((await fetch(`${svc.url}/admin/rewards`, { headers: { 'x-api-key': CLIENT_KEY } })).status).to.equal(403);
  });

  it('answers a method Node does not know (FOO) as any other method: 405 with Allow on a known path, 404 on an unknown one', async () => {
    const raw = async (request: string) => {
      const socket = net.connect(Number(new URL(svc.url).port), '127.0.0.1');
      socket.end(request);
      const chunks: Buffer[] = [];
      for await (const chunk of socket) chunks.push(chunk as Buffer);
      const [head, body] = Buffer.concat(chunks).toString('utf8').split('\r\n\r\n') as [string, string];
      return { status: Number(head.split(' ')[1]), head, body: JSON.parse(body) as { errors: { code: string; status: number }[] } };
    };
    for (const [request, status, code, allow] of [
      [`FOO /users/ann HTTP/1.1\r\nhost: x\r\nx-api-key: ${CLIENT_KEY}\r\n\r\n`, 405, 'METHOD_NOT_ALLOWED', 'GET'],
      ['BREW /admin/rewards?limit=1 HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}', 405, 'METHOD_NOT_ALLOWED', 'GET'],
      ['FOO /users/ann/claim-code HTTP/1.1\r\nhost: x\r\n\r\n', 405, 'METHOD_NOT_ALLOWED', 'POST'],
      // Without the Host header HTTP/1.1 requires: 400 in the API's shape, not Node's bare one.
      ['GET /users/ann HTTP/1.1\r\nx-api-key: x\r\n\r\n', 400, 'BAD_REQUEST', null],
      // More than one Host line, or a Host that is no host (RFC 9112 §3.2: 400; security probe).
      ['GET /healthz HTTP/1.1\r\nhost: a\r\nhost: b\r\n\r\n', 400, 'BAD_REQUEST', null],
      ['GET /healthz HTTP/1.1\r\nhost: a b/<x>@c\r\n\r\n', 400, 'BAD_REQUEST', null],
      ['GET /healthz HTTP/1.1\r\nhost: a:80x\r\n\r\n', 400, 'BAD_REQUEST', null],
      ['FOO /nope HTTP/1.1\r\nhost: x\r\n\r\n', 404, 'PATH_ERROR', null],
    ] as const) {
      const answer = await raw(request);
      expect(answer.status, request).to.equal(status);
      expect(answer.body.errors[0], request).to.include({ status, code });
      expect(answer.head, request).to.match(/^x-request-id: [0-9a-f-]{36}$/m);
      if (allow) expect(answer.head, request).to.match(new RegExp(`^allow: ${allow}$`, 'im'));
    }
    for (const host of ['x', 'api.example.com:8080', '127.0.0.1:1', '[::1]:8080', '']) {
      expect((await raw(`GET /healthz HTTP/1.1\r\nhost: ${host}\r\n\r\n`)).status, host).to.equal(200);
    }
    expect((await fetch(`${svc.url}/healthz`)).status).to.equal(200);
  });

  it('answers every request it writes for: a whole POST then a half-close, a pipelined POST before a malformed request, CONNECT', async () => {
    const send = async (request: string, end: boolean) => {
      const socket = net.connect(Number(new URL(svc.url).port), '127.0.0.1');
      if (end) socket.end(request);
      else socket.write(request);
      const chunks: Buffer[] = [];
      for await (const chunk of socket) chunks.push(chunk as Buffer);
      return [
        ...Buffer.concat(chunks)
          .toString('utf8')
          .matchAll(/HTTP\/1\.1 (\d{3})[^\r]*\r\n(?:[^\r]+\r\n)*?x-request-id: ([^\r]+)/g),
      ].map((m) => [Number(m[1]), m[2]]);
    };
    const post = (id: string) =>
      `POST /users HTTP/1.1\r\nhost: x\r\nx-api-key: ${CLIENT_KEY}\r\nx-request-id: ${id}\r\ncontent-type: application/json\r\ncontent-length: ${18 + id.length}\r\n\r\n{"app_user_id":"${id}"}`;
    expect(await send(post('half-closed'), true)).to.deep.equal([[201, 'half-closed']]);
    const pipelined = await send(`${post('pipelined')}GET /bad path HTTP/1.1\r\n\r\n`, false);
    expect(pipelined.map(([status]) => status)).to.deep.equal([201, 400]);
    expect(pipelined[0]![1]).to.equal('pipelined');
    expect(await send(`CONNECT /users HTTP/1.1\r\nhost: x\r\nx-request-id: tunnel\r\n\r\n`, false)).to.deep.equal([[405, 'tunnel']]);
    // Whole writes pipelined before a request whose body never comes get their own answers; that one gets the 400.
    const cut = `POST /users HTTP/1.1\r\nhost: x\r\nx-api-key: ${CLIENT_KEY}\r\nx-request-id: cut\r\ncontent-type: application/json\r\ncontent-length: 50\r\n\r\n{"app_user_id":"c`;
    expect(await send(`${post('piped-1')}${post('piped-2')}${cut}`, true)).to.deep.equal([
      [201, 'piped-1'],
      [201, 'piped-2'],
      [400, 'cut'],
    ]);
    for (const id of ['half-closed', 'pipelined', 'piped-1', 'piped-2']) expect((await svc.call('GET', `/users/${id}`)).status, id).to.equal(200);
  });

  it('answers a body announced over its limit 413 at once, without reading it, and closes the connection', async () => {
    for (const [path, key, length] of [
      ['/users', CLIENT_KEY, 1_000_000_000],
      ['/admin/rewards/coins/codes', SECRET_KEY, 5 * 1024 * 1024],
    ] as const) {
      const socket = net.connect(Number(new URL(svc.url).port), '127.0.0.1');
      // Only the head and a few bytes of the body are ever sent: an answer means it did not wait for the rest.
      socket.write(`POST ${path} HTTP/1.1\r\nhost: x\r\nx-api-key: ${key}\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n{"a":`);
      const chunks: Buffer[] = [];
      for await (const chunk of socket) chunks.push(chunk as Buffer);
      const [head, body] = Buffer.concat(chunks).toString('utf8').split('\r\n\r\n') as [string, string];
      expect(head.split('\r\n')[0], path).to.equal('HTTP/1.1 413 Payload Too Large');
      expect(head).to.match(/^connection: close$/im);
      expect(JSON.parse(body).errors[0]).to.include({ status: 413, code: 'BODY_TOO_LARGE' });
    }
  });

  it('answers a body cut short of its content-length 400 BODY_INVALID (could not be read completely), and writes nothing', async () => {
    const socket = net.connect(Number(new URL(svc.url).port), '127.0.0.1');
    socket.end(
      `POST /users HTTP/1.1\r\nhost: x\r\nx-api-key: ${CLIENT_KEY}\r\ncontent-type: application/json\r\ncontent-length: 50\r\n\r\n{"app_user_id":"cut-short"`,
    );
    const chunks: Buffer[] = [];
    for await (const chunk of socket) chunks.push(chunk as Buffer);
    const [head, body] = Buffer.concat(chunks).toString('utf8').split('\r\n\r\n') as [string, string];
    expect(head.split('\r\n')[0]).to.equal('HTTP/1.1 400 Bad Request');
    expect(head).to.match(/^x-request-id: [0-9a-f-]{36}$/m);
    expect(JSON.parse(body).errors[0]).to.include({ status: 400, code: 'BODY_INVALID', source: null });
    expect((await svc.call('GET', '/users/cut-short')).status).to.equal(404);
    expect((await fetch(`${svc.url}/healthz`)).status).to.equal(200);
  });

  it('answers an unknown path 404 PATH_ERROR before reading its body or key (SPEC §1): never 400 or 415', async () => {
    for (const [path, type, body] of [
      ['/nope', 'application/json', '{'],
      ['/nope', 'text/plain', 'hi'],
      ['/users/ann/nope', 'application/json', '['.repeat(40)],
      ['/admin/nope', 'application/json', '{'],
    ] as const) {
      for (const key of [null, CLIENT_KEY, SECRET_KEY]) {
        const headers: Record<string, string> = { 'content-type': type, ...(key ? { 'x-api-key': key } : {}) };
        const response = await fetch(`${svc.url}${path}`, { method: 'POST', headers, body });
        expect(response.status, `${path} ${type} ${key}`).to.equal(404);
        expect(((await response.json()) as { errors: { code: string }[] }).errors[0]!.code).to.equal('PATH_ERROR');
      }
    }
  });

  it('answers a path whose parameter is empty 404 PATH_ERROR, which every operation with a path parameter declares', async () => {
    for (const [method, path] of [
      ['GET', '/users//claim-code'],
      ['PUT', '/admin/rewards/'],
      ['GET', '/codes/'],
      ['POST', '/users//rewards/withdraw-credits'],
    ] as const) {
      const response = await fetch(`${svc.url}${path}`, {
        method,
        headers: { 'x-api-key': SECRET_KEY, 'content-type': 'application/json' },
        body: method === 'GET' ? null : '{}',
      });
      expect(response.status, `${method} ${path}`).to.equal(404);
      expect(((await response.json()) as { errors: { code: string }[] }).errors[0]!.code).to.equal('PATH_ERROR');
    }
    const document = (await (await fetch(`${svc.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { content: { 'application/json': { schema: unknown } } }> }>>;
    };
    const undeclared = Object.entries(document.paths)
      .filter(([path]) => path.includes('{'))
      .flatMap(([path, operations]) =>
        Object.entries(operations)
          .filter(([, operation]) => !JSON.stringify(operation.responses['404']?.content['application/json'].schema ?? {}).includes('"PATH_ERROR"'))
          .map(([method]) => `${method} ${path}`),
      );
    expect(undeclared).to.deep.equal([]);
  });

  it('takes every request its document allows, however it is percent-encoded; one past 64 KiB of headers, or not HTTP, is a 400 in the API shape', async () => {
    // 1,400 emoji in `type` (allowed by its 2,000-character limit) are 16.8 KiB percent-encoded: past Node's default 16 KiB.
    const emoji = encodeURIComponent('\u{1F600}'.repeat(1400));
    const long = await fetch(`${svc.url}/admin/events?type=${emoji}&stream_prefix=${encodeURIComponent('\u{1F600}'.repeat(300))}`, {
      headers: { 'x-api-key': SECRET_KEY },
    });
    expect(long.status).to.equal(400);
    expect(((await long.json()) as { errors: { source: string }[] }).errors[0]!.source).to.equal('query:/type/0');
    const raw = async (request: string) => {
      const { port } = new URL(svc.url);
      const socket = net.connect(Number(port), '127.0.0.1');
      socket.end(request);
      const chunks: Buffer[] = [];
      for await (const chunk of socket) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    };
    for (const request of [`GET /users/x HTTP/1.1\r\nhost: x\r\nx-pad: ${'a'.repeat(70 * 1024)}\r\n\r\n`, 'NOT HTTP AT ALL\r\n\r\n']) {
      const answer = await raw(request);
      const [head, body] = answer.split('\r\n\r\n') as [string, string];
      expect(head.split('\r\n')[0]).to.equal('HTTP/1.1 400 Bad Request');
      expect(head).to.match(/^x-request-id: [0-9a-f-]{36}$/m);
      expect(JSON.parse(body).errors[0]).to.include({ status: 400, code: 'BAD_REQUEST', source: null });
    }
    // Any operation can get that 400, so every operation declares it.
    const document = (await (await fetch(`${svc.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, { responses: object }>> };
    const undeclared = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) => !('400' in operation.responses))
        .map(([method]) => `${method} ${path}`),
    );
    expect(undeclared).to.deep.equal([]);
    expect((await fetch(`${svc.url}/healthz`)).status).to.equal(200);
  });

  it('ignores bodies on GET, and names the header on every 415', async () => {
    const withBody = await fetch(`${svc.url}/users/proto`, {
      method: 'GET',
      headers: { 'x-api-key': CLIENT_KEY, 'content-type': 'text/plain', 'content-length': '5' },
      body: undefined,
    });
    expect(withBody.status).to.equal(200);
    const charset = await svc.call('POST', '/users', { app_user_id: 'cs' }, { 'content-type': 'application/json; charset=bogus' });
    expect(charset.status).to.equal(415);
    expect(charset.body.errors[0]).to.include({ code: 'UNSUPPORTED_MEDIA_TYPE', source: 'header:content-type' });
  });

  it('answers JSON whatever Accept asks for (RFC 9110 §12.5.1: disregarded, never 406), errors included', async () => {
    await createUser(svc, 'accepts-anything');
    for (const accept of ['application/xml', 'text/html', 'text/plain;q=1, application/json;q=0', 'image/*']) {
      const found = await svc.call('GET', '/users/accepts-anything', undefined, { accept });
      expect(found.status, accept).to.equal(200);
      expect(found.headers.get('content-type'), accept).to.match(/^application\/json/);
      expect(found.body.data.user.app_user_id).to.equal('accepts-anything');
      const created = await svc.call('POST', '/users', { app_user_id: 'accepts-anything' }, { accept });
      expect(created.status, accept).to.equal(200);
      const missing = await svc.call('GET', '/users/nobody-here', undefined, { accept });
      expect(missing.status, accept).to.equal(404);
      expect(missing.headers.get('content-type'), accept).to.match(/^application\/json/);
      expect(missing.body.errors[0].code).to.equal('NOT_FOUND.USER');
    }
  });

  it('a manual grant of an active offer code adds nothing (200); a repeated operation_id answers 200', async () => {
    await createUser(svc, 'offer-holder');
    expect((await svc.admin('POST', '/users/offer-holder/rewards/grant', { key: 'offer' })).status).to.equal(201);
    const again = await svc.admin('POST', '/users/offer-holder/rewards/grant', { key: 'offer' });
    expect(again.status).to.equal(200);
    expect(again.body.data.rewards_granted.offer_code).to.deep.equal([]);
    const first = await svc.admin('POST', '/users/offer-holder/rewards/grant', { key: 'coins', operation_id: 'g-1' });
    const repeats = await Promise.all(
      Array.from({ length: 20 }, () => svc.admin('POST', '/users/offer-holder/rewards/grant', { key: 'coins', operation_id: 'g-1' })),
    );
    expect(first.status).to.equal(201);
    expect(repeats.every((repeat) => repeat.status === 200)).to.equal(true);
    expect(repeats[0]!.body.data.rewards_granted).to.deep.equal(first.body.data.rewards_granted);
    expect((await getUser(svc, 'offer-holder')).rewards.active.credit).to.have.length(1);
  });

  it("a claim's rewards_granted lists its claim rewards, not the conversion rewards granted with it", async () => {
    await putReward(svc, 'pass', { kind: 'basic', name: 'Pass' });
    await putPromo(svc, 'BOTH', {
      rewards: [
        { reward_key: 'pass', activation: { variant: 'claim' }, deactivation: never },
        { reward_key: 'coins', activation: { variant: 'conversion' }, deactivation: never },
      ],
    });
    await createUser(svc, 'premium-claimer', { is_premium: true, is_trial: false });
    const response = await svc.call('POST', '/users/premium-claimer/claim-code', { code: 'BOTH' });
    expect(response.body.data.rewards_granted.basic).to.have.length(1);
    expect(response.body.data.rewards_granted.credit).to.deep.equal([]);
    expect(response.body.data.user.rewards.active.credit).to.have.length(1);
  });

  it('a read model the store refuses is held and reported by /readyz while the others go on; it recovers', async () => {
    faults.mode = 'broken';
    faults.when = (method, args) => method === 'commitBatches' && (args[0] as ProjectorBatch[]).some((batch) => batch.projector === 'codes');
    const user = await createUser(svc, 'held');
    expect(user.app_user_id).to.equal('held');
    const report = await eventually(async () => {
      const response = await svc.call('GET', '/readyz');
      expect(response.status).to.equal(503);
      return response.body.data;
    });
    const codes = report.projections.find((projection: { name: string }) => projection.name === 'codes');
    expect(codes.failure.error).to.contain('injected');
    expect(report.projections.find((projection: { name: string }) => projection.name === 'users').failure).to.equal(null);
    // Each projection's lag is counted from its own checkpoint (the log is read once per checkpoint).
    await eventually(async () => {
      const lags = new Map(((await svc.call('GET', '/readyz')).body.data.projections as { name: string; lag: number }[]).map((p) => [p.name, p.lag]));
      expect(lags.get('users')).to.equal(0);
      expect(lags.get('codes')).to.be.greaterThan(0);
    });
    // The same in /metrics, which operators alert on (README, Metrics).
    const metrics = await (await fetch(`${svc.url}/metrics`)).text();
    const gauge = (name: string, projection: string) => Number(new RegExp(`^${name}\\{projection="${projection}"\\} (\\d+)$`, 'm').exec(metrics)?.[1]);
    expect([gauge('projection_failing', 'codes'), gauge('projection_failing', 'users')]).to.deep.equal([1, 0]);
    expect(gauge('projection_lag_positions', 'codes')).to.be.greaterThan(0);
    expect(gauge('projection_lag_positions', 'users')).to.equal(0);
    expect((await getUser(svc, 'held')).app_user_id).to.equal('held');
    faults.mode = 'ok';
    await eventually(async () => expect(await ready()).to.equal(true));
  });

  it('a command whose user the read models cannot show answers 503 (retry); the write is kept and shows up once they recover', async () => {
    faults.mode = 'broken';
    faults.when = (method, args) => method === 'commitBatches' && (args[0] as ProjectorBatch[]).some((batch) => batch.projector === 'users');
    const response = await svc.call('POST', '/users', { app_user_id: 'lagging', is_premium: true });
    expect(response.status).to.equal(503);
    expect(response.body.errors[0].code).to.equal('SERVICE_UNAVAILABLE');
    faults.mode = 'ok';
    await eventually(async () => expect((await getUser(svc, 'lagging')).is_premium).to.equal(true));
  });
});

describe('API: while the read models catch up with the log, commands are refused before they run', () => {
  const metadata = { correlation_id: 'test', causation_id: 'test', actor: 'test', schema_version: 1 };
  /** A backlog past the guard's floor (1,000 events), appended straight to the log. */
  async function backlog(svc: TestService, stream: string) {
    const log = svc.service.container.resolve<EventStore>(TOKENS.EventStore);
    const deleted = Array.from({ length: CATCH_UP_MIN_LAG + 1 }, (_, i) => ({
      id: randomUUID(),
      type: 'WebhookEndpointDeleted',
      data: { id: `${stream}-${i}`, deleted_at: new Date().toISOString() },
      metadata,
    }));
    await log.append(stream, deleted, 'no_stream');
  }

  it('503 SERVICE_UNAVAILABLE with Retry-After and nothing written; reads still answer; commands run once the read models catch up', async () => {
    const faults = new FaultSwitch();
    const svc = await startTestService({ backend: faultyBackend(faults), env: { READY_MAX_LAG: '3' } });
    try {
      await putReward(svc, 'coins', { kind: 'credit', name: 'Coins', credits: 5 });
      await createUser(svc, 'ann');
      // The projector is held (every commit refused, as on a slow disk) while a backlog reaches the log.
      faults.mode = 'unavailable';
      faults.when = (method) => method === 'commitBatches';
      await backlog(svc, 'webhook-gone');
      await eventually(async () => expect((await svc.call('GET', '/readyz')).status).to.equal(503));
      // The guard's verdict is at most VERDICT_MS old: a command that writes nothing either way shows when it has turned.
      await eventually(async () => expect((await svc.call('POST', '/users/nobody/claim-code', { code: 'ZZZZZZ' })).status).to.equal(503));
      const before = await events(svc, 'stream_prefix=user-');

      const grant = await svc.admin('POST', '/users/ann/rewards/grant', { key: 'coins' });
      expect(grant.status).to.equal(503);
      expect(grant.headers.get('retry-after')).to.equal('5');
      expect(grant.body.errors[0]).to.include({ code: 'SERVICE_UNAVAILABLE', status: 503, source: null });
      expect(grant.body.errors[0].message).to.contain('catching up with its event log');
      for (const [method, path, body] of [
        ['POST', '/users', { app_user_id: 'bob' }],
        ['POST', '/users/ann/rewards/withdraw-credits', { key: 'coins', amount: 1 }],
        ['POST', '/users/ann/claim-code', { code: 'ZZZZZZ' }],
      ] as const) {
        expect((await svc.call(method, path, body)).status, path).to.equal(503);
      }
      // Nothing was written, and reads answer from the read models as they stand.
      expect(await events(svc, 'stream_prefix=user-')).to.deep.equal(before);
      expect((await svc.call('GET', '/users/ann')).status).to.equal(200);

      faults.mode = 'ok';
      await eventually(async () => expect((await svc.admin('POST', '/users/ann/rewards/grant', { key: 'coins' })).status).to.equal(201));
      expect((await getUser(svc, 'ann')).rewards.active.credit.map((entry: { credits: number }) => entry.credits)).to.deep.equal([5]);
    } finally {
      await svc.stop();
    }
  });

  it('a read model held at a failing batch does not stop commands, however far behind it falls; nor does a small READY_MAX_LAG', async () => {
    const faults = new FaultSwitch();
    const svc = await startTestService({ backend: faultyBackend(faults), env: { READY_MAX_LAG: '0' } });
    try {
      faults.mode = 'broken';
      faults.when = (method, args) => method === 'commitBatches' && (args[0] as ProjectorBatch[]).some((batch) => batch.projector === 'webhooks');
      await backlog(svc, 'webhook-held');
      await eventually(async () => {
        const response = await svc.call('GET', '/readyz');
        expect(response.status).to.equal(503);
        const lagOf = (name: string) => response.body.data.projections.find((projection: { name: string }) => projection.name === name);
        expect(lagOf('webhooks').failure).to.not.equal(null);
        expect(lagOf('webhooks').lag).to.equal('>0');
        expect(lagOf('users').lag).to.equal(0);
      });
      // The other read models are at the head: commands run, though /readyz is 503 (READY_MAX_LAG 0, one held).
      for (let i = 0; i < 2; i++) expect((await svc.call('POST', '/users', { app_user_id: `still-${i}` })).status).to.equal(201);
      // Read-your-writes does not wait for the held one: the head counts as reached at once.
      const head = (await svc.service.container.resolve<EventStore>(TOKENS.EventStore).headPosition())!;
      expect(await svc.service.container.resolve<ReadConsistency>(TOKENS.ReadConsistency).waitFor(head, 0)).to.equal(true);
      expect(await svc.service.container.resolve<ReadConsistency>(TOKENS.ReadConsistency).waitFor(head, 0, 'webhooks')).to.equal(false);
    } finally {
      await svc.stop();
    }
  });
});
