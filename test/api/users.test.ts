import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { keyLabel } from '../../src/http/auth.js';
import { getUserResponse, userResponse } from '../../src/http/schemas/users.js';
import { FaultSwitch, faultyBackend } from '../support/faulty-backend.js';
import { createUser, eventually, putAffiliate } from '../support/fixtures.js';
import { CLIENT_KEY, SECRET_KEY, startTestService, type TestService } from '../support/test-service.js';

describe('API: users (POST /users, GET /users/{id})', () => {
  let svc: TestService;
  const faults = new FaultSwitch();

  before(async () => {
    svc = await startTestService({ backend: faultyBackend(faults) });
  });
  after(async () => svc.stop());
  afterEach(() => {
    faults.mode = 'ok';
    faults.when = () => true;
  });

  it('creates a user with 201 and the full User shape, then updates with 200', async () => {
    const created = await svc.call('POST', '/users', { app_user_id: 'u-create', is_trial: true, metadata: { plan: 'a' } });
    expect(created.status).to.equal(201);
    const user = userResponse.parse(created.body).data.user;
    expect(user).to.include({ app_user_id: 'u-create', is_trial: true, is_premium: null, last_seen_at: null, payment_customer_id: null });
    expect(user.metadata).to.deep.equal({ plan: 'a' });
    expect(user.referral_code).to.equal(null);
    expect(user.claim_code_eligibility.eligible).to.equal(true);
    const updated = await svc.call('POST', '/users', { app_user_id: 'u-create', is_premium: true });
    expect(updated.status).to.equal(200);
    expect(userResponse.parse(updated.body).data.user).to.include({ is_trial: true, is_premium: true });
  });

  it('GET returns the user with payment_customer_id, referred_by and a null affiliate', async () => {
    await svc.call('POST', '/users', { app_user_id: 'u-get', payment_customer_id: 'cus_1' });
    const response = await svc.call('GET', '/users/u-get');
    expect(response.status).to.equal(200);
    const { user, affiliate } = getUserResponse.parse(response.body).data;
    expect(user.payment_customer_id).to.equal('cus_1');
    expect(user.referred_by).to.equal(null);
    expect(affiliate).to.equal(null);
  });

  it("GET shows the user's affiliate with its own stats: claims of its codes, and conversions of those claimers (SPEC §7.4)", async () => {
    await createUser(svc, 'aff-owner');
    await putAffiliate(svc, 'aff-stats', { app_user_id: 'aff-owner', codes: ['AFFSTATS'] });
    for (const claimer of ['aff-c1', 'aff-c2']) {
      await createUser(svc, claimer);
      expect((await svc.call('POST', `/users/${claimer}/claim-code`, { code: 'AFFSTATS' })).status).to.equal(200);
    }
    await createUser(svc, 'aff-c1', { is_premium: true, is_trial: false });
    await eventually(async () => {
      const { affiliate } = getUserResponse.parse((await svc.call('GET', '/users/aff-owner')).body).data;
      expect(affiliate!.stats).to.deep.equal({ claims: 2, conversions: 1, earnings: 0 });
    });
  });

  it('partial update keeps omitted fields, explicit null clears, metadata replaces', async () => {
    await svc.call('POST', '/users', { app_user_id: 'u-partial', is_trial: true, metadata: { a: 1, b: 2 }, payment_customer_id: 'p' });
    await svc.call('POST', '/users', { app_user_id: 'u-partial', metadata: { c: 3 }, payment_customer_id: null });
    const { user } = (await svc.call('GET', '/users/u-partial')).body.data;
    expect(user.is_trial).to.equal(true);
    expect(user.metadata).to.deep.equal({ c: 3 });
    expect(user.payment_customer_id).to.equal(null);
  });

  it('keeps the earliest first_seen_at and answers in UTC with milliseconds', async () => {
    await svc.call('POST', '/users', { app_user_id: 'u-seen', first_seen_at: '2026-01-05T10:00:00+02:00' });
    await svc.call('POST', '/users', { app_user_id: 'u-seen', first_seen_at: '2026-01-09T00:00:00Z' });
    const { user } = (await svc.call('GET', '/users/u-seen')).body.data;
    expect(user.first_seen_at).to.equal('2026-01-05T08:00:00.000Z');
    await svc.call('POST', '/users', { app_user_id: 'u-seen', first_seen_at: '2026-01-01T00:00:00Z' });
    expect((await svc.call('GET', '/users/u-seen')).body.data.user.first_seen_at).to.equal('2026-01-01T00:00:00.000Z');
  });

  it('a user that never sent first_seen_at shows its creation time there, and is eligible until CLAIM_WINDOW_DAYS after it (not at that instant)', async () => {
    const createdAt = svc.clock.now();
    const { user } = (await svc.call('POST', '/users', { app_user_id: 'u-unseen' })).body.data;
    expect(user.first_seen_at).to.equal(createdAt.toISOString());
    const until = new Date(createdAt.getTime() + 7 * 86_400_000).toISOString();
    expect(user.claim_code_eligibility).to.deep.equal({ eligible: true, eligible_until: until });
    const eligibility = async () => (await svc.call('GET', '/users/u-unseen')).body.data.user.claim_code_eligibility;
    const started = svc.clock.now();
    try {
      svc.clock.set(new Date(Date.parse(until) - 1));
      expect(await eligibility()).to.deep.equal({ eligible: true, eligible_until: until });
      svc.clock.set(new Date(until));
      expect(await eligibility()).to.deep.equal({ eligible: false, eligible_until: until });
    } finally {
      svc.clock.set(started);
    }
  });

  it('rejects first_seen_at more than 5 minutes ahead with 422 USER.FIRST_SEEN_AT_IN_FUTURE and writes nothing', async () => {
    const future = new Date(svc.clock.now().getTime() + 6 * 60_000).toISOString();
    const response = await svc.call('POST', '/users', { app_user_id: 'u-future', first_seen_at: future });
    expect(response.status).to.equal(422);
    expect(response.body.errors[0]).to.deep.equal({
      code: 'USER.FIRST_SEEN_AT_IN_FUTURE',
      status: 422,
      message: response.body.errors[0].message,
      source: '/first_seen_at',
    });
    expect((await svc.call('GET', '/users/u-future')).status).to.equal(404);
    const nearFuture = new Date(svc.clock.now().getTime() + 4 * 60_000).toISOString();
    expect((await svc.call('POST', '/users', { app_user_id: 'u-future', first_seen_at: nearFuture })).status).to.equal(201);
  });

  it('ignores last_seen_at and always returns it as null', async () => {
    const response = await svc.call('POST', '/users', { app_user_id: 'u-last', last_seen_at: '2026-01-01T00:00:00Z' });
    expect(response.body.data.user.last_seen_at).to.equal(null);
  });

  it('404 NOT_FOUND.USER for an unknown user', async () => {
    const response = await svc.call('GET', '/users/nobody');
    expect(response.status).to.equal(404);
    expect(response.body).to.deep.equal({ errors: [{ code: 'NOT_FOUND.USER', status: 404, message: 'User not found', source: 'path:/app_user_id' }] });
  });

  it('GET /admin/users/{id} answers operators (secret key) as GET /users/{id} answers the app; 403 for a client key, 404 for an unknown user', async () => {
    await svc.call('POST', '/users', { app_user_id: 'operated', metadata: { plan: 'gold' } });
    const app = await svc.call('GET', '/users/operated');
    const operator = await svc.admin('GET', '/admin/users/operated');
    expect(operator.status).to.equal(200);
    // The same answer; its stats gain `refunds` (SPEC §11: admin views only).
    const { stats, ...profile } = operator.body.data.user;
    const { stats: appStats, ...appProfile } = app.body.data.user;
    expect(stats).to.deep.equal({ ...appStats, refunds: 0 });
    expect({ ...operator.body.data, user: profile }).to.deep.equal({ ...app.body.data, user: appProfile });
    expect((await svc.call('GET', '/admin/users/operated')).status).to.equal(403);
    expect((await svc.admin('GET', '/admin/users/nobody')).body.errors[0]).to.include({ code: 'NOT_FOUND.USER', source: 'path:/app_user_id' });
  });

  describe('authentication', () => {
    it('401 UNAUTHORIZED without a key and with an unknown key', async () => {
      for (const headers of [{ 'x-api-key': '' }, { 'x-api-key': 'wrong' }]) {
        const response = await svc.call('GET', '/users/anyone', undefined, headers);
        expect(response.status).to.equal(401);
        expect(response.body.errors[0]).to.include({ code: 'UNAUTHORIZED', status: 401, source: 'header:x-api-key' });
      }
    });

    it('accepts both client and secret keys on /users', async () => {
      expect((await svc.call('POST', '/users', { app_user_id: 'u-secret' }, { 'x-api-key': SECRET_KEY })).status).to.equal(201);
      expect((await svc.call('GET', '/users/u-secret', undefined, { 'x-api-key': CLIENT_KEY })).status).to.equal(200);
    });
  });

  describe('bad input', () => {
    const cases: [string, unknown, string | null][] = [
      ['app_user_id missing', { is_trial: true }, '/app_user_id'],
      ['app_user_id not a string', { app_user_id: 42 }, '/app_user_id'],
      ['app_user_id empty', { app_user_id: '' }, '/app_user_id'],
      ['app_user_id too long', { app_user_id: 'x'.repeat(129) }, '/app_user_id'],
      ['app_user_id with a control character', { app_user_id: 'a\u0007b' }, '/app_user_id'],
      // A URL resolves them as dot segments: the user could never be addressed again.
      ['app_user_id "."', { app_user_id: '.' }, '/app_user_id'],
      ['app_user_id ".."', { app_user_id: '..' }, '/app_user_id'],
      ['is_trial not boolean', { app_user_id: 'u', is_trial: 'yes' }, '/is_trial'],
      ['first_seen_at not a date-time', { app_user_id: 'u', first_seen_at: 'yesterday' }, '/first_seen_at'],
      ['metadata an array', { app_user_id: 'u', metadata: [1, 2] }, '/metadata'],
      ['metadata over 16 KiB', { app_user_id: 'u', metadata: { blob: 'x'.repeat(17 * 1024) } }, '/metadata'],
      // Stored as sent, it would have skipped encryption, read as erased and outlived an erasure.
      ['metadata shaped like an encrypted value', { app_user_id: 'u', metadata: { $encrypted: 'pd1.zqxenv.jane.doe@mail.example' } }, '/metadata'],
      ['payment_customer_id over 255', { app_user_id: 'u', payment_customer_id: 'p'.repeat(256) }, '/payment_customer_id'],
    ];
    for (const [name, body, source] of cases) {
      it(`400 BAD_REQUEST: ${name}`, async () => {
        const response = await svc.call('POST', '/users', body);
        expect(response.status).to.equal(400);
        expect(response.body.errors[0]).to.include({ code: 'BAD_REQUEST', status: 400, source });
      });
    }

    it('metadata of exactly 16 KiB serialized (UTF-8 bytes of its JSON) is kept; one byte more is 400 and writes nothing', async () => {
      // {"blob":"…"} is 11 bytes around the value; "é" is two bytes.
      const exactly = { blob: `é${'x'.repeat(16 * 1024 - 11 - 2)}` };
      expect(Buffer.byteLength(JSON.stringify(exactly))).to.equal(16 * 1024);
      const over = { blob: `${exactly.blob}x` };
      const refused = await svc.call('POST', '/users', { app_user_id: 'u-meta-cap', metadata: over });
      expect(refused.body.errors[0]).to.include({ status: 400, code: 'BAD_REQUEST', source: '/metadata' });
      expect((await svc.call('GET', '/users/u-meta-cap')).status).to.equal(404);
      expect((await svc.call('POST', '/users', { app_user_id: 'u-meta-cap', metadata: exactly })).status).to.equal(201);
      expect((await svc.call('GET', '/users/u-meta-cap')).body.data.user.metadata).to.deep.equal(exactly);
    });

    it('400 BAD_REQUEST for metadata numbers that would not read back as sent (1e400, integers past 2^53), and writes nothing', async () => {
      for (const raw of [
        '{"app_user_id":"u-num","metadata":{"inf":1e400}}',
        '{"app_user_id":"u-num","metadata":{"deep":[{"big":12345678901234567890}]}}',
        '{"app_user_id":"u-num","metadata":{"negative":-9007199254740993}}',
      ]) {
        const response = await svc.call('POST', '/users', raw);
        expect(response.body.errors[0], raw).to.include({ status: 400, code: 'BAD_REQUEST', source: '/metadata' });
      }
      expect((await svc.call('GET', '/users/u-num')).status).to.equal(404);
      const kept = { max: 9007199254740991, min: -9007199254740991, third: 0.3333333333333333, tiny: 1e-300 };
      expect((await svc.call('POST', '/users', { app_user_id: 'u-num', metadata: kept })).status).to.equal(201);
      expect((await svc.call('GET', '/users/u-num')).body.data.user.metadata).to.deep.equal(kept);
    });

    it('400 BODY_INVALID for malformed JSON, an array, a scalar or an empty body, and writes nothing', async () => {
      for (const raw of ['{"app_user_id": "u-bad",', '[{"app_user_id":"u-bad"}]', '"u-bad"', '']) {
        const response = await svc.call('POST', '/users', raw);
        expect(response.status, raw).to.equal(400);
        expect(response.body.errors[0]).to.include({ code: 'BODY_INVALID', status: 400 });
      }
      expect((await svc.call('GET', '/users/u-bad')).status).to.equal(404);
    });

    it('413 BODY_TOO_LARGE over 64 KiB', async () => {
      const response = await svc.call('POST', '/users', { app_user_id: 'u-big', metadata: { blob: 'x'.repeat(70 * 1024) } });
      expect(response.status).to.equal(413);
      expect(response.body.errors[0]).to.include({ code: 'BODY_TOO_LARGE', status: 413 });
    });

    it('415 UNSUPPORTED_MEDIA_TYPE for a non-JSON body', async () => {
      const response = await svc.call('POST', '/users', 'app_user_id=u', { 'content-type': 'application/x-www-form-urlencoded' });
      expect(response.status).to.equal(415);
      expect(response.body.errors[0]).to.include({ code: 'UNSUPPORTED_MEDIA_TYPE', status: 415 });
    });

    it('ignores unknown fields', async () => {
      const response = await svc.call('POST', '/users', { app_user_id: 'u-extra', favourite_colour: 'blue' });
      expect(response.status).to.equal(201);
      expect(response.body.data.user).to.not.have.property('favourite_colour');
    });
  });

  describe('paths, methods and request ids', () => {
    it('404 PATH_ERROR for an unknown path', async () => {
      const response = await svc.call('GET', '/users/a/b/c');
      expect(response.status).to.equal(404);
      expect(response.body.errors[0]).to.deep.include({ code: 'PATH_ERROR', status: 404, source: null });
    });

    /** Each of `paths` is 404 PATH_ERROR; a POST carries a body that would create `user` on the real path. */
    async function expectPathErrors(paths: readonly (readonly ['GET' | 'POST', string])[], user: string): Promise<void> {
      for (const [method, path] of paths) {
        const response = await svc.call(method, path, method === 'POST' ? { app_user_id: user, code: 'X' } : undefined);
        expect(response.status, `${method} ${path}`).to.equal(404);
        expect(response.body.errors[0], `${method} ${path}`).to.deep.include({ code: 'PATH_ERROR', status: 404 });
      }
    }

    it('404 PATH_ERROR for a known path spelled in another letter case (paths are case-sensitive)', async () => {
      await expectPathErrors(
        [
          ['POST', '/USERS'],
          ['GET', '/Users/u-create'],
          ['POST', '/users/u-create/CLAIM-CODE'],
          ['GET', '/Admin/rewards'],
          ['GET', '/OPENAPI.JSON'],
          ['GET', '/Console'],
          ['GET', '/compat/WinWinKit/users/u-create'],
        ],
        'u-case',
      );
    });

    it('404 PATH_ERROR for a known path with a trailing slash (paths are as spelled), with no user created', async () => {
      await expectPathErrors(
        [
          ['POST', '/users/'],
          ['GET', '/users/u-create/'],
          ['POST', '/users/u-create/claim-code/'],
          ['GET', '/admin/rewards/'],
          ['GET', '/openapi.json/'],
          ['GET', '/healthz/'],
          ['GET', '/compat/winwinkit/users/u-create/'],
        ],
        'u-slash',
      );
      expect((await svc.call('GET', '/users/u-slash')).status).to.equal(404);
      // The browsable pages keep their folder form.
      expect((await svc.call('GET', '/docs/')).status).to.equal(200);
    });

    it('405 METHOD_NOT_ALLOWED with an Allow header on a known path', async () => {
      const response = await svc.call('DELETE', '/users/u-create');
      expect(response.status).to.equal(405);
      expect(response.headers.get('allow')).to.equal('GET');
      expect(response.body.errors[0]).to.include({ code: 'METHOD_NOT_ALLOWED', status: 405 });
    });

    it('names the key behind each event by a slow hash of it, not a SHA-256 prefix a reader of the log could test a guessed key against', async () => {
      expect((await svc.call('POST', '/users', { app_user_id: 'u-actor' })).status).to.equal(201);
      expect((await svc.admin('POST', '/users', { app_user_id: 'u-actor', is_premium: true })).status).to.equal(200);
      const events = (await svc.admin('GET', '/admin/events?stream=user-u-actor')).body.data.events as { metadata: { actor: string } }[];
      const actors = events.map((event) => event.metadata.actor);
      expect(actors)
        .to.include(`client:${keyLabel(CLIENT_KEY)}`)
        .and.include(`secret:${keyLabel(SECRET_KEY)}`);
      for (const key of [CLIENT_KEY, SECRET_KEY]) {
        const sha256 = createHash('sha256').update(key).digest('hex').slice(0, 12);
        expect(actors.join(' ')).not.to.contain(sha256);
        expect(keyLabel(key)).to.match(/^[0-9a-f]{12}$/);
      }
    });

    it('echoes x-request-id, or generates one', async () => {
      const echoed = await svc.call('GET', '/users/nobody', undefined, { 'x-request-id': 'req-123' });
      expect(echoed.headers.get('x-request-id')).to.equal('req-123');
      const generated = await svc.call('GET', '/healthz');
      expect(generated.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
    });

    it('marks every answer not to be stored (personal data an erasure would not reach in a cache) nor sniffed; console assets revalidate', async () => {
      const answers = [
        await svc.call('GET', '/users/u-create'),
        await svc.call('GET', '/users/nobody'),
        await svc.admin('GET', '/admin/users/u-create/export'),
        await svc.admin('GET', '/admin/events?limit=1'),
      ];
      for (const answer of answers) {
        expect(answer.headers.get('cache-control')).to.equal('no-store');
        expect(answer.headers.get('x-content-type-options')).to.equal('nosniff');
      }
      expect((await svc.call('GET', '/console/')).headers.get('cache-control')).to.equal('no-cache');
    });
  });

  describe('store failures', () => {
    it('503 SERVICE_UNAVAILABLE when a store is unreachable, and the write is not half-done', async () => {
      faults.mode = 'unavailable';
      faults.when = (method) => method === 'append';
      const response = await svc.call('POST', '/users', { app_user_id: 'u-503' });
      expect(response.status).to.equal(503);
      expect(response.body.errors[0]).to.include({ code: 'SERVICE_UNAVAILABLE', status: 503, source: null });
      faults.mode = 'ok';
      expect((await svc.call('GET', '/users/u-503')).status).to.equal(404);
      expect((await svc.call('POST', '/users', { app_user_id: 'u-503' })).status).to.equal(201);
    });

    it('500 INTERNAL_SERVER_ERROR without internals on a bug', async () => {
      faults.mode = 'broken';
      faults.when = (method) => method === 'get';
      const response = await svc.call('GET', '/users/u-create', undefined, { 'x-request-id': 'bug-1' });
      expect(response.status).to.equal(500);
      expect(response.body.errors[0]).to.include({ code: 'INTERNAL_SERVER_ERROR', status: 500, source: null });
      expect(JSON.stringify(response.body)).to.not.match(/secret internals|\/var\/lib|at .*\.ts/);
      expect(response.body.errors[0].message).to.contain('bug-1');
    });
  });

  it('50 concurrent creates of one new user: exactly one 201, the rest 200, one UserRegistered event', async () => {
    const responses = await Promise.all(Array.from({ length: 50 }, () => svc.call('POST', '/users', { app_user_id: 'u-race', is_trial: false })));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 201)).to.have.length(1);
    expect(statuses.filter((status) => status === 200)).to.have.length(49);
    const events = await svc.admin('GET', '/admin/events?stream=user-u-race&limit=1000');
    const registered = (events.body.data.events as { type: string }[]).filter((event) => event.type === 'UserRegistered');
    expect(registered).to.have.length(1);
  });

  it('50 concurrent creates of different users with personal fields: each reads back its own (their data keys made together)', async () => {
    const ids = Array.from({ length: 50 }, (_, index) => `u-crowd-${index}`);
    const created = await Promise.all(
      ids.map((id) => svc.call('POST', '/users', { app_user_id: id, metadata: { email: `${id}@example.org` }, payment_customer_id: `cus_${id}` })),
    );
    expect(created.map((response) => response.status)).to.deep.equal(ids.map(() => 201));
    for (const id of ids) {
      const user = (await svc.call('GET', `/users/${id}`)).body.data.user;
      expect(user).to.deep.include({ metadata: { email: `${id}@example.org` }, payment_customer_id: `cus_${id}` });
      const [registered] = (await svc.admin('GET', `/admin/events?stream=user-${id}&limit=1`)).body.data.events;
      expect(registered.data).to.deep.include({ metadata: { email: `${id}@example.org` }, payment_customer_id: `cus_${id}` });
    }
  });
});
