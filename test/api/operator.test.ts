import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { pino } from 'pino';
import { type EventStore, StoreUnavailableError, WrongExpectedRevisionError } from '../../src/ports/event-store.js';
import { TOKENS } from '../../src/ports/tokens.js';
import { createUser } from '../support/fixtures.js';
import { startTestService, type TestService } from '../support/test-service.js';

describe('API: operator endpoints (no key needed)', () => {
  let svc: TestService;

  before(async () => {
    svc = await startTestService();
    await createUser(svc, 'operated');
  });
  after(async () => svc.stop());

  it('GET /healthz answers while the process is alive', async () => {
    const response = await svc.call('GET', '/healthz', undefined, { 'x-api-key': '' });
    expect(response.status).to.equal(200);
    expect(response.body).to.deep.equal({ data: { status: 'ok' } });
  });

  it('GET /readyz reports every projection caught up, with detail', async () => {
    const response = await svc.call('GET', '/readyz', undefined, { 'x-api-key': '' });
    expect(response.status).to.equal(200);
    expect(response.body.data.ready).to.equal(true);
    const names = response.body.data.projections.map((projection: { name: string }) => projection.name);
    expect(names).to.include.members(['users', 'codes', 'catalog', 'credit_ledger']);
    for (const projection of response.body.data.projections) {
      expect(projection).to.include({ caught_up: true, needs_replay: false, failure: null });
    }
  });

  it('GET /metrics is Prometheus text with requests, latencies, appends and projection lag', async () => {
    await svc.admin('GET', '/admin/rewards/missing');
    const response = await fetch(`${svc.url}/metrics`);
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.match(/^text\/plain/);
    const text = await response.text();
    expect(text).to.match(/^http_requests_total\{method="POST",route="\/users",status="201"\} \d+/m);
    expect(text).to.contain('http_request_duration_seconds_bucket');
    expect(text).to.match(/^http_requests_total\{method="GET",route="\/admin\/rewards\/:key",status="404"\} 1/m);
    expect(text).to.match(/^events_appended_total\{type="UserRegistered"\} \d+/m);
    expect(text).to.match(/^projection_lag_positions\{projection="users"\} 0/m);
    expect(text).to.contain('projection_failing');
  });

  it('labels the files the console and /docs serve by their mount in /metrics and the access log, with the path as asked (newcomer probe: `unmatched` with status 200 and path `/main.js`)', async () => {
    const lines: string[] = [];
    const logged = await startTestService({ logger: pino({ level: 'info' }, { write: (line: string) => lines.push(line) }) });
    try {
      expect((await fetch(`${logged.url}/console/assets/main.js`)).status).to.equal(200);
      expect((await fetch(`${logged.url}/docs/swagger-ui.css`)).status).to.equal(200);
      expect((await fetch(`${logged.url}/console/assets/nope.js`)).status).to.equal(404);
      expect((await fetch(`${logged.url}/console/assets/main.js`, { method: 'POST' })).status).to.equal(405);
      const text = await (await fetch(`${logged.url}/metrics`)).text();
      expect(text).to.match(/^http_requests_total\{method="GET",route="\/console\/assets\/\*",status="200"\} 1$/m);
      expect(text).to.match(/^http_requests_total\{method="GET",route="\/docs\/\*",status="200"\} 1$/m);
      expect(text).to.not.match(/route="unmatched",status="200"/);
      // An unknown file the mount passes on is a path the service does not know (review).
      expect(text).to.match(/^http_requests_total\{method="GET",route="unmatched",status="404"\} 1$/m);
      const requests = lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'request' && /^\/(console|docs)\//.test(line.path));
      expect(requests.map(({ path, route, status }) => ({ path, route, status }))).to.deep.equal([
        { path: '/console/assets/main.js', route: '/console/assets/*', status: 200 },
        { path: '/docs/swagger-ui.css', route: '/docs/*', status: 200 },
        { path: '/console/assets/nope.js', route: 'unmatched', status: 404 },
        { path: '/console/assets/main.js', route: '/console/assets/*', status: 405 },
      ]);
    } finally {
      await logged.stop();
    }
  });

  it('GET /metrics counts every append refused for a revision conflict (append_conflicts_total)', async () => {
    const conflicts = async () => Number(/^append_conflicts_total (\d+)$/m.exec(await (await fetch(`${svc.url}/metrics`)).text())?.[1]);
    const before = await conflicts();
    const store = svc.service.container.resolve<EventStore>(TOKENS.EventStore);
    const metadata = { correlation_id: 'test', causation_id: 'test', actor: 'test', schema_version: 1 };
    const deleted = () => ({ id: randomUUID(), type: 'WebhookEndpointDeleted', data: { id: 'conflicted', deleted_at: new Date().toISOString() }, metadata });
    await store.append('webhook-conflicted', [deleted()], 'no_stream');
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const refused = await store.append('webhook-conflicted', [deleted()], 'no_stream').then(
        () => null,
        (error: unknown) => error,
      );
      expect(refused).to.be.instanceOf(WrongExpectedRevisionError);
    }
    expect(await conflicts()).to.equal(before + 2);
  });

  it('counts a made-up method as `other` in /metrics: a client inventing methods adds no series (security probe: 400 requests grew RSS by 220 MB)', async () => {
    for (let i = 0; i < 20; i++) {
      const response = await fetch(`${svc.url}/healthz`, { method: `MADEUP${i}${'X'.repeat(2000)}` });
      expect(response.status).to.equal(405);
    }
    const text = await (await fetch(`${svc.url}/metrics`)).text();
    expect(text).to.not.contain('MADEUP');
    expect(text).to.match(/^http_requests_total\{method="other",route="\/healthz",status="405"\} 20$/m);
  });

  it('GET /openapi.json is an OpenAPI 3.1 document of every public, admin and operator path', async () => {
    const response = await svc.call('GET', '/openapi.json', undefined, { 'x-api-key': '' });
    expect(response.status).to.equal(200);
    expect(response.body.openapi).to.equal('3.1.0');
    expect(Object.keys(response.body.paths)).to.include.members([
      '/users',
      '/users/{app_user_id}',
      '/users/{app_user_id}/claim-code',
      '/users/{app_user_id}/rewards/withdraw-credits',
      '/users/{app_user_id}/rewards/grant',
      '/codes/{code}',
      '/store/offer-codes/{offer_code_id}',
      '/admin/rewards/{key}',
      '/admin/programs/{id}',
      '/admin/promo-codes/{code}',
      '/admin/affiliates/{id}',
      '/admin/events',
      '/admin/users/{app_user_id}/credit-ledger',
    ]);
    const withdraw = response.body.paths['/users/{app_user_id}/rewards/withdraw-credits'].post;
    const schema = withdraw.requestBody.content['application/json'].schema;
    const resolved = schema.$ref ? response.body.components.schemas[schema.$ref.split('/').pop()] : schema;
    expect(resolved.properties.amount).to.include({ type: 'integer', minimum: 1 });
    expect(withdraw.responses).to.have.keys('200', '400', '401', '404', '408', '413', '415', '422', '429', '500', '503');
    expect(withdraw.operationId).to.equal('withdrawCredits');
    // A 503 while the read models catch up says when to come back.
    expect(withdraw.responses['503'].headers['Retry-After']).to.deep.equal({ $ref: '#/components/headers/RetryAfterBehind' });
    const codesOf = (status: string) => withdraw.responses[status].content['application/json'].schema.properties.errors.items.properties.code.enum;
    expect(codesOf('422')).to.have.members(['WITHDRAW.REWARD_NOT_FOUND', 'WITHDRAW.OPERATION_ID_REUSED']);
    expect(codesOf('400')).to.have.members(['BODY_INVALID', 'BAD_REQUEST']);
    expect(Object.keys(response.body.paths)).to.include.members(['/healthz', '/readyz', '/metrics', '/openapi.json']);
    // Inbound notifications: read as raw bytes whatever their content type, documented with what each provider sends;
    // 415 only for a content-encoding the service cannot undo, a 503 when the store is down.
    for (const [provider, field] of [
      ['app-store', 'signedPayload'],
      ['google-play', 'message'],
      ['revenuecat', 'event'],
      ['stripe', 'data'],
    ]) {
      const inbound = response.body.paths[`/webhooks/${provider}`].post;
      expect(inbound.requestBody.content['application/json'].schema.required, provider).to.include(field);
      expect(inbound.responses, provider).to.have.keys('200', '400', '401', '404', '408', '413', '415', '500', '503');
    }
    // The interface's version, as the customer's API declares it.
    expect(response.body.info.version).to.equal('1.0');
  });

  it('GET /docs serves a browsable page of the API description, with the files it loads, never framed; nothing else under /docs', async () => {
    const response = await fetch(`${svc.url}/docs/`);
    expect(response.status).to.equal(200);
    const html = await response.text();
    expect(html).to.contain('swagger-ui');
    const init = await fetch(`${svc.url}/docs/swagger-ui-init.js`);
    expect(init.status).to.equal(200);
    expect(await init.text()).to.contain('/openapi.json');
    expect((await fetch(`${svc.url}/docs/swagger-ui-bundle.js`)).status).to.equal(200);
    for (const asset of ['swagger-ui.css', 'swagger-ui-standalone-preset.js', 'favicon-32x32.png']) {
      expect((await fetch(`${svc.url}/docs/${asset}`)).status, asset).to.equal(200);
    }
    expect(response.headers.get('content-security-policy')).to.equal("frame-ancestors 'none'");
    // The package's other files: its stock page (which reads a third-party document), its
    // initializer for that page, its README, source maps, its package.json.
    for (const path of ['anything', 'index.html', 'swagger-initializer.js', 'README.md', 'swagger-ui-bundle.js.map', 'package.json']) {
      const other = await fetch(`${svc.url}/docs/${path}`);
      expect(other.status, path).to.equal(404);
      expect(((await other.json()) as { errors: { code: string }[] }).errors[0]!.code, path).to.equal('PATH_ERROR');
    }
    for (const method of ['POST', 'DELETE']) {
      for (const path of ['/docs', '/docs/swagger-ui.css']) {
        const wrong = await fetch(`${svc.url}${path}`, { method });
        expect(wrong.status, `${method} ${path}`).to.equal(405);
        expect(wrong.headers.get('allow')).to.equal('GET');
      }
    }
  });
});

describe('API: /readyz when the read-model store cannot be reached', () => {
  it('answers 503 while the read store refuses, though every projection last said it was caught up; 200 once it answers again', async () => {
    let reachable = true;
    const svc = await startTestService({
      backend: (backend) => ({
        ...backend,
        readStore: new Proxy(backend.readStore, {
          get(target, property) {
            const value = Reflect.get(target, property) as unknown;
            if (property === 'checkpoint' && !reachable) return async () => Promise.reject(new StoreUnavailableError('injected: read store unreachable'));
            return typeof value === 'function' ? value.bind(target) : value;
          },
        }),
      }),
    });
    try {
      await createUser(svc, 'ready-user');
      expect((await svc.call('GET', '/readyz')).status).to.equal(200);
      reachable = false;
      const refused = await svc.call('GET', '/readyz');
      expect(refused.status).to.equal(503);
      expect(refused.body.errors[0].code).to.equal('SERVICE_UNAVAILABLE');
      reachable = true;
      expect((await svc.call('GET', '/readyz')).status).to.equal(200);
    } finally {
      await svc.stop();
    }
  });
});
