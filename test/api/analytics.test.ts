import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { defaultProjections } from '../support/projections.js';
import { EventLog } from '../../src/application/event-log.js';
import { replayProjections } from '../../src/application/projections/projection-replay.js';
import type { ReadStore } from '../../src/ports/read-store.js';
import { TOKENS } from '../../src/ports/tokens.js';
import { countDaily, countTopCodes } from '../support/analytics-history.js';
import { createUser, eventually, never, putAffiliate, putProgram, putPromo, putReward } from '../support/fixtures.js';
import { chargeRefunded, invoicePaid, STRIPE_SECRET, stripeEvent } from '../support/revenue-senders.js';
import { CLIENT_KEY, ManualClock, SECRET_KEY, startTestService, type TestService } from '../support/test-service.js';

const DAY = 86_400_000;
/** Day 0 of the scripted history: noon UTC, so hours added stay on the same day. */
const START = new Date('2026-04-10T12:00:00.000Z');
const day = (offset: number) => new Date(START.getTime() + offset * DAY).toISOString().slice(0, 10);

/** Every event of the log, oldest first, paged through GET /admin/events. */
async function allEvents(svc: TestService) {
  const events: { type: string; data: any }[] = [];
  let after: string | null = null;
  for (;;) {
    const page: any = await svc.admin('GET', `/admin/events?limit=1000${after === null ? '' : `&after=${after}`}`);
    expect(page.status).to.equal(200);
    events.push(...page.body.data.events);
    after = page.body.data.next_after;
    if (after === null || page.body.data.events.length === 0) return events;
  }
}

describe('API: analytics (SPEC §14)', function () {
  this.timeout(60_000);
  let svc: TestService;
  const clock = new ManualClock(START);

  const claim = async (claimer: string, code: string) => {
    await createUser(svc, claimer);
    const response = await svc.call('POST', `/users/${claimer}/claim-code`, { code });
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
  };
  const premium = async (user: string, isPremium: boolean) => createUser(svc, user, { is_premium: isPremium, is_trial: false });
  const daily = async (query: string) => svc.admin('GET', `/admin/analytics/daily?${query}`);
  const topCodes = async (query: string) => svc.admin('GET', `/admin/analytics/top-codes?${query}`);

  before(async () => {
    svc = await startTestService({ clock, env: { STRIPE_WEBHOOK_SECRET: STRIPE_SECRET } });
    await putReward(svc, 'coins', { kind: 'credit', name: 'Coins', credits: 10 });
    const coins = [{ reward_key: 'coins', activation: { variant: 'claim' }, deactivation: never }];
    await putProgram(svc, 'prog', { rewards: { receiver: coins } });
    await putPromo(svc, 'SPRING', { rewards: coins });
    await createUser(svc, 'acme-owner');
    await putAffiliate(svc, 'acme', { codes: ['ACME1'], app_user_id: 'acme-owner' });
    const code1: string = (await createUser(svc, 'r1')).referral_code;
    const code2: string = (await createUser(svc, 'r2')).referral_code;

    // Day 0: two claims of r1's code, one of the promo code.
    await claim('a1', code1);
    await claim('a2', code1);
    await claim('a3', 'spring');
    // Day 1: r2's code and the affiliate's; a1 converts; a3 withdraws its coins.
    clock.advance(DAY);
    await claim('a4', code2);
    await claim('a5', 'ACME1');
    await premium('a1', true);
    expect((await svc.call('POST', '/users/a3/rewards/withdraw-credits', { key: 'coins', amount: 4 })).status).to.equal(200);
    // Day 2, late in the evening: a1 churns, a2 converts, a4 pays (Stripe) and withdraws.
    clock.advance(DAY + 10 * 3_600_000);
    await premium('a1', false);
    await premium('a2', true);
    await createUser(svc, 'a4', { payment_customer_id: 'cus_a4' });
    expect((await stripeEvent(svc, invoicePaid('a4-1', 'cus_a4', 1_299))).body.data.status).to.equal('applied');
    expect((await svc.call('POST', '/users/a4/rewards/withdraw-credits', { key: 'coins', amount: 10 })).status).to.equal(200);
    // A user who claimed nothing pays too: not in the analytics.
    await createUser(svc, 'loner', { payment_customer_id: 'cus_loner' });
    expect((await stripeEvent(svc, invoicePaid('loner-1', 'cus_loner', 500))).body.data.status).to.equal('applied');
    // Day 3 (just after midnight): a4's payment is refunded; one more promo claim.
    clock.advance(3 * 3_600_000);
    expect((await stripeEvent(svc, chargeRefunded('a4-r', 'cus_a4', 'in_a4-1', 1_299))).body.data.status).to.equal('applied');
    await claim('a6', 'SPRING');
    // The series is eventually consistent: wait until it shows the last claim.
    await eventually(async () => {
      const last = (await daily(`from=${day(3)}&to=${day(3)}`)).body.data.days[0];
      expect(last.claims).to.equal(1);
      expect(last.refunds).to.equal(1);
    });
  });

  after(async () => svc.stop());

  it('the daily series equals a count over the event log: one entry per day, zeros included, oldest first', async () => {
    const events = await allEvents(svc);
    const response = await daily(`from=${day(-2)}&to=${day(5)}`);
    expect(response.status).to.equal(200);
    expect(response.body.data.from).to.equal(day(-2));
    expect(response.body.data.to).to.equal(day(5));
    expect(response.body.data.days).to.deep.equal(countDaily(events, day(-2), day(5)));
    // And the count is the scripted history's.
    expect(response.body.data.days.map((entry: any) => [entry.claims, entry.conversions, entry.churns, entry.refunds])).to.deep.equal([
      [0, 0, 0, 0],
      [0, 0, 0, 0],
      [3, 0, 0, 0],
      [2, 1, 0, 0],
      [0, 1, 1, 0],
      [1, 0, 0, 1],
      [0, 0, 0, 0],
      [0, 0, 0, 0],
    ]);
    expect(response.body.data.days[4].revenue).to.deep.equal([{ currency: 'EUR', gross_minor: 1_299, refunded_minor: 0 }]);
    expect(response.body.data.days[5].revenue).to.deep.equal([{ currency: 'EUR', gross_minor: 0, refunded_minor: 1_299 }]);
    expect(response.body.data.days[0].revenue).to.deep.equal([]);
  });

  it('filters by program, by code (any case) and by both', async () => {
    const events = await allEvents(svc);
    const r1Code = (await svc.call('GET', '/users/r1')).body.data.user.referral_code as string;
    const r1Program = 'prog';
    for (const [query, filter] of [
      [`program_id=${r1Program}`, { programId: r1Program }],
      ['program_id=nothing', { programId: 'nothing' }],
      ['code=spring', { code: 'SPRING' }],
      [`code=${r1Code}`, { code: r1Code }],
      [`program_id=${r1Program}&code=${r1Code}`, { programId: r1Program, code: r1Code }],
      [`program_id=nothing&code=${r1Code}`, { programId: 'nothing', code: r1Code }],
    ] as const) {
      const response = await daily(`from=${day(-1)}&to=${day(4)}&${query}`);
      expect(response.status, query).to.equal(200);
      expect(response.body.data.days, query).to.deep.equal(countDaily(events, day(-1), day(4), filter));
    }
    const promo = (await daily(`from=${day(0)}&to=${day(3)}&code=SPRING`)).body.data.days;
    expect(promo.map((entry: any) => entry.claims)).to.deep.equal([1, 0, 0, 1]);
  });

  it('top codes: highest first with kind, program and owner; each ranking equals a count over the log', async () => {
    const events = await allEvents(svc);
    const users = async (id: string) => (await svc.call('GET', `/users/${id}`)).body.data.user;
    const [r1, r2] = [await users('r1'), await users('r2')];
    const response = await topCodes(`from=${day(0)}&to=${day(3)}`);
    expect(response.status).to.equal(200);
    const byCode = Object.fromEntries(response.body.data.codes.map((row: any) => [row.code, row]));
    expect(response.body.data.codes.map((row: any) => row.code)).to.deep.equal(
      [
        [r1.referral_code, 2],
        ['SPRING', 2],
        ['ACME1', 1],
        [r2.referral_code, 1],
      ]
        .sort((a, b) => (b[1] as number) - (a[1] as number) || (a[0] < b[0] ? -1 : 1))
        .map(([code]) => code),
    );
    expect(byCode[r1.referral_code]).to.deep.equal({
      code: r1.referral_code,
      kind: 'referral',
      program_id: 'prog',
      app_user_id: 'r1',
      claims: 2,
      conversions: 2,
      revenue: [],
    });
    expect(byCode.SPRING).to.include({ kind: 'promo', program_id: null, app_user_id: null, claims: 2 });
    expect(byCode.ACME1).to.include({ kind: 'affiliate', app_user_id: 'acme-owner', claims: 1 });
    expect(byCode[r2.referral_code].revenue).to.deep.equal([{ currency: 'EUR', gross_minor: 1_299, refunded_minor: 1_299 }]);
    for (const by of ['claims', 'conversions', 'revenue'] as const) {
      for (const [from, to, programId, limit] of [
        [day(0), day(3), null, 10],
        [day(1), day(2), null, 2],
        [day(0), day(3), 'prog', 1],
        [day(2), day(2), null, 100],
      ] as const) {
        const query = `from=${from}&to=${to}&by=${by}&limit=${limit}${programId ? `&program_id=${programId}` : ''}`;
        const ranked = await topCodes(query);
        expect(ranked.status, query).to.equal(200);
        const expected = countTopCodes(events, { from, to, programId, by, limit });
        expect(
          ranked.body.data.codes.map(({ code, claims, conversions, revenue }: any) => ({ code, claims, conversions, revenue })),
          query,
        ).to.deep.equal(expected);
      }
    }
    // Revenue: a refunded payment nets to zero, so no code has revenue above zero over days 2–3.
    expect((await topCodes(`from=${day(2)}&to=${day(3)}&by=revenue`)).body.data.codes).to.deep.equal([]);
    expect((await topCodes(`from=${day(2)}&to=${day(2)}&by=revenue`)).body.data.codes.map((row: any) => row.code)).to.deep.equal([r2.referral_code]);
    expect((await topCodes(`from=${day(0)}&to=${day(3)}&limit=1`)).body.data.codes).to.have.length(1);
  });

  it('top codes lists 10 without a limit; a code of 64 characters is a code', async () => {
    clock.set(new Date(START.getTime() + 20 * DAY));
    for (let index = 0; index < 11; index += 1) {
      await putPromo(svc, `TEN${index}`, {});
      await claim(`ten-${index}`, `TEN${index}`);
    }
    const range = `from=${day(20)}&to=${day(20)}`;
    await eventually(async () => expect((await daily(range)).body.data.days[0].claims).to.equal(11));
    expect((await topCodes(range)).body.data.codes).to.have.length(10);
    expect((await topCodes(`${range}&limit=11`)).body.data.codes).to.have.length(11);
    expect((await daily(`${range}&code=${'A'.repeat(64)}`)).status).to.equal(200);
  });

  it('366 days is the longest range; the replayed read model answers the same', async () => {
    const before = await daily(`from=${day(-365)}&to=${day(0)}`);
    expect(before.status).to.equal(200);
    expect(before.body.data.days).to.have.length(366);
    const log = svc.service.container.resolve(EventLog);
    const readStore = svc.service.container.resolve<ReadStore>(TOKENS.ReadStore);
    const series = (await daily(`from=${day(-1)}&to=${day(4)}`)).body;
    const top = (await topCodes(`from=${day(-1)}&to=${day(4)}&by=conversions`)).body;
    expect(await replayProjections(log, readStore, defaultProjections)).to.equal('switched');
    expect((await daily(`from=${day(-1)}&to=${day(4)}`)).body).to.deep.equal(series);
    expect((await topCodes(`from=${day(-1)}&to=${day(4)}&by=conversions`)).body).to.deep.equal(top);
  });

  it('400 BAD_REQUEST naming the parameter for a missing, malformed or impossible date, a reversed or too long range, a bad by, limit, program or code', async () => {
    const cases: [string, string][] = [
      ['', 'query:/from'],
      [`to=${day(0)}`, 'query:/from'],
      [`from=${day(0)}`, 'query:/to'],
      [`from=2026-4-1&to=${day(0)}`, 'query:/from'],
      [`from=${day(0)}&to=2026-04-10T00:00:00Z`, 'query:/to'],
      [`from=2026-02-30&to=2026-03-01`, 'query:/from'],
      [`from=2026-01-01&to=2026-13-01`, 'query:/to'],
      [`from=${day(0)}&from=${day(1)}&to=${day(2)}`, 'query:/from'],
      [`from=${day(1)}&to=${day(0)}`, 'query:/from'],
      [`from=${day(-366)}&to=${day(0)}`, 'query:/to'],
      [`from=0001-01-01&to=9999-12-31`, 'query:/to'],
      [`from=${day(0)}&to=${day(1)}&program_id=a%20b`, 'query:/program_id'],
    ];
    for (const [query, source] of cases) {
      for (const path of ['/admin/analytics/daily', '/admin/analytics/top-codes']) {
        const response = await svc.admin('GET', `${path}?${query}`);
        expect(response.status, `${path}?${query}`).to.equal(400);
        expect(response.body.errors[0], `${path}?${query}`).to.include({ code: 'BAD_REQUEST', source });
      }
    }
    const range = `from=${day(0)}&to=${day(1)}`;
    for (const [query, source] of [
      [`${range}&code=a%20b`, 'query:/code'],
      [`${range}&code=`, 'query:/code'],
      [`${range}&code=${'A'.repeat(65)}`, 'query:/code'],
    ]) {
      const response = await daily(query!);
      expect(response.status, query).to.equal(400);
      expect(response.body.errors[0], query).to.include({ code: 'BAD_REQUEST', source });
    }
    for (const [query, source] of [
      [`${range}&by=money`, 'query:/by'],
      [`${range}&limit=0`, 'query:/limit'],
      [`${range}&limit=101`, 'query:/limit'],
      [`${range}&limit=2.5`, 'query:/limit'],
      [`${range}&limit=ten`, 'query:/limit'],
    ]) {
      const response = await topCodes(query!);
      expect(response.status, query).to.equal(400);
      expect(response.body.errors[0], query).to.include({ code: 'BAD_REQUEST', source });
    }
  });

  it('needs the secret key: none → 401, a client key → 403', async () => {
    for (const path of ['/admin/analytics/daily', '/admin/analytics/top-codes']) {
      const none = await fetch(`${svc.url}${path}?from=${day(0)}&to=${day(1)}`);
      expect(none.status).to.equal(401);
      const client = await fetch(`${svc.url}${path}?from=${day(0)}&to=${day(1)}`, { headers: { 'x-api-key': CLIENT_KEY } });
      expect(client.status).to.equal(403);
      const post = await svc.admin('POST', `${path}?from=${day(0)}&to=${day(1)}`, {});
      expect(post.status).to.equal(405);
    }
  });
});

describe('API: top codes by revenue when a later day nets a refund below zero (docs/analytics.md: exact in every case)', function () {
  this.timeout(60_000);

  it('ranks by the net over the whole range, whatever a single day of it nets', async () => {
    const clock = new ManualClock(new Date('2026-11-19T12:00:00.000Z'));
    const svc = await startTestService({ clock, env: { STRIPE_WEBHOOK_SECRET: STRIPE_SECRET } });
    try {
      for (const code of ['PRA', 'PRB', 'PRU', 'PRY']) {
        await putPromo(svc, code, {});
        await createUser(svc, `u-${code}`, { payment_customer_id: `cus_${code}` });
        expect((await svc.call('POST', `/users/u-${code}/claim-code`, { code })).status).to.equal(200);
      }
      const pay = async (code: string, invoice: string, amount: number) =>
        expect((await stripeEvent(svc, invoicePaid(invoice, `cus_${code}`, amount))).body.data.status).to.equal('applied');
      const refund = async (code: string, id: string, invoice: string, amount: number) =>
        expect((await stripeEvent(svc, chargeRefunded(id, `cus_${code}`, `in_${invoice}`, amount))).body.data.status).to.equal('applied');
      await pay('PRY', 'y1', 1000);
      clock.advance(DAY);
      await pay('PRA', 'a1', 100);
      await pay('PRB', 'b1', 100);
      await pay('PRU', 'u1', 100);
      clock.advance(DAY);
      // The last day nets -10 for PRB and -50 for PRY, whose payment came before the range.
      await refund('PRB', 'b1r', 'b1', 10);
      await refund('PRY', 'y1r', 'y1', 50);
      await eventually(async () =>
        expect((await svc.admin('GET', '/admin/analytics/daily?from=2026-11-21&to=2026-11-21')).body.data.days[0].refunds).to.equal(2),
      );
      const ranked = async (limit: number) =>
        (await svc.admin('GET', `/admin/analytics/top-codes?from=2026-11-20&to=2026-11-21&by=revenue&limit=${limit}`)).body.data.codes.map(
          (row: any) => row.code,
        );
      expect(await ranked(100)).to.deep.equal(['PRA', 'PRU', 'PRB']);
      expect(await ranked(2)).to.deep.equal(['PRA', 'PRU']);
    } finally {
      await svc.stop();
    }
  });
});

describe("API: the README's analytics examples, verbatim", function () {
  this.timeout(60_000);

  it('every curl of the section answers 200 with the documented shape', async () => {
    const readme = fs.readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const start = readme.indexOf('\n## For analysts: the analytics API');
    const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
    const [block] = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);
    expect(block).to.match(/^BASE=\$\{BASE:-http:\/\/localhost:8080\}\n/);
    const svc = await startTestService({ env: { SECRET_API_KEYS: `${SECRET_KEY},sk_demo` } });
    try {
      await createUser(svc, 'alice');
      // Asynchronously: the service answers from this process.
      const run = await promisify(execFile)('bash', ['-e', '-o', 'pipefail', '-c', block!], { env: { ...process.env, BASE: svc.url }, timeout: 30_000 });
      const answers = run.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(answers).to.have.length(5);
      for (const answer of answers.slice(0, 3)) expect(answer.data.days).to.have.length(30);
      for (const answer of answers.slice(3)) expect(answer.data.codes).to.be.an('array');
    } finally {
      await svc.stop();
    }
  });
});
