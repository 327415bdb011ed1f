import { expect } from 'chai';
import { createUser, never, putAffiliate, putProgram, putPromo, putReward } from '../support/fixtures.js';
import { CLIENT_KEY, startTestService, type TestService } from '../support/test-service.js';

describe('API: admin configuration (SPEC §7.1–§7.5)', () => {
  let svc: TestService;

  before(async () => {
    svc = await startTestService({ env: { REFERRAL_LINK_BASE: 'https://app.example/r/' } });
  });
  after(async () => svc.stop());

  it('403 FORBIDDEN for a client key, 401 without a key', async () => {
    const forbidden = await svc.call('GET', '/admin/rewards', undefined, { 'x-api-key': CLIENT_KEY });
    expect(forbidden.status).to.equal(403);
    expect(forbidden.body.errors[0]).to.include({ code: 'FORBIDDEN', status: 403 });
    expect((await svc.call('PUT', '/admin/rewards/x', { kind: 'basic', name: 'x' }, { 'x-api-key': '' })).status).to.equal(401);
    expect((await svc.call('POST', '/users/u/rewards/grant', { key: 'x' })).status).to.equal(403);
  });

  describe('rewards', () => {
    it('creates (201), updates (200), reads one and the collection', async () => {
      const created = await svc.admin('PUT', '/admin/rewards/bonus', { kind: 'credit', name: 'Bonus', credits: 10, metadata: { tier: 1 } });
      expect(created.status).to.equal(201);
      expect(created.body.data.reward).to.deep.include({
        kind: 'credit',
        key: 'bonus',
        name: 'Bonus',
        credits: 10,
        description: null,
        metadata: { tier: 1 },
        updated_at: null,
      });
      const updated = await svc.admin('PUT', '/admin/rewards/bonus', { kind: 'credit', name: 'Bigger name', credits: 10 });
      expect(updated.status).to.equal(200);
      expect(updated.body.data.reward.updated_at).to.be.a('string');
      expect(updated.body.data.reward.created_at).to.equal(created.body.data.reward.created_at);
      expect((await svc.admin('GET', '/admin/rewards/bonus')).body.data.reward.name).to.equal('Bigger name');
      expect((await svc.admin('GET', '/admin/rewards')).body.data.rewards.map((reward: any) => reward.key)).to.include('bonus');
    });

    it('422 REWARD.IMMUTABLE_FIELD when kind, credits or offer_code_id change', async () => {
      await svc.admin('PUT', '/admin/rewards/offer', {
        kind: 'offer_code',
        name: 'Offer',
        offer_code_id: 'oc1',
        offer_code_ref_name: 'ref',
        subscription_product_id: 'p1',
      });
      const changes: [string, object][] = [
        ['/credits', { kind: 'credit', name: 'Bonus', credits: 11 }],
        ['/kind', { kind: 'basic', name: 'Bonus' }],
      ];
      for (const [source, body] of changes) {
        const response = await svc.admin('PUT', '/admin/rewards/bonus', body);
        expect(response.status).to.equal(422);
        expect(response.body.errors[0]).to.include({ code: 'REWARD.IMMUTABLE_FIELD', source });
      }
      const offer = await svc.admin('PUT', '/admin/rewards/offer', {
        kind: 'offer_code',
        name: 'Offer',
        offer_code_id: 'oc2',
        offer_code_ref_name: 'ref',
        subscription_product_id: 'p1',
      });
      expect(offer.body.errors[0]).to.include({ code: 'REWARD.IMMUTABLE_FIELD', source: '/offer_code_id' });
    });

    it('400 for a bad key or a kind without its fields; 404 NOT_FOUND.REWARD', async () => {
      expect((await svc.admin('PUT', '/admin/rewards/Bad Key', { kind: 'basic', name: 'x' })).body.errors[0]).to.include({
        code: 'BAD_REQUEST',
        source: 'path:/key',
      });
      expect((await svc.admin('PUT', '/admin/rewards/c0', { kind: 'credit', name: 'x' })).body.errors[0]).to.include({
        code: 'BAD_REQUEST',
        source: '/credits',
      });
      expect((await svc.admin('PUT', '/admin/rewards/c0', { kind: 'credit', name: 'x', credits: 0 })).body.errors[0]).to.include({
        code: 'BAD_REQUEST',
        source: '/credits',
      });
      expect((await svc.admin('PUT', '/admin/rewards/c0', { kind: 'gift', name: 'x' })).body.errors[0]).to.include({ code: 'BAD_REQUEST', source: '/kind' });
      const missing = await svc.admin('GET', '/admin/rewards/missing');
      expect(missing.status).to.equal(404);
      expect(missing.body.errors[0].code).to.equal('NOT_FOUND.REWARD');
    });
  });

  describe('programs', () => {
    before(async () => {
      await putReward(svc, 'basic-1', { kind: 'basic', name: 'Basic' });
      await putReward(svc, 'offering', { kind: 'partner_offering', name: 'Offering', offering_id: 'o1', offering_key: 'ok' });
    });

    it("returns the seed's ReferralProgram with rewards grouped by kind and activation per kind", async () => {
      const response = await svc.admin('PUT', '/admin/programs/p1', {
        name: 'P1',
        distribution_percentage: 40,
        limit: 10,
        rewards: {
          sender: [
            { reward_key: 'bonus', activation: { variant: 'conversion', amount: 2, limit: 3 }, deactivation: never },
            { reward_key: 'basic-1', activation: { variant: 'claim', amount: 1 }, deactivation: { variant: 'interval', duration: 1, period: 'months' } },
          ],
          receiver: [{ reward_key: 'basic-1', activation: { variant: 'claim' }, deactivation: never }],
        },
      });
      expect(response.status).to.equal(201);
      const program = response.body.data.program;
      expect(program.rewards.sender.credit[0].activation).to.deep.equal({ variant: 'conversion', amount: 2, limit: 3 });
      expect(program.rewards.sender.basic[0].activation).to.deep.equal({ variant: 'claim', amount: 1 });
      expect(program.rewards.sender.basic[0].deactivation).to.deep.equal({ variant: 'interval', duration: 1, period: 'months' });
      expect(program.rewards.receiver.basic[0].activation).to.deep.equal({ variant: 'claim' });
      expect(Object.keys(program.rewards.receiver)).to.deep.equal([
        'basic',
        'credit',
        'offer_code',
        'store_promo_code',
        'partner_entitlement',
        'partner_offering',
      ]);
    });

    it('422 PROGRAM.REWARD_NOT_FOUND, PROGRAM.INVALID_ACTIVATION and PROGRAM.DISTRIBUTION_EXCEEDED', async () => {
      const unknown = await svc.admin('PUT', '/admin/programs/p2', {
        name: 'P2',
        distribution_percentage: 10,
        limit: 0,
        rewards: { sender: [], receiver: [{ reward_key: 'nope', activation: { variant: 'claim' }, deactivation: never }] },
      });
      expect(unknown.body.errors[0]).to.include({ code: 'PROGRAM.REWARD_NOT_FOUND', source: '/rewards/receiver/0/reward_key' });
      const invalid: object[] = [
        { sender: [{ reward_key: 'bonus', activation: { variant: 'claim', amount: 1 }, deactivation: never }], receiver: [] },
        { sender: [{ reward_key: 'basic-1', activation: { variant: 'claim', amount: 0 }, deactivation: never }], receiver: [] },
        { sender: [], receiver: [{ reward_key: 'offering', activation: { variant: 'conversion' }, deactivation: never }] },
      ];
      for (const rewards of invalid) {
        const response = await svc.admin('PUT', '/admin/programs/p2', { name: 'P2', distribution_percentage: 10, limit: 0, rewards });
        expect(response.status).to.equal(422);
        expect(response.body.errors[0].code).to.equal('PROGRAM.INVALID_ACTIVATION');
      }
      const exceeded = await svc.admin('PUT', '/admin/programs/p2', {
        name: 'P2',
        distribution_percentage: 61,
        limit: 0,
        rewards: { sender: [], receiver: [] },
      });
      expect(exceeded.body.errors[0]).to.include({ code: 'PROGRAM.DISTRIBUTION_EXCEEDED', source: '/distribution_percentage' });
      expect(
        (await svc.admin('PUT', '/admin/programs/p2', { name: 'P2', distribution_percentage: 60, limit: 0, rewards: { sender: [], receiver: [] } })).status,
      ).to.equal(201);
      expect((await svc.admin('GET', '/admin/programs/p3')).body.errors[0].code).to.equal('NOT_FOUND.PROGRAM');
    });

    it('400 for an out-of-range percentage', async () => {
      const response = await svc.admin('PUT', '/admin/programs/p4', { name: 'P4', distribution_percentage: 101, limit: 0, rewards: {} });
      expect(response.body.errors[0]).to.include({ code: 'BAD_REQUEST', source: '/distribution_percentage' });
    });
  });

  describe('promo codes and affiliates share one code namespace', () => {
    it('upper-cases codes and refuses a code already used with 422 CODE.TAKEN', async () => {
      const promo = await svc.admin('PUT', '/admin/promo-codes/summer24', { is_active: true, limit: 0, rewards: [] });
      expect(promo.status).to.equal(201);
      expect(promo.body.data.promo_code).to.deep.include({ code: 'SUMMER24', is_active: true, limit: 0, stats: { claims: 0, conversions: 0, refunds: 0 } });
      expect((await svc.admin('PUT', '/admin/promo-codes/SUMMER24', { is_active: false, limit: 3, rewards: [] })).status).to.equal(200);
      const taken = await svc.admin('PUT', '/admin/affiliates/acme', { status: 'approved', name: 'Acme', platforms: [], codes: ['summer24'], rewards: [] });
      expect(taken.status).to.equal(422);
      expect(taken.body.errors[0]).to.include({ code: 'CODE.TAKEN', source: '/codes/0' });
      expect((await svc.admin('PUT', '/admin/promo-codes/x', { is_active: true, limit: 0, rewards: [] })).body.errors[0]).to.include({
        code: 'BAD_REQUEST',
        source: 'path:/code',
      });
    });

    it('an affiliate refused for one taken code reserves none of its other codes, new or added on update', async () => {
      await putPromo(svc, 'OWNED1');
      const create = await svc.admin('PUT', '/admin/affiliates/leaky', {
        status: 'approved',
        name: 'Leaky',
        platforms: [],
        codes: ['free1', 'owned1'],
        rewards: [],
      });
      expect(create.status).to.equal(422);
      expect(create.body.errors[0]).to.include({ code: 'CODE.TAKEN', source: '/codes/1' });
      expect((await svc.admin('GET', '/admin/events?stream=code-FREE1')).body.data.events).to.deep.equal([]);
      expect((await svc.admin('PUT', '/admin/promo-codes/FREE1', { is_active: true, limit: 0, rewards: [] })).status).to.equal(201);

      await putAffiliate(svc, 'grower', { codes: ['GROW1'] });
      const update = await svc.admin('PUT', '/admin/affiliates/grower', {
        status: 'approved',
        name: 'Grower',
        platforms: [],
        codes: ['GROW1', 'GROW2', 'OWNED1'],
        rewards: [],
      });
      expect(update.body.errors[0]).to.include({ code: 'CODE.TAKEN', source: '/codes/2' });
      expect(
        (await svc.admin('PUT', '/admin/affiliates/other', { status: 'approved', name: 'Other', platforms: [], codes: ['GROW2'], rewards: [] })).status,
      ).to.equal(201);
    });

    it('affiliates racing for the same codes, asked in different orders: exactly one gets them all, the others reserve none of them', async () => {
      const codes = ['RACEA', 'RACEB', 'RACEC'];
      const orders = [codes, [...codes].reverse(), ['RACEB', 'RACEC', 'RACEA'], ['RACEC', 'RACEA', 'RACEB']];
      const answers = await Promise.all(
        Array.from({ length: 24 }, (_, index) =>
          svc.admin('PUT', `/admin/affiliates/racer-${index}`, {
            status: 'approved',
            name: `Racer ${index}`,
            platforms: [],
            codes: orders[index % 4],
            rewards: [],
          }),
        ),
      );
      const won = answers.flatMap((answer, index) => (answer.status === 201 ? [index] : []));
      expect(won).to.have.length(1);
      for (const answer of answers) if (answer.status !== 201) expect(answer.body.errors[0].code).to.equal('CODE.TAKEN');
      for (const code of codes) {
        const [reserved] = (await svc.admin('GET', `/admin/events?stream=code-${code}&limit=1`)).body.data.events;
        expect(reserved.data.owner_id, code).to.equal(`racer-${won[0]}`);
        expect((await svc.call('GET', `/codes/${code}`)).body.data).to.include({ type: 'affiliate', code });
      }
    });

    it("a promo cannot take an affiliate's code", async () => {
      await putProgram(svc, 'everyone', { distribution_percentage: 0 });
      await putPromo(svc, 'FRESH1');
      // Codes of every kind live in code-{CODE}; a second owner of any kind is refused.
      await putAffiliate(svc, 'owner', { codes: ['SHARED1'] });
      const response = await svc.admin('PUT', '/admin/promo-codes/shared1', { is_active: true, limit: 0, rewards: [] });
      expect(response.body.errors[0].code).to.equal('CODE.TAKEN');
    });

    it("neither a promo nor an affiliate can take a user's referral code (422 CODE.TAKEN)", async () => {
      const user = await createUser(svc, 'code-owner');
      const promo = await svc.admin('PUT', `/admin/promo-codes/${user.referral_code}`, { is_active: true, limit: 0, rewards: [] });
      expect(promo.status).to.equal(422);
      expect(promo.body.errors[0]).to.include({ code: 'CODE.TAKEN', source: 'path:/code' });
      const affiliate = await svc.admin('PUT', '/admin/affiliates/taker', {
        status: 'approved',
        name: 'Taker',
        platforms: [],
        codes: [user.referral_code.toLowerCase()],
        rewards: [],
      });
      expect(affiliate.status).to.equal(422);
      expect(affiliate.body.errors[0]).to.include({ code: 'CODE.TAKEN', source: '/codes/0' });
      // No promo was made of it.
      expect((await svc.admin('GET', `/admin/promo-codes/${user.referral_code}`)).status).to.equal(404);
    });

    it('404 NOT_FOUND.PROMO_CODE for a promo code never defined', async () => {
      const response = await svc.admin('GET', '/admin/promo-codes/NEVERSEEN1');
      expect(response.status).to.equal(404);
      expect(response.body.errors[0]).to.include({ code: 'NOT_FOUND.PROMO_CODE', status: 404 });
    });

    it('422 CODE.REWARD_NOT_FOUND and AFFILIATE.REWARD_NOT_FOUND for an entry naming a reward that does not exist; nothing is stored', async () => {
      const entry = { reward_key: 'no-such-reward', activation: { variant: 'claim' }, deactivation: never };
      const promo = await svc.admin('PUT', '/admin/promo-codes/GHOSTREWARD', { is_active: true, limit: 0, rewards: [entry] });
      expect(promo.status).to.equal(422);
      expect(promo.body.errors[0]).to.include({ code: 'CODE.REWARD_NOT_FOUND', source: '/rewards/0/reward_key' });
      expect((await svc.admin('GET', '/admin/promo-codes/GHOSTREWARD')).status).to.equal(404);
      const affiliate = await svc.admin('PUT', '/admin/affiliates/ghost', {
        status: 'approved',
        name: 'Ghost',
        platforms: [],
        codes: ['GHOSTAFF'],
        rewards: [entry],
      });
      expect(affiliate.status).to.equal(422);
      expect(affiliate.body.errors[0]).to.include({ code: 'AFFILIATE.REWARD_NOT_FOUND', source: '/rewards/0/reward_key' });
      expect((await svc.admin('GET', '/admin/affiliates/ghost')).status).to.equal(404);
    });

    it('returns affiliates with code links and stats; banned is final (422 AFFILIATE.BANNED)', async () => {
      const affiliate = await putAffiliate(svc, 'influencer', {
        name: 'Influencer',
        logo_url: 'https://cdn.example/logo.png',
        platforms: [{ type: 'youtube', handle: '@inf', verified: true }],
        codes: ['INF1', 'inf2'],
      });
      expect(affiliate.data.affiliate.codes).to.deep.equal([
        { code: 'INF1', code_link: 'https://app.example/r/INF1' },
        { code: 'INF2', code_link: 'https://app.example/r/INF2' },
      ]);
      // SPEC §11: admin views' stats gain `refunds`.
      expect(affiliate.data.affiliate.stats).to.deep.equal({ claims: 0, conversions: 0, earnings: 0, refunds: 0 });
      await putAffiliate(svc, 'influencer', { status: 'banned', name: 'Influencer', codes: ['INF1'] });
      const response = await svc.admin('PUT', '/admin/affiliates/influencer', { status: 'approved', name: 'x', platforms: [], codes: [], rewards: [] });
      expect(response.status).to.equal(422);
      expect(response.body.errors[0].code).to.equal('AFFILIATE.BANNED');
      expect((await svc.admin('PUT', '/admin/affiliates/x', { status: 'famous', name: 'x', platforms: [], codes: [], rewards: [] })).body.errors[0]).to.include(
        { code: 'BAD_REQUEST', source: '/status' },
      );
      expect((await svc.admin('GET', '/admin/affiliates/nobody')).body.errors[0].code).to.equal('NOT_FOUND.AFFILIATE');
    });
  });

  describe('collections read a page at a time (GET /admin/rewards, /admin/promo-codes, /admin/affiliates ?limit=&after=)', () => {
    const collections = [
      { path: '/admin/rewards', plural: 'rewards', id: 'key', make: (n: number) => putReward(svc, `paged-${n}`, { kind: 'basic', name: `Paged ${n}` }) },
      { path: '/admin/promo-codes', plural: 'promo_codes', id: 'code', make: (n: number) => putPromo(svc, `PAGED${n}`) },
      { path: '/admin/affiliates', plural: 'affiliates', id: 'id', make: (n: number) => putAffiliate(svc, `paged-${n}`, { codes: [`PAGEDAFF${n}`] }) },
    ];

    it('pages through the whole collection in id order, with next_after null on the last page and without limit', async () => {
      for (const collection of collections) {
        for (let n = 0; n < 7; n++) await collection.make(n);
        const whole = (await svc.admin('GET', collection.path)).body.data;
        expect(whole.next_after, collection.path).to.equal(null);
        const ids = whole[collection.plural].map((item: Record<string, string>) => item[collection.id]);
        expect(ids, collection.path).to.deep.equal([...ids].sort());
        for (const limit of [1, 3, ids.length, 1000]) {
          const paged: unknown[] = [];
          let pages = 0;
          for (let after: string | null = null; ; ) {
            const page = await svc.admin('GET', `${collection.path}?limit=${limit}${after === null ? '' : `&after=${encodeURIComponent(after)}`}`);
            expect(page.status).to.equal(200);
            const items = page.body.data[collection.plural];
            expect(items.length).to.be.at.most(limit);
            paged.push(...items);
            pages += 1;
            after = page.body.data.next_after;
            if (after === null) break;
            expect(after).to.equal(items[items.length - 1][collection.id]);
          }
          expect(paged, `${collection.path} by ${limit}`).to.deep.equal(whole[collection.plural]);
          expect(pages).to.equal(Math.max(1, Math.ceil(ids.length / limit)));
        }
        // `after` alone: every one after it.
        const rest = (await svc.admin('GET', `${collection.path}?after=${encodeURIComponent(ids[2])}`)).body.data;
        expect(rest[collection.plural]).to.deep.equal(whole[collection.plural].slice(3));
        expect(rest.next_after).to.equal(null);
      }
    });

    it('an admin operation that takes no query parameter refuses one (400 naming it) rather than answering as if it were read', async () => {
      for (const path of ['/admin/programs', '/admin/webhooks', '/admin/rules', '/admin/store/offer-codes']) {
        const answer = await svc.admin('GET', `${path}?limit=1`);
        expect(answer.body.errors?.[0], path).to.include({ status: 400, code: 'BAD_REQUEST', source: 'query:/limit' });
        expect((await svc.admin('GET', path)).status, path).to.equal(200);
      }
      // The app's operations are not affected, whichever key they take: an app may add what it likes.
      expect((await svc.call('GET', '/codes/NOPE?cache=1')).body.errors[0].code).to.equal('NOT_FOUND.CODE');
      const grant = await svc.admin('POST', '/users/nobody/rewards/grant?trace=1', { key: 'nope' });
      expect(grant.body.errors[0].code).to.not.equal('BAD_REQUEST');
    });

    it('refuses a bad limit or cursor with 400 BAD_REQUEST naming it', async () => {
      for (const { path } of collections) {
        for (const query of ['limit=0', 'limit=1001', 'limit=abc', 'limit=1.5', 'limit=', 'after=']) {
          const answer = await svc.admin('GET', `${path}?${query}`);
          expect(answer.status, `${path}?${query}`).to.equal(400);
          expect(answer.body.errors[0].source, `${path}?${query}`).to.equal(`query:/${query.split('=')[0]}`);
        }
      }
    });
  });

  describe('code pools', () => {
    it('adds codes, skips values already there, and reports what is available', async () => {
      await putReward(svc, 'promo-pool', { kind: 'store_promo_code', name: 'Store promo' });
      const codes = [
        { value: 'AAA', expires_at: '2099-01-01T00:00:00Z' },
        { value: 'BBB', expires_at: '2099-01-01T00:00:00Z' },
        { value: 'OLD', expires_at: '2000-01-01T00:00:00Z' },
      ];
      const first = await svc.admin('POST', '/admin/rewards/promo-pool/codes', { codes });
      expect(first.body.data).to.deep.equal({ added: 3, skipped: 0, available: 2 });
      const second = await svc.admin('POST', '/admin/rewards/promo-pool/codes', { codes: [codes[0], { value: 'CCC', expires_at: '2099-01-01T00:00:00Z' }] });
      expect(second.body.data).to.deep.equal({ added: 1, skipped: 1, available: 3 });
      const figures = await svc.admin('GET', '/admin/rewards/promo-pool/codes');
      expect(figures.status).to.equal(200);
      expect(figures.body.data).to.deep.equal({ available: 3, used: 0, expired: 1, waiting: 0 });
    });

    it('takes the 10,000 codes a call may carry (a body over 64 KiB), and refuses a body over 4 MiB with 413', async () => {
      await putReward(svc, 'bulk-pool', { kind: 'offer_code', name: 'Bulk', offer_code_id: 'bulk', offer_code_ref_name: 'ref', subscription_product_id: 'p1' });
      const codes = Array.from({ length: 10_000 }, (_, index) => ({
        value: `BULK-${String(index).padStart(5, '0')}`,
        link: `https://apps.apple.com/redeem?ctx=offercodes&id=1234567890&code=BULK-${index}`,
        expires_at: '2099-01-01T00:00:00Z',
      }));
      expect(JSON.stringify({ codes }).length).to.be.greaterThan(1024 * 1024);
      const added = await svc.admin('POST', '/admin/rewards/bulk-pool/codes', { codes });
      expect(added.status).to.equal(200);
      expect(added.body.data).to.deep.equal({ added: 10_000, skipped: 0, available: 10_000 });
      const huge = await svc.admin('POST', '/admin/rewards/bulk-pool/codes', {
        codes: [{ value: 'X', link: 'x'.repeat(5 * 1024 * 1024), expires_at: '2099-01-01T00:00:00Z' }],
      });
      expect(huge.status).to.equal(413);
      expect(huge.body.errors[0]).to.include({ code: 'BODY_TOO_LARGE', message: 'The body is larger than 4 MiB' });
      // Elsewhere the limit stays 64 KiB.
      const user = await svc.call('POST', '/users', { app_user_id: 'big-body', metadata: { blob: 'x'.repeat(70_000) } });
      expect(user.body.errors[0]).to.include({ code: 'BODY_TOO_LARGE', message: 'The body is larger than 64 KiB' });
    });

    it('needs a link for offer_code pools (400), a pooled kind (422) and a known reward (404)', async () => {
      const noLink = await svc.admin('POST', '/admin/rewards/offer/codes', { codes: [{ value: 'X', expires_at: '2099-01-01T00:00:00Z' }] });
      expect(noLink.body.errors[0]).to.include({ code: 'BAD_REQUEST', source: '/codes/0/link' });
      expect(
        (await svc.admin('POST', '/admin/rewards/bonus/codes', { codes: [{ value: 'X', expires_at: '2099-01-01T00:00:00Z' }] })).body.errors[0].code,
      ).to.equal('REWARD.NOT_POOLED');
      expect((await svc.admin('POST', '/admin/rewards/none/codes', { codes: [{ value: 'X', expires_at: '2099-01-01T00:00:00Z' }] })).status).to.equal(404);
      expect((await svc.admin('GET', '/admin/rewards/bonus/codes')).body.errors[0].code).to.equal('REWARD.NOT_POOLED');
      expect((await svc.admin('GET', '/admin/rewards/none/codes')).body.errors[0].code).to.equal('NOT_FOUND.REWARD');
    });
  });

  it("the document's error examples with a source built from the request are what these requests get", async () => {
    const document = (await svc.call('GET', '/openapi.json')).body;
    const example = (method: string, path: string, status: number) =>
      document.paths[path][method.toLowerCase()].responses[String(status)].content['application/json'].example.errors[0];
    await putReward(svc, 'examples-credit', { kind: 'credit', name: 'C', credits: 10 });
    const cases: [string, string, string, unknown][] = [
      ['PUT', '/admin/rewards/{key}', '/admin/rewards/examples-credit', { kind: 'credit', name: 'C', credits: 11 }],
      [
        'PUT',
        '/admin/programs/{id}',
        '/admin/programs/examples',
        {
          name: 'E',
          distribution_percentage: 0,
          limit: 0,
          rewards: { sender: [{ reward_key: 'coins', activation: { variant: 'claim', amount: 1, limit: 0 }, deactivation: never }], receiver: [] },
        },
      ],
      [
        'PUT',
        '/admin/promo-codes/{code}',
        '/admin/promo-codes/EXAMPLES',
        { is_active: true, limit: 0, rewards: [{ reward_key: 'coins', activation: { variant: 'claim' }, deactivation: never }] },
      ],
      [
        'PUT',
        '/admin/affiliates/{id}',
        '/admin/affiliates/examples',
        {
          status: 'approved',
          name: 'E',
          platforms: [],
          codes: ['EXAMPLESAFF'],
          rewards: [{ reward_key: 'coins', activation: { variant: 'claim' }, deactivation: never }],
        },
      ],
      ['GET', '/admin/store/offer-codes/{offer_code_id}', '/admin/store/offer-codes/summer-offer', undefined],
    ];
    for (const [method, documented, path, body] of cases) {
      const answer = await svc.admin(method, path, body);
      const shown = example(method, documented, answer.status);
      expect({ code: answer.body.errors[0].code, source: answer.body.errors[0].source }, `${method} ${path}`).to.deep.equal({
        code: shown.code,
        source: shown.source,
      });
    }
  });

  describe('offer code references (runs last: it creates the store catalog)', () => {
    it('422 REWARD.OFFER_CODE_UNKNOWN only once a catalog exists and the offer code is not in it', async () => {
      const offer = (id: string) => ({ kind: 'offer_code', name: 'Offer', offer_code_id: id, offer_code_ref_name: 'ref', subscription_product_id: 'p1' });
      expect((await svc.admin('PUT', '/admin/rewards/before-catalog', offer('anything'))).status).to.equal(201);
      const catalogEntry = {
        offer_code: {
          name: 'Half price',
          customer_eligibilities: ['NEW'],
          offer_eligibility: 'STACK_WITH_INTRO_OFFERS',
          duration: 'THREE_MONTHS',
          offer_mode: 'PAY_AS_YOU_GO',
          number_of_periods: 3,
          prices: [{ territory: 'USA', price: '4.99', currency: 'USD' }],
        },
        subscription: {
          id: 's1',
          product_id: 'com.example.yearly',
          name: 'Yearly',
          subscription_period: 'ONE_YEAR',
          prices: [{ territory: 'USA', price: '39.99', currency: 'USD' }],
        },
      };
      expect((await svc.admin('PUT', '/admin/store/offer-codes/known-offer', catalogEntry)).status).to.equal(201);
      const unknown = await svc.admin('PUT', '/admin/rewards/typo', offer('knwon-offer'));
      expect(unknown.status).to.equal(422);
      expect(unknown.body.errors[0]).to.include({ code: 'REWARD.OFFER_CODE_UNKNOWN', source: '/offer_code_id' });
      expect((await svc.admin('PUT', '/admin/rewards/typo', offer('known-offer'))).status).to.equal(201);
    });
  });
});
