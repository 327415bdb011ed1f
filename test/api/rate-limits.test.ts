import { expect } from 'chai';
import type { Backend } from '../../src/backends/backend.js';
import type { RateLimitCounter, RateLimitStore } from '../../src/ports/rate-limit-store.js';
import { createUser, events, putProgram } from '../support/fixtures.js';
import { CLIENT_KEY, ManualClock, SECRET_KEY, startTestService, type TestService, tempDataDir } from '../support/test-service.js';

const T0 = new Date('2026-11-23T12:00:00.000Z');

/** Rate limits on with small budgets, on a clock the test moves (no sleeps). */
function limited(env: Record<string, string> = {}, clock = new ManualClock(T0), dataDir?: string, backend?: (embedded: Backend) => Backend) {
  return startTestService({
    clock,
    dataDir,
    backend,
    env: { RATE_LIMITS: 'on', RATE_LIMIT_READS: '3/60s', RATE_LIMIT_COMMANDS: '100/60s', RATE_LIMIT_CLAIMS: '10/3600s', ...env },
  });
}

/**
 * Rate-limit counters whose next `count` charges, once armed, wait for one another: that many
 * requests stand at the limiter together, as in a burst from another machine (in-process
 * requests otherwise arrive one after another, each finishing before the next is read).
 */
class ChargesTogether implements RateLimitStore {
  private count = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly store: RateLimitStore) {}

  arm(count: number): void {
    this.count = count;
  }

  hit(key: string, points: number, windowMs: number, nowMs: number): Promise<RateLimitCounter> {
    if (points <= 0 || this.count === 0) return this.store.hit(key, points, windowMs, nowMs);
    this.count -= 1;
    const together = new Promise<void>((resolve) => this.waiting.push(resolve));
    if (this.count === 0) for (const release of this.waiting.splice(0)) release();
    return together.then(() => this.store.hit(key, points, windowMs, nowMs));
  }

  removeExpired(nowMs: number): Promise<number> {
    return this.store.removeExpired(nowMs);
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

describe('Rate limits (SPEC §13)', function () {
  this.timeout(30_000);
  const services: TestService[] = [];
  const start = async (...args: Parameters<typeof limited>) => {
    const svc = await limited(...args);
    services.push(svc);
    return svc;
  };
  /** A service whose rate-limit charges can be made to arrive together (ChargesTogether). */
  const startWithBursts = async (env: Record<string, string>) => {
    let counters: ChargesTogether | null = null;
    const svc = await start(env, undefined, undefined, (embedded) => {
      counters = new ChargesTogether(embedded.rateLimits);
      return { ...embedded, rateLimits: counters };
    });
    return { svc, counters: counters! as ChargesTogether };
  };
  afterEach(async () => {
    await Promise.all(services.splice(0).map((svc) => svc.stop()));
  });

  it('answer 429 RATE_LIMITED over the read budget, with Retry-After and the IETF headers, until the window ends', async () => {
    const svc = await start();
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await svc.call('GET', '/codes/NOPE42'));
    expect(answers.map((answer) => answer.status)).to.deep.equal([404, 404, 404]);
    expect(answers[0]!.headers.get('ratelimit-policy')).to.equal('"reads-caller";q=3;w=60');
    expect(answers.map((answer) => answer.headers.get('ratelimit'))).to.deep.equal([
      '"reads-caller";r=2;t=60',
      '"reads-caller";r=1;t=60',
      '"reads-caller";r=0;t=60',
    ]);

    svc.clock.advance(20_000);
    const over = await svc.call('GET', '/codes/NOPE42');
    expect(over.status).to.equal(429);
    expect(over.body.errors[0]).to.include({ code: 'RATE_LIMITED', status: 429, source: null });
    expect(over.headers.get('retry-after')).to.equal('40');
    expect(over.headers.get('ratelimit')).to.equal('"reads-caller";r=0;t=40');

    svc.clock.advance(40_000);
    const again = await svc.call('GET', '/codes/NOPE42');
    expect(again.status).to.equal(404);
    expect(again.headers.get('ratelimit')).to.equal('"reads-caller";r=2;t=60');
  });

  it('count per app_user_id across callers, and per key + IP only through a trusted proxy', async () => {
    const svc = await start({ TRUST_PROXY: '1' });
    await createUser(svc, 'ann');
    const from = (ip: string) => ({ 'x-forwarded-for': ip });
    // Three reads of ann from three addresses: each caller has room, ann's own budget runs out.
    for (const ip of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) expect((await svc.call('GET', '/users/ann', undefined, from(ip))).status).to.equal(200);
    const fourth = await svc.call('GET', '/users/ann', undefined, from('203.0.113.4'));
    expect(fourth.status).to.equal(429);
    expect(fourth.headers.get('ratelimit')).to.equal('"reads-caller";r=2;t=60, "reads-user";r=0;t=60');
    // Another user from the same address still reads: the caller budget is per address.
    expect((await svc.call('GET', '/codes/NOPE42', undefined, from('203.0.113.4'))).status).to.equal(404);
  });

  it('count an IPv4 address written IPv4-mapped (::ffff:a.b.c.d) as the same caller', async () => {
    const svc = await start({ TRUST_PROXY: '1' });
    const from = (ip: string) => ({ 'x-forwarded-for': ip });
    for (const ip of ['203.0.113.7', '::ffff:203.0.113.7', '::FFFF:203.0.113.7'])
      expect((await svc.call('GET', '/codes/NOPE42', undefined, from(ip))).status).to.equal(404);
    expect((await svc.call('GET', '/codes/NOPE42', undefined, from('203.0.113.7'))).status).to.equal(429);
    // A true IPv6 caller is another caller.
    expect((await svc.call('GET', '/codes/NOPE42', undefined, from('2001:db8::7'))).status).to.equal(404);
  });

  it('count an IPv6 caller by its /64, however its address is written: a client picking a fresh address per request gets no fresh budget', async () => {
    const svc = await start({ TRUST_PROXY: '1' });
    const from = (ip: string) => ({ 'x-forwarded-for': ip });
    // Three addresses of one /64, the third written out in full (an abuse probe got 30 reads past a budget of 10 so).
    for (const ip of ['2001:db8:1:2::5', '2001:db8:1:2:aaaa:bbbb:cccc:dddd', '2001:0db8:0001:0002:0000:0000:0000:0009'])
      expect((await svc.call('GET', '/codes/NOPE42', undefined, from(ip))).status, ip).to.equal(404);
    expect((await svc.call('GET', '/codes/NOPE42', undefined, from('2001:db8:1:2::7'))).status).to.equal(429);
    // Another /64 is another caller.
    expect((await svc.call('GET', '/codes/NOPE42', undefined, from('2001:db8:1:3::5'))).status).to.equal(404);
  });

  it('ignore X-Forwarded-For unless TRUST_PROXY trusts the hop', async () => {
    const svc = await start();
    for (let i = 0; i < 3; i++) expect((await svc.call('GET', '/codes/NOPE42', undefined, { 'x-forwarded-for': `198.51.100.${i}` })).status).to.equal(404);
    expect((await svc.call('GET', '/codes/NOPE42', undefined, { 'x-forwarded-for': '198.51.100.9' })).status).to.equal(429);
  });

  it('let secret keys through unless RATE_LIMIT_SECRET=true', async () => {
    const exempt = await start();
    for (let i = 0; i < 5; i++) {
      const answer = await exempt.admin('GET', '/codes/NOPE42');
      expect(answer.status).to.equal(404);
      expect(answer.headers.get('ratelimit')).to.equal(null);
    }
    const strict = await start({ RATE_LIMIT_SECRET: 'true' });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await strict.admin('GET', '/admin/rewards')).status);
    expect(statuses).to.deep.equal([200, 200, 200, 429]);
  });

  it('charge a failed claim (404 or 422: unknown code, own code, already claimed, unknown claimer) 5 points, a malformed one 1', async () => {
    const svc = await start();
    await putProgram(svc, 'p', {});
    const bob = await createUser(svc, 'bob');
    const unknown = await svc.call('POST', '/users/bob/claim-code', { code: 'ZZZZZZ' });
    expect(unknown.body.errors[0].code).to.equal('CLAIM.CODE_NOT_FOUND');
    expect(unknown.headers.get('ratelimit')).to.contain('"claims-user";r=5;t=3600');
    const own = await svc.call('POST', '/users/bob/claim-code', { code: bob.referral_code });
    expect(own.body.errors[0].code).to.equal('CLAIM.OWN_CODE');
    expect(own.headers.get('ratelimit')).to.contain('"claims-user";r=0;t=3600');
    const blocked = await svc.call('POST', '/users/bob/claim-code', { code: 'ZZZZZZ' });
    expect(blocked.status).to.equal(429);
    expect(blocked.headers.get('retry-after')).to.equal('3600');
    // A claim of a user that does not exist yet fails too.
    const missing = await svc.call('POST', '/users/nobody/claim-code', { code: 'ZZZZZZ' });
    expect(missing.body.errors[0].code).to.equal('NOT_FOUND.USER');
    expect(missing.headers.get('ratelimit')).to.contain('"claims-user";r=5;t=3600');
    // A claim that succeeds costs 1; a malformed one (400) is not a failed claim: 1 point, as any command.
    await createUser(svc, 'carol');
    const claimed = await svc.call('POST', '/users/carol/claim-code', { code: bob.referral_code });
    expect(claimed.status).to.equal(200);
    expect(claimed.headers.get('ratelimit')).to.contain('"claims-user";r=9;t=3600');
    const malformed = await svc.call('POST', '/users/carol/claim-code', { code: 42 });
    expect(malformed.status).to.equal(400);
    expect(malformed.headers.get('ratelimit')).to.contain('"claims-user";r=8;t=3600');
    // Claiming again is a failed claim.
    const again = await svc.call('POST', '/users/carol/claim-code', { code: bob.referral_code });
    expect(again.body.errors[0].code).to.equal('CLAIM.ALREADY_CLAIMED');
    expect(again.headers.get('ratelimit')).to.contain('"claims-user";r=3;t=3600');
    // With 3 points left, a claim cannot pay for failing: refused before it runs, costing the
    // user nothing (only requests served count against a user) and its caller 1.
    const short = await svc.call('POST', '/users/carol/claim-code', { code: 'ZZZZZZ' });
    expect(short.status).to.equal(429);
    expect(short.headers.get('ratelimit')).to.contain('"claims-user";r=3;t=3600');
  });

  it('count a malformed, mistyped or oversized body against the caller, with the headers, and refuse it over budget', async () => {
    const svc = await start({ RATE_LIMIT_COMMANDS: '5/60s' });
    const post = (body: string, contentType = 'application/json') =>
      fetch(`${svc.url}/users`, { method: 'POST', headers: { 'x-api-key': CLIENT_KEY, 'content-type': contentType }, body });
    const notJson = await post('notjson');
    expect(notJson.status).to.equal(400);
    expect(notJson.headers.get('ratelimit')).to.equal('"commands-caller";r=4;t=60');
    const text = await post('hello', 'text/plain');
    expect(text.status).to.equal(415);
    expect(text.headers.get('ratelimit')).to.equal('"commands-caller";r=3;t=60');
    const large = await post(JSON.stringify({ app_user_id: 'big', metadata: { blob: 'x'.repeat(70_000) } }));
    expect(large.status).to.equal(413);
    expect(large.headers.get('ratelimit')).to.equal('"commands-caller";r=2;t=60');
    for (let i = 0; i < 2; i++) expect((await post('notjson')).status).to.equal(400);
    const over = await post('notjson');
    expect(over.status).to.equal(429);
    expect(over.headers.get('retry-after')).to.equal('60');
    expect((await post(JSON.stringify({ app_user_id: 'valid' }))).status).to.equal(429);
  });

  it('count a path that is not validly percent-encoded against the caller, with the headers, and refuse it over budget', async () => {
    const svc = await start({ RATE_LIMIT_READS: '2/60s' });
    const get = (path: string) => fetch(`${svc.url}${path}`, { headers: { 'x-api-key': CLIENT_KEY } });
    const bad = await get('/codes/%zz');
    expect(bad.status).to.equal(400);
    expect(((await bad.json()) as { errors: { message: string }[] }).errors[0]!.message).to.equal('The path is not validly percent-encoded');
    expect(bad.headers.get('ratelimit')).to.equal('"reads-caller";r=1;t=60');
    expect((await get('/users/%E0%A4%A')).headers.get('ratelimit')).to.equal('"reads-caller";r=0;t=60');
    expect((await get('/codes/%zz')).status).to.equal(429);
  });

  it('refuse a manual grant with a client key 403 before its body, path or budget is looked at, as an admin call (both surfaces)', async () => {
    const svc = await start({ RATE_LIMIT_COMMANDS: '5/60s' });
    const post = (path: string, body: string, contentType = 'application/json') =>
      fetch(`${svc.url}${path}`, { method: 'POST', headers: { 'x-api-key': CLIENT_KEY, 'content-type': contentType }, body });
    // 15 refusals against a budget of 5: none is counted.
    for (let attempt = 0; attempt < 3; attempt += 1) {
      for (const [path, body, type] of [
        ['/users/ann/rewards/grant', '{"key":"coins"}', 'application/json'],
        ['/users/%zz/rewards/grant', '{"key":"coins"}', 'application/json'],
        ['/users/ann/rewards/grant', 'not json', 'application/json'],
        ['/users/ann/rewards/grant', 'hello', 'text/plain'],
        ['/compat/winwinkit/users/%zz/rewards/grant', '{"key":"coins"}', 'application/json'],
      ] as const) {
        const answer = await post(path, body, type);
        expect(answer.status, `${path} ${type} ${body}`).to.equal(403);
        expect(answer.headers.get('ratelimit'), 'charged nothing').to.equal(null);
      }
    }
  });

  it("say in Retry-After the longest wait of every budget the request cannot pass: a user's spent claim budget outlasts its caller's", async () => {
    const clock = new ManualClock(T0);
    const svc = await start({ RATE_LIMIT_COMMANDS: '6/60s', RATE_LIMIT_CLAIMS: '5/3600s' }, clock);
    expect((await svc.call('POST', '/users', { app_user_id: 'both-spent' })).status).to.equal(201);
    // A failed claim costs 5 on each counter: the caller has 0 of 6 left for a minute, the user 0 of 5 for an hour.
    expect((await svc.call('POST', '/users/both-spent/claim-code', { code: 'NOPE42' })).status).to.equal(422);
    const refused = await svc.call('POST', '/users/both-spent/claim-code', { code: 'NOPE42' });
    expect(refused.status).to.equal(429);
    expect(refused.headers.get('ratelimit')).to.equal('"commands-caller";r=0;t=60, "claims-user";r=0;t=3600');
    expect(refused.headers.get('retry-after')).to.equal('3600');
    // Retrying when the caller's minute is over would have been refused again.
    clock.advance(61_000);
    const early = await svc.call('POST', '/users/both-spent/claim-code', { code: 'NOPE42' });
    expect(early.status).to.equal(429);
    expect(early.headers.get('retry-after')).to.equal('3539');
    clock.advance(3_539_000);
    expect((await svc.call('POST', '/users/both-spent/claim-code', { code: 'NOPE42' })).status).to.equal(422);
  });

  it("count a claim's whole cost in Retry-After: a user with some claim budget left, but less than a claim needs, outlasts its caller", async () => {
    const clock = new ManualClock(T0);
    const svc = await start({ RATE_LIMIT_COMMANDS: '6/60s', RATE_LIMIT_CLAIMS: '7/3600s' }, clock);
    expect((await svc.call('POST', '/users', { app_user_id: 'part-spent' })).status).to.equal(201);
    // A failed claim costs 5 on each counter: the caller has 1 of 6 left for a minute, the user 2 of 7 for an hour.
    expect((await svc.call('POST', '/users/part-spent/claim-code', { code: 'NOPE42' })).status).to.equal(422);
    const refused = await svc.call('POST', '/users/part-spent/claim-code', { code: 'NOPE42' });
    expect(refused.status).to.equal(429);
    // A claim needs room for its failure (5 points): the user's 2 are not enough, so its hour is the wait.
    expect(refused.headers.get('retry-after')).to.equal('3600');
    clock.advance(61_000);
    const early = await svc.call('POST', '/users/part-spent/claim-code', { code: 'NOPE42' });
    expect(early.status).to.equal(429);
    expect(early.headers.get('retry-after')).to.equal('3539');
  });

  it('count a HEAD as a read, as a GET is (README: reads-caller, reads-user)', async () => {
    const svc = await start({ RATE_LIMIT_READS: '3/60s' });
    await createUser(svc, 'headed');
    const head = await svc.call('HEAD', '/users/headed');
    expect(head.status).to.equal(200);
    expect(head.headers.get('ratelimit')).to.equal('"reads-caller";r=2;t=60, "reads-user";r=2;t=60');
  });

  it("let a caller over its budget use up no user's budget", async () => {
    const svc = await start({ TRUST_PROXY: '1' });
    await createUser(svc, 'ann');
    const from = (ip: string) => ({ 'x-forwarded-for': ip });
    for (let i = 0; i < 3; i++) expect((await svc.call('GET', '/codes/NOPE42', undefined, from('203.0.113.1'))).status).to.equal(404);
    // Refused at its own budget, this caller's reads of ann give ann's point back.
    for (let i = 0; i < 5; i++) {
      const refused = await svc.call('GET', '/users/ann', undefined, from('203.0.113.1'));
      expect(refused.status).to.equal(429);
      // The user's counter as it is after the point came back: untouched.
      expect(refused.headers.get('ratelimit')).to.equal('"reads-caller";r=0;t=60, "reads-user";r=3;t=60');
    }
    const answers = [];
    for (const ip of ['203.0.113.2', '203.0.113.3', '203.0.113.4']) answers.push(await svc.call('GET', '/users/ann', undefined, from(ip)));
    expect(answers.map((answer) => answer.status)).to.deep.equal([200, 200, 200]);
    expect(answers[2]!.headers.get('ratelimit')).to.equal('"reads-caller";r=2;t=60, "reads-user";r=0;t=60');
  });

  it("count against a user only the requests served: callers refused in a burst (at their own budget or at the user's) leave none on its counter", async () => {
    const { svc, counters } = await startWithBursts({ TRUST_PROXY: '1', RATE_LIMIT_READS: '30/60s' });
    await createUser(svc, 'victim');
    const from = (ip: string) => ({ 'x-forwarded-for': ip });
    // The attacker spends its own budget, then reads the victim 60 times at once while an honest
    // caller reads it 30 times at once: the attacker's points sit on the victim's counter until
    // given back, and honest reads arriving meanwhile are refused there.
    for (let i = 0; i < 30; i++) expect((await svc.call('GET', '/codes/NOPE42', undefined, from('203.0.113.66'))).status).to.equal(404);
    const callers = Array.from({ length: 90 }, (_, i) => (i % 3 === 2 ? '203.0.113.7' : '203.0.113.66'));
    // As from other machines: the 90 requests' charges (caller and user: 180) reach the counters together.
    counters.arm(180);
    const burst = await Promise.all(callers.map((ip) => svc.call('GET', '/users/victim', undefined, from(ip))));
    expect(burst.filter((_, i) => callers[i] === '203.0.113.66').every((answer) => answer.status === 429)).to.equal(true);
    const served = burst.filter((answer) => answer.status === 200).length;
    expect(served, 'some honest reads were refused in the race').to.be.lessThan(30);
    // The victim's counter holds the reads served, nothing else: the next reader is served out of the rest.
    const next = await svc.call('GET', '/users/victim', undefined, from('203.0.113.8'));
    if (served === 30) expect(next.status).to.equal(429);
    else {
      expect(next.status).to.equal(200);
      expect(next.headers.get('ratelimit')).to.contain(`"reads-user";r=${30 - served - 1};`);
    }
  });

  it("say in Retry-After the caller's wait when only the caller's budget refused: the user's counter, given its point back, has room", async () => {
    const clock = new ManualClock(T0);
    const svc = await start({ TRUST_PROXY: '1' }, clock);
    const from = (ip: string) => ({ 'x-forwarded-for': ip });
    await createUser(svc, 'u');
    for (let i = 0; i < 3; i++) expect((await svc.call('GET', '/codes/NOPE42', undefined, from('203.0.113.66'))).status).to.equal(404);
    clock.advance(30_000);
    // The user's window starts now, with 2 of its 3 reads served.
    for (let i = 0; i < 2; i++) expect((await svc.call('GET', '/users/u', undefined, from('203.0.113.7'))).status).to.equal(200);
    clock.advance(1_000);
    const refused = await svc.call('GET', '/users/u', undefined, from('203.0.113.66'));
    expect(refused.status).to.equal(429);
    expect(refused.headers.get('ratelimit')).to.equal('"reads-caller";r=0;t=29, "reads-user";r=1;t=59');
    expect(refused.headers.get('retry-after')).to.equal('29');
    clock.advance(29_000);
    expect((await svc.call('GET', '/users/u', undefined, from('203.0.113.66'))).status).to.equal(200);
  });

  it('are shared by two services on one database file', async () => {
    const dataDir = tempDataDir();
    const clock = new ManualClock(T0);
    const first = await start({ RATE_LIMIT_COMMANDS: '5/60s' }, clock, dataDir);
    const second = await start({ RATE_LIMIT_COMMANDS: '5/60s' }, clock, dataDir);
    const statuses = [];
    for (let i = 0; i < 7; i++) statuses.push((await (i % 2 === 0 ? first : second).call('POST', '/users', { app_user_id: `u${i}` })).status);
    expect(statuses).to.deep.equal([201, 201, 201, 201, 201, 429, 429]);
  });

  it('never let a 50-way concurrent burst past the budget', async () => {
    const svc = await start({ RATE_LIMIT_READS: '20/60s' });
    const answers = await Promise.all(Array.from({ length: 50 }, () => svc.call('GET', '/codes/NOPE42')));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 404)).to.have.length(20);
    expect(statuses.filter((status) => status === 429)).to.have.length(30);
  });

  it('never let a 50-way concurrent burst of commands (POST /users) from one caller past a budget of 20: 20 created, 30 × 429', async () => {
    const { svc, counters } = await startWithBursts({ RATE_LIMIT_COMMANDS: '20/60s' });
    counters.arm(50 * 2); // each create charges the caller's and the new user's counter
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => svc.call('POST', '/users', { app_user_id: `burst-${i}` })));
    expect(answers.filter((answer) => answer.status === 201)).to.have.length(20);
    const refused = answers.filter((answer) => answer.status === 429);
    expect(refused).to.have.length(30);
    for (const answer of refused) {
      expect(answer.body.errors[0]).to.include({ code: 'RATE_LIMITED', status: 429 });
      expect(answer.headers.get('retry-after')).to.equal('60');
    }
    expect(await events(svc, 'type=UserRegistered')).to.have.length(20);
  });

  it('let a 50-way burst of failed claims by one user through no more than its budget allows at 5 points each', async () => {
    const { svc, counters } = await startWithBursts({ RATE_LIMIT_CLAIMS: '20/3600s' });
    await createUser(svc, 'carol');
    counters.arm(50 * 2); // each claim charges the caller's and the user's counter
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => svc.call('POST', '/users/carol/claim-code', { code: `ZZZZZ${i}` })));
    // Every claim takes 5 points up front, so no more than 20 / 5 guesses get past the limiter.
    expect(answers.filter((answer) => answer.status === 422)).to.have.length(4);
    expect(answers.filter((answer) => answer.status === 429)).to.have.length(46);
  });

  it("let a 60-way burst of failed claims by 60 users through no more than the caller's budget allows at 5 points each", async () => {
    const { svc, counters } = await startWithBursts({ RATE_LIMIT_COMMANDS: '50/60s' });
    // Created with the secret key (exempt), so the client's budget is whole when the burst starts.
    for (let i = 0; i < 60; i++) expect((await svc.admin('POST', '/users', { app_user_id: `guesser-${i}` })).status).to.equal(201);
    counters.arm(60 * 2);
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => svc.call('POST', `/users/guesser-${i}/claim-code`, { code: `ZZZZZ${i}` })));
    expect(answers.filter((answer) => answer.status === 422)).to.have.length(10);
    expect(answers.filter((answer) => answer.status === 429)).to.have.length(50);
    // Refused by the caller's budget, no claim used up its user's: each of those users still has its 10.
    const refused = answers.findIndex((answer) => answer.status === 429);
    const after = await svc.admin('GET', `/users/guesser-${refused}`);
    expect(after.status).to.equal(200);
    expect(answers[refused]!.headers.get('ratelimit')).to.match(/"claims-user";r=10;t=3600$/);
  });

  it('give a claim that succeeds all but 1 of its 5 points back before answering, even 8 at once', async () => {
    const { svc, counters } = await startWithBursts({ RATE_LIMIT_COMMANDS: '41/60s' });
    await putProgram(svc, 'p', {});
    const ann = await createUser(svc, 'ann');
    for (let i = 0; i < 8; i++) expect((await svc.admin('POST', '/users', { app_user_id: `friend-${i}` })).status).to.equal(201);
    counters.arm(8 * 2);
    // 8 claims at once hold 5 points each while they run: 40, the whole budget after creating ann.
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => svc.call('POST', `/users/friend-${i}/claim-code`, { code: ann.referral_code })));
    expect(answers.map((answer) => answer.status)).to.deep.equal(Array(8).fill(200));
    // In the end each cost 1: the caller spent 1 (creating ann) + 8 + 1 now.
    const next = await svc.call('POST', '/users', { app_user_id: 'late' });
    expect(next.status).to.equal(201);
    expect(next.headers.get('ratelimit')).to.match(/^"commands-caller";r=31;t=60/);
  });

  it('let a 40-way burst of claims that succeed through a budget of 120 whole: a request over budget only by what claims in flight hold waits for them', async () => {
    const { svc, counters } = await startWithBursts({ RATE_LIMIT_COMMANDS: '120/60s' });
    await putProgram(svc, 'p', {});
    const ann = await createUser(svc, 'ann');
    for (let i = 0; i < 40; i++) expect((await svc.admin('POST', `/users`, { app_user_id: `nat-${i}` })).status).to.equal(201);
    counters.arm(40 * 2);
    // 40 claims at once hold 200 points while they run; each costs 1 once it succeeds.
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => svc.call('POST', `/users/nat-${i}/claim-code`, { code: ann.referral_code })));
    expect(answers.map((answer) => answer.status).join(' ')).to.equal(Array(40).fill(200).join(' '));
    // 1 (creating ann) + 40 claims: 79 of 120 left.
    const next = await svc.call('POST', '/users', { app_user_id: 'after-burst' });
    expect(next.headers.get('ratelimit')).to.match(/^"commands-caller";r=78;t=60/);
    expect(await events(svc, 'type=CodeClaimed')).to.have.length(40);
  });

  it('let claims that succeed through whole even when those waiting outnumber the budget left: they wait again, not refuse one another', async () => {
    // 12 claims at once with 23 points left: 4 run, 8 wait; when the 4 give back their holds, the 8
    // taking 4 points each at once overflow the budget, though each costs 1 in the end (abuse probe: 6 of 10 passed).
    const { svc, counters } = await startWithBursts({ RATE_LIMIT_COMMANDS: '24/60s' });
    await putProgram(svc, 'p', {});
    const ann = await createUser(svc, 'ann');
    for (let i = 0; i < 12; i++) expect((await svc.admin('POST', '/users', { app_user_id: `cgn-${i}` })).status).to.equal(201);
    counters.arm(12 * 2);
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => svc.call('POST', `/users/cgn-${i}/claim-code`, { code: ann.referral_code })));
    expect(answers.map((answer) => answer.status).join(' ')).to.equal(Array(12).fill(200).join(' '));
    // 1 (creating ann) + 12 claims + 1 now: 10 of 24 left.
    const next = await svc.call('POST', '/users', { app_user_id: 'after-burst' });
    expect(next.headers.get('ratelimit')).to.match(/^"commands-caller";r=10;t=60/);
  });

  it('let more claims wait than the budget has room for without their waiting filling it: 40 at once with 23 points left pass as many as one by one', async () => {
    // Those waiting kept a point each while they waited: 36 waiting on 23 points left filled the
    // budget, and only 4 of 40 passed (abuse probe); one by one, 19 pass (each needs 5 points of room).
    const { svc, counters } = await startWithBursts({ RATE_LIMIT_COMMANDS: '24/60s' });
    await putProgram(svc, 'p', {});
    const ann = await createUser(svc, 'ann');
    for (let i = 0; i < 40; i++) expect((await svc.admin('POST', '/users', { app_user_id: `many-${i}` })).status).to.equal(201);
    counters.arm(40 * 2);
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => svc.call('POST', `/users/many-${i}/claim-code`, { code: ann.referral_code })));
    const passed = answers.filter((answer) => answer.status === 200).length;
    expect(answers.every((answer) => answer.status === 200 || answer.status === 429)).to.equal(true);
    // 19 when every round of waiting fits in the second a request waits (a slow machine may run out of it first).
    expect(passed).to.be.within(15, 19);
    expect(await events(svc, 'type=CodeClaimed')).to.have.length(passed);
  });

  it('answer a claim that succeeded 200 even when the store fails to take its refund', async () => {
    const svc = await start({}, undefined, undefined, (embedded) => ({
      ...embedded,
      rateLimits: {
        hit: (key, points, windowMs, nowMs) =>
          points < 0 ? Promise.reject(new Error('refunds are down')) : embedded.rateLimits.hit(key, points, windowMs, nowMs),
        removeExpired: (nowMs) => embedded.rateLimits.removeExpired(nowMs),
        close: () => embedded.rateLimits.close(),
      },
    }));
    await putProgram(svc, 'p', {});
    const ann = await createUser(svc, 'ann');
    await createUser(svc, 'bob');
    const claimed = await svc.call('POST', '/users/bob/claim-code', { code: ann.referral_code });
    expect(claimed.status).to.equal(200);
    // The headers show the counters as charged (the refund did not land).
    expect(claimed.headers.get('ratelimit')).to.contain('"claims-user";r=5;t=3600');
  });

  it('are off with RATE_LIMITS=off: no headers, no 429', async () => {
    const svc = await start({ RATE_LIMITS: 'off' });
    for (let i = 0; i < 5; i++) {
      const answer = await svc.call('GET', '/codes/NOPE42');
      expect(answer.status).to.equal(404);
      expect(answer.headers.get('ratelimit')).to.equal(null);
    }
  });

  it('are described in /openapi.json: 429 and the headers on every operation that needs a key', async () => {
    const svc = await start();
    const document = (await (await fetch(`${svc.url}/openapi.json`)).json()) as any;
    expect(document.components.headers).to.have.keys('RequestId', 'RateLimit', 'RateLimitPolicy', 'RetryAfter', 'RetryAfterBehind');
    for (const [path, item] of Object.entries<any>(document.paths)) {
      for (const [method, operation] of Object.entries<any>(item)) {
        // A revenue notification's sender proves itself by its own scheme, not an API key: never limited.
        const keyed = (operation.security ?? []).some((scheme: Record<string, unknown>) => 'apiKey' in scheme);
        expect(Boolean(operation.responses['429']), `${method} ${path}`).to.equal(keyed);
        if (!keyed) continue;
        expect(operation.responses['429'].headers).to.have.keys('x-request-id', 'RateLimit', 'RateLimit-Policy', 'Retry-After');
        expect(operation.responses['200'] ?? operation.responses['201'] ?? operation.responses['204']).to.have.nested.property('headers.RateLimit');
      }
    }
    expect(CLIENT_KEY).to.not.equal(SECRET_KEY);
  });
});
