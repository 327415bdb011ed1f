import { expect } from 'chai';
import { createUser, eventually, events, getUser, never, putProgram, putPromo, putReward } from '../support/fixtures.js';
import { startTestService, type TestService } from '../support/test-service.js';

/**
 * SPEC §13 fraud rules over HTTP on the embedded backend: each kind with both actions, the
 * reviews of held claims (exactly-once approval under concurrency), and the events that say why.
 * Every test uses its own referrers and claimers and disables its rule at the end.
 */
describe('API: fraud rules and reviews', () => {
  let svc: TestService;
  let serial = 0;
  const fresh = (prefix: string) => `${prefix}-${++serial}`;

  const putRule = (id: string, body: Record<string, unknown>) => svc.admin('PUT', `/admin/rules/${id}`, body);
  async function rule(id: string, kind: string, params: Record<string, unknown>, action: 'reject' | 'hold') {
    const response = await putRule(id, { kind, params, action, enabled: true });
    expect(response.status, JSON.stringify(response.body)).to.be.oneOf([200, 201]);
    return response.body.data.rule;
  }
  const disable = async (id: string, kind: string, params: Record<string, unknown>, action: 'reject' | 'hold') =>
    expect((await putRule(id, { kind, params, action, enabled: false })).status).to.equal(200);

  const claim = (claimer: string, code: string) => svc.call('POST', `/users/${claimer}/claim-code`, { code });
  async function referrer(prefix = 'ref', body: Record<string, unknown> = {}) {
    const id = fresh(prefix);
    const user = await createUser(svc, id, body);
    return { id, code: user.referral_code as string };
  }
  const credits = async (appUserId: string) =>
    (await getUser(svc, appUserId)).rewards.active.credit.reduce((sum: number, entry: { credits: number }) => sum + entry.credits, 0);
  async function reviewsOf(referrerId: string, status?: string) {
    const response = await svc.admin('GET', `/admin/reviews?limit=1000${status ? `&status=${status}` : ''}`);
    expect(response.status).to.equal(200);
    return (response.body.data.reviews as any[]).filter((review) => review.referrer_app_user_id === referrerId);
  }
  /** The referrer's reviews once the referral reaction has opened them. */
  const heldReviews = (referrerId: string, count: number) =>
    eventually(async () => {
      const reviews = await reviewsOf(referrerId);
      expect(reviews).to.have.length(count);
      return reviews;
    });
  const claimsCounted = (referrerId: string, claims: number) => eventually(async () => expect((await getUser(svc, referrerId)).stats.claims).to.equal(claims));

  before(async () => {
    svc = await startTestService();
    await putReward(svc, 'credits-5', { kind: 'credit', name: 'Five credits', credits: 5 });
    await putReward(svc, 'credits-7', { kind: 'credit', name: 'Seven credits', credits: 7 });
    await putProgram(svc, 'main', {
      limit: 0,
      rewards: {
        sender: [
          { reward_key: 'credits-5', activation: { variant: 'claim', amount: 1, limit: 0 }, deactivation: never },
          { reward_key: 'credits-7', activation: { variant: 'conversion', amount: 1, limit: 0 }, deactivation: never },
        ],
        receiver: [],
      },
    });
  });
  after(async () => svc.stop());

  describe('PUT /admin/rules/{id}, GET /admin/rules[/{id}]', () => {
    it('creates (201) and updates (200) a rule, keeps its history as events, lists and gets it', async () => {
      const created = await putRule('hourly-admin', { kind: 'referrer_claims_per_hour', params: { max: 10 }, action: 'reject', enabled: false });
      expect(created.status).to.equal(201);
      expect(created.body.data.rule).to.deep.include({
        id: 'hourly-admin',
        kind: 'referrer_claims_per_hour',
        params: { max: 10 },
        action: 'reject',
        enabled: false,
        updated_at: null,
      });
      const updated = await putRule('hourly-admin', { kind: 'referrer_claims_per_hour', params: { max: 20 }, action: 'hold', enabled: false });
      expect(updated.status).to.equal(200);
      expect(updated.body.data.rule).to.deep.include({ params: { max: 20 }, action: 'hold', created_at: created.body.data.rule.created_at });
      expect(updated.body.data.rule.updated_at).to.be.a('string');
      const one = await svc.admin('GET', '/admin/rules/hourly-admin');
      expect(one.status).to.equal(200);
      expect(one.body.data.rule).to.deep.equal(updated.body.data.rule);
      const list = await svc.admin('GET', '/admin/rules');
      expect(list.body.data.rules.map((rule: { id: string }) => rule.id)).to.include('hourly-admin');
      const history = await events(svc, 'stream=rule-hourly-admin');
      expect(history.map((event) => [event.type, event.data.rule.params.max])).to.deep.equal([
        ['FraudRuleCreated', 10],
        ['FraudRuleUpdated', 20],
      ]);
    });

    it('enabled defaults to true; the secret key is required', async () => {
      const response = await putRule('blocked-default', { kind: 'blocked_users', params: { app_user_ids: [] }, action: 'reject' });
      expect(response.status).to.equal(201);
      expect(response.body.data.rule.enabled).to.equal(true);
      expect((await svc.call('GET', '/admin/rules')).status).to.equal(403);
      await disable('blocked-default', 'blocked_users', { app_user_ids: [] }, 'reject');
    });

    it('404 NOT_FOUND.RULE for an unknown id', async () => {
      const response = await svc.admin('GET', '/admin/rules/nope');
      expect(response.status).to.equal(404);
      expect(response.body.errors[0]).to.deep.include({ code: 'NOT_FOUND.RULE', source: 'path:/id' });
    });

    it('400 BAD_REQUEST naming the field for params that do not fit the kind, an unknown kind or action', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ kind: 'referrer_claims_per_hour', params: {}, action: 'reject' }, '/params/max'],
        [{ kind: 'referrer_claims_per_day', params: { max: 0 }, action: 'reject' }, '/params/max'],
        [{ kind: 'payment_customer_claimers', params: { max: 1.5 }, action: 'hold' }, '/params/max'],
        [{ kind: 'min_seconds_user_to_claim', params: { seconds: 'ten' }, action: 'reject' }, '/params/seconds'],
        [{ kind: 'min_seconds_claim_to_conversion', params: { seconds: -1 }, action: 'hold' }, '/params/seconds'],
        [{ kind: 'blocked_users', params: { app_user_ids: 'bob' }, action: 'reject' }, '/params/app_user_ids'],
        [{ kind: 'blocked_users', params: { app_user_ids: [''] }, action: 'reject' }, '/params/app_user_ids/0'],
        [{ kind: 'same_payment_customer', action: 'reject' }, '/params'],
        [{ kind: 'velocity', params: {}, action: 'reject' }, '/kind'],
        [{ kind: 'same_payment_customer', params: {}, action: 'ban' }, '/action'],
        [{ kind: 'same_payment_customer', params: {}, action: 'hold', enabled: 'yes' }, '/enabled'],
      ];
      for (const [body, source] of cases) {
        const response = await putRule('bad-params', body);
        expect(response.status, JSON.stringify(body)).to.equal(400);
        expect(response.body.errors[0], JSON.stringify(body)).to.deep.include({ code: 'BAD_REQUEST', source });
      }
      expect((await svc.admin('GET', '/admin/rules/bad-params')).status).to.equal(404);
    });

    it('422 RULE.IMMUTABLE_FIELD when the kind of an existing rule changes', async () => {
      expect((await putRule('kind-fixed', { kind: 'referrer_claims_per_day', params: { max: 5 }, action: 'reject', enabled: false })).status).to.equal(201);
      const response = await putRule('kind-fixed', { kind: 'referrer_claims_per_hour', params: { max: 5 }, action: 'reject', enabled: false });
      expect(response.status).to.equal(422);
      expect(response.body.errors[0]).to.deep.include({ code: 'RULE.IMMUTABLE_FIELD', source: '/kind' });
    });
  });

  describe('blocked_users', () => {
    it('reject: a blocked claimer or a blocked referrer gets 422 CLAIM.REJECTED_BY_RULE naming the rule, recorded in the claimer`s stream', async () => {
      const ref = await referrer();
      const blockedClaimer = fresh('blocked');
      const otherRef = await referrer('blocked-ref');
      await createUser(svc, blockedClaimer);
      const params = { app_user_ids: [blockedClaimer, otherRef.id] };
      await rule('blocklist', 'blocked_users', params, 'reject');
      const refused = await claim(blockedClaimer, ref.code);
      expect(refused.status).to.equal(422);
      expect(refused.body.errors[0]).to.deep.include({ code: 'CLAIM.REJECTED_BY_RULE', source: 'rule:blocklist' });
      expect((await getUser(svc, blockedClaimer)).referred_by).to.equal(null);
      const innocent = fresh('innocent');
      await createUser(svc, innocent);
      const viaBlockedReferrer = await claim(innocent, otherRef.code);
      expect(viaBlockedReferrer.body.errors[0]).to.deep.include({ code: 'CLAIM.REJECTED_BY_RULE', source: 'rule:blocklist' });
      const recorded = await events(svc, `stream=user-${blockedClaimer}&type=ClaimRejectedByRule`);
      expect(recorded.map((event) => event.data)).to.deep.equal([
        { rule_id: 'blocklist', kind: 'blocked_users', code: ref.code, referrer: ref.id, rejected_at: recorded[0]!.data.rejected_at },
      ]);
      // Not blocked: the same code still works, and the rule off lets the blocked user claim.
      expect((await claim(innocent, ref.code)).status).to.equal(200);
      await disable('blocklist', 'blocked_users', params, 'reject');
      expect((await claim(blockedClaimer, ref.code)).status).to.equal(200);
    });

    it('hold: the claim succeeds, the referrer`s reward waits for review; approval grants it', async () => {
      const ref = await referrer();
      const claimer = fresh('held-blocked');
      await createUser(svc, claimer);
      const params = { app_user_ids: [claimer] };
      await rule('blocklist-hold', 'blocked_users', params, 'hold');
      const response = await claim(claimer, ref.code);
      expect(response.status).to.equal(200);
      expect(response.body.data.user.referred_by.code).to.equal(ref.code);
      const [review] = await heldReviews(ref.id, 1);
      expect(review).to.deep.include({
        rule_id: 'blocklist-hold',
        status: 'pending',
        referrer_app_user_id: ref.id,
        claimer_app_user_id: claimer,
        code: ref.code,
        decided_at: null,
      });
      await claimsCounted(ref.id, 1);
      expect(await credits(ref.id)).to.equal(0);
      const approved = await svc.admin('POST', `/admin/reviews/${review.id}/approve`);
      expect(approved.status).to.equal(200);
      expect(approved.body.data.review).to.deep.include({ id: review.id, status: 'approved' });
      expect(approved.body.data.review.decided_at).to.be.a('string');
      expect(await credits(ref.id)).to.equal(5);
      await disable('blocklist-hold', 'blocked_users', params, 'hold');
    });

    it('hold: the rewards approval releases are granted at the approval, not at the claim', async () => {
      const ref = await referrer();
      const claimer = fresh('held-late');
      await createUser(svc, claimer);
      const params = { app_user_ids: [claimer] };
      await rule('blocklist-late', 'blocked_users', params, 'hold');
      expect((await claim(claimer, ref.code)).status).to.equal(200);
      const [review] = await heldReviews(ref.id, 1);
      svc.clock.advance(60_000);
      const approvedAt = svc.clock.now().toISOString();
      expect((await svc.admin('POST', `/admin/reviews/${review.id}/approve`)).body.data.review.decided_at).to.equal(approvedAt);
      const [granted] = await events(svc, `stream=user-${ref.id}&type=RewardGranted`);
      expect(granted!.data.granted_at).to.equal(approvedAt);
      const [entry] = (await getUser(svc, ref.id)).rewards.active.credit;
      expect(entry.created_at).to.equal(approvedAt);
      await disable('blocklist-late', 'blocked_users', params, 'hold');
    });

    it('rules judge referral claims only: a blocked user may still claim a promo code', async () => {
      const claimer = fresh('blocked-promo');
      await createUser(svc, claimer);
      const params = { app_user_ids: [claimer] };
      await rule('blocklist-promo', 'blocked_users', params, 'reject');
      await putPromo(svc, 'RULESFREE', { rewards: [{ reward_key: 'credits-5', activation: { variant: 'claim' }, deactivation: never }] });
      const claimed = await claim(claimer, 'RULESFREE');
      expect(claimed.status, JSON.stringify(claimed.body)).to.equal(200);
      expect(claimed.body.data.user.referred_by).to.include({ code: 'RULESFREE', type: 'promo' });
      expect(await events(svc, `stream=user-${claimer}&type=ClaimRejectedByRule`)).to.deep.equal([]);
      await disable('blocklist-promo', 'blocked_users', params, 'reject');
    });
  });

  describe('min_seconds_user_to_claim', () => {
    it('reject: a claimer registered less than `seconds` ago is refused; later it may claim', async () => {
      const ref = await referrer();
      const claimer = fresh('young');
      await createUser(svc, claimer);
      await rule('young-accounts', 'min_seconds_user_to_claim', { seconds: 3600 }, 'reject');
      // first_seen_at comes from the client: a backdated one does not help.
      await svc.call('POST', '/users', { app_user_id: claimer, first_seen_at: new Date(svc.clock.now().getTime() - 86_400_000).toISOString() });
      const refused = await claim(claimer, ref.code);
      expect(refused.status).to.equal(422);
      expect(refused.body.errors[0]).to.deep.include({ code: 'CLAIM.REJECTED_BY_RULE', source: 'rule:young-accounts' });
      svc.clock.advance(3600_000);
      expect((await claim(claimer, ref.code)).status).to.equal(200);
      await disable('young-accounts', 'min_seconds_user_to_claim', { seconds: 3600 }, 'reject');
    });

    it('hold: a young claimer`s claim succeeds and is held', async () => {
      const ref = await referrer();
      await rule('young-hold', 'min_seconds_user_to_claim', { seconds: 3600 }, 'hold');
      const claimer = fresh('young-held');
      await createUser(svc, claimer);
      expect((await claim(claimer, ref.code)).status).to.equal(200);
      const [review] = await heldReviews(ref.id, 1);
      expect(review.rule_id).to.equal('young-hold');
      await disable('young-hold', 'min_seconds_user_to_claim', { seconds: 3600 }, 'hold');
    });
  });

  describe('same_payment_customer', () => {
    it('reject: referrer and claimer with one payment customer; other customers pass', async () => {
      const ref = await referrer('pc-ref', { payment_customer_id: 'cus_same_1' });
      await rule('self-referral', 'same_payment_customer', {}, 'reject');
      const twin = fresh('twin');
      await createUser(svc, twin, { payment_customer_id: 'cus_same_1' });
      const refused = await claim(twin, ref.code);
      expect(refused.status).to.equal(422);
      expect(refused.body.errors[0]).to.deep.include({ code: 'CLAIM.REJECTED_BY_RULE', source: 'rule:self-referral' });
      const stranger = fresh('stranger');
      await createUser(svc, stranger, { payment_customer_id: 'cus_other_1' });
      expect((await claim(stranger, ref.code)).status).to.equal(200);
      const noCustomer = fresh('no-customer');
      await createUser(svc, noCustomer);
      expect((await claim(noCustomer, ref.code)).status).to.equal(200);
      // An empty id (some SDKs' "unset") is no customer: two users sending it share none.
      const blankReferrer = await referrer('pc-blank', { payment_customer_id: '' });
      const blankClaimer = fresh('blank');
      await createUser(svc, blankClaimer, { payment_customer_id: '' });
      expect((await claim(blankClaimer, blankReferrer.code)).status).to.equal(200);
      await disable('self-referral', 'same_payment_customer', {}, 'reject');
    });

    it('hold: the self-referral is held, and a rejected review grants nothing', async () => {
      const ref = await referrer('pc-ref', { payment_customer_id: 'cus_same_2' });
      await rule('self-referral-hold', 'same_payment_customer', {}, 'hold');
      const twin = fresh('twin');
      await createUser(svc, twin, { payment_customer_id: 'cus_same_2' });
      expect((await claim(twin, ref.code)).status).to.equal(200);
      const [review] = await heldReviews(ref.id, 1);
      expect(review.rule_id).to.equal('self-referral-hold');
      const rejected = await svc.admin('POST', `/admin/reviews/${review.id}/reject`);
      expect(rejected.status).to.equal(200);
      expect(rejected.body.data.review.status).to.equal('rejected');
      await claimsCounted(ref.id, 1);
      expect(await credits(ref.id)).to.equal(0);
      const released = await events(svc, `stream=user-${ref.id}&type=HeldRewardsReleased`);
      expect(released.map((event) => event.data)).to.deep.equal([
        { review_id: review.id, rule_id: 'self-referral-hold', kind: 'same_payment_customer', decision: 'rejected' },
      ]);
      await disable('self-referral-hold', 'same_payment_customer', {}, 'hold');
    });
  });

  describe('payment_customer_claimers', () => {
    it('reject: of 24 concurrent claimers sharing one payment customer, exactly `max` get through', async () => {
      await rule('shared-card', 'payment_customer_claimers', { max: 3 }, 'reject');
      const claimers = Array.from({ length: 24 }, () => fresh('card-sharer'));
      const refs: { id: string; code: string }[] = [];
      for (const claimer of claimers) {
        await createUser(svc, claimer, { payment_customer_id: 'cus_shared_card' });
        refs.push(await referrer());
      }
      const responses = await Promise.all(claimers.map((claimer, index) => claim(claimer, refs[index]!.code)));
      expect(responses.filter((response) => response.status === 200)).to.have.length(3);
      const refused = responses.filter((response) => response.status === 422);
      expect(refused).to.have.length(21);
      for (const response of refused) expect(response.body.errors[0]).to.deep.include({ code: 'CLAIM.REJECTED_BY_RULE', source: 'rule:shared-card' });
      // Another payment customer has its own count.
      const other = fresh('own-card');
      await createUser(svc, other, { payment_customer_id: 'cus_own_card' });
      expect((await claim(other, (await referrer()).code)).status).to.equal(200);
      // Empty ids are no customer: none of 5 claimers sending one is counted.
      const blanks = Array.from({ length: 5 }, () => fresh('blank-card'));
      for (const blank of blanks) await createUser(svc, blank, { payment_customer_id: '' });
      for (const blank of blanks) expect((await claim(blank, (await referrer()).code)).status).to.equal(200);
      await disable('shared-card', 'payment_customer_claimers', { max: 3 }, 'reject');
    });

    it("a claim it refuses does not count in the referrer's hour and day: fake claimers cannot use up an honest referrer's hourly allowance", async () => {
      await rule('hourly-allowance', 'referrer_claims_per_hour', { max: 3 }, 'reject');
      await rule('one-per-card', 'payment_customer_claimers', { max: 1 }, 'reject');
      const victim = await referrer('victim');
      const fakes = [fresh('fake'), fresh('fake'), fresh('fake')];
      for (const fake of fakes) await createUser(svc, fake, { payment_customer_id: 'cus_fake_farm' });
      expect((await claim(fakes[0]!, victim.code)).status).to.equal(200);
      for (const fake of fakes.slice(1)) {
        expect((await claim(fake, victim.code)).body.errors[0]).to.deep.include({ code: 'CLAIM.REJECTED_BY_RULE', source: 'rule:one-per-card' });
      }
      // One claim this hour, of the 3 allowed: two honest claimers get through, the third is refused by the hourly rule.
      const honest = [fresh('honest'), fresh('honest'), fresh('honest')];
      for (const [index, claimer] of honest.entries()) await createUser(svc, claimer, { payment_customer_id: `cus_honest_${index}` });
      expect((await claim(honest[0]!, victim.code)).status).to.equal(200);
      expect((await claim(honest[1]!, victim.code)).status).to.equal(200);
      expect((await claim(honest[2]!, victim.code)).body.errors[0]).to.deep.include({ code: 'CLAIM.REJECTED_BY_RULE', source: 'rule:hourly-allowance' });
      await claimsCounted(victim.id, 3);
      await disable('one-per-card', 'payment_customer_claimers', { max: 1 }, 'reject');
      await disable('hourly-allowance', 'referrer_claims_per_hour', { max: 3 }, 'reject');
    });

    it('hold: claimers past `max` are held; the log never holds the plaintext payment customer id in the counter', async () => {
      await rule('shared-card-hold', 'payment_customer_claimers', { max: 1 }, 'hold');
      const refs = [await referrer(), await referrer()];
      const first = fresh('card-a');
      const second = fresh('card-b');
      await createUser(svc, first, { payment_customer_id: 'cus_plain_secret_42' });
      await createUser(svc, second, { payment_customer_id: 'cus_plain_secret_42' });
      expect((await claim(first, refs[0]!.code)).status).to.equal(200);
      expect((await claim(second, refs[1]!.code)).status).to.equal(200);
      await claimsCounted(refs[1]!.id, 1);
      expect(await heldReviews(refs[0]!.id, 0)).to.have.length(0);
      const [review] = await heldReviews(refs[1]!.id, 1);
      expect(review).to.deep.include({ rule_id: 'shared-card-hold', claimer_app_user_id: second });
      const counters = await events(svc, 'type=PaymentCustomerClaimCounted');
      expect(counters.length).to.be.greaterThan(0);
      for (const event of counters) {
        expect(event.stream).to.match(/^payment-customer-[0-9a-f]{40}$/);
        expect(JSON.stringify(event)).not.to.contain('cus_');
      }
      await disable('shared-card-hold', 'payment_customer_claimers', { max: 1 }, 'hold');
    });
  });

  describe('referrer_claims_per_hour and referrer_claims_per_day', () => {
    it('reject: 30 concurrent claims on one code never exceed `max` in the hour; the next hour counts anew', async () => {
      const ref = await referrer();
      await rule('hourly', 'referrer_claims_per_hour', { max: 4 }, 'reject');
      const claimers = Array.from({ length: 30 }, () => fresh('burst'));
      for (const claimer of claimers) await createUser(svc, claimer);
      const responses = await Promise.all(claimers.map((claimer) => claim(claimer, ref.code)));
      expect(responses.filter((response) => response.status === 200)).to.have.length(4);
      for (const response of responses.filter((one) => one.status !== 200)) {
        expect(response.body.errors[0]).to.deep.include({ code: 'CLAIM.REJECTED_BY_RULE', source: 'rule:hourly' });
      }
      await claimsCounted(ref.id, 4);
      const refused = claimers.filter((_, index) => responses[index]!.status === 422);
      svc.clock.set(new Date(Math.ceil((svc.clock.now().getTime() + 1) / 3600_000) * 3600_000));
      expect((await claim(refused[0]!, ref.code)).status).to.equal(200);
      await disable('hourly', 'referrer_claims_per_hour', { max: 4 }, 'reject');
    });

    it("counts the hour's claims made before the rule was enabled", async () => {
      // A minute into the next clock hour, so that the three claims share one.
      svc.clock.set(new Date(Math.ceil((svc.clock.now().getTime() + 1) / 3600_000) * 3600_000 + 60_000));
      const ref = await referrer();
      const [early, late, third] = [fresh('early'), fresh('late'), fresh('third')];
      for (const claimer of [early, late, third]) await createUser(svc, claimer);
      expect((await claim(early, ref.code)).status).to.equal(200);
      expect((await claim(late, ref.code)).status).to.equal(200);
      await rule('hourly-late', 'referrer_claims_per_hour', { max: 2 }, 'reject');
      const refused = await claim(third, ref.code);
      expect(refused.status).to.equal(422);
      expect(refused.body.errors[0]).to.deep.include({ code: 'CLAIM.REJECTED_BY_RULE', source: 'rule:hourly-late' });
      await disable('hourly-late', 'referrer_claims_per_hour', { max: 2 }, 'reject');
    });

    it('reject: 30 concurrent claims on one code never exceed the daily `max`: exactly 4 succeed, 26 are 422 CLAIM.REJECTED_BY_RULE', async () => {
      const ref = await referrer();
      await rule('daily', 'referrer_claims_per_day', { max: 4 }, 'reject');
      const claimers = Array.from({ length: 30 }, () => fresh('daily-burst'));
      for (const claimer of claimers) await createUser(svc, claimer);
      const responses = await Promise.all(claimers.map((claimer) => claim(claimer, ref.code)));
      expect(responses.filter((response) => response.status === 200)).to.have.length(4);
      const refused = responses.filter((response) => response.status === 422);
      expect(refused).to.have.length(26);
      for (const response of refused) expect(response.body.errors[0]).to.deep.include({ code: 'CLAIM.REJECTED_BY_RULE', source: 'rule:daily' });
      await claimsCounted(ref.id, 4);
      expect(await events(svc, 'type=ClaimRejectedByRule&stream_prefix=user-daily-burst-')).to.have.length(26);
      expect(await events(svc, 'type=CodeClaimed&stream_prefix=user-daily-burst-')).to.have.length(4);
      await eventually(async () => expect(await credits(ref.id)).to.equal(20));
      await disable('daily', 'referrer_claims_per_day', { max: 4 }, 'reject');
    });

    it('hold: claims past the daily `max` are held, each with its own review', async () => {
      const ref = await referrer();
      await rule('daily-hold', 'referrer_claims_per_day', { max: 2 }, 'hold');
      const claimers = Array.from({ length: 5 }, () => fresh('daily'));
      for (const claimer of claimers) await createUser(svc, claimer);
      const responses = await Promise.all(claimers.map((claimer) => claim(claimer, ref.code)));
      expect(responses.map((response) => response.status)).to.deep.equal([200, 200, 200, 200, 200]);
      const reviews = await heldReviews(ref.id, 3);
      expect(new Set(reviews.map((review) => review.claimer_app_user_id)).size).to.equal(3);
      await claimsCounted(ref.id, 5);
      expect(await credits(ref.id)).to.equal(10);
      await disable('daily-hold', 'referrer_claims_per_day', { max: 2 }, 'hold');
    });
  });

  describe('min_seconds_claim_to_conversion', () => {
    it('reject: a conversion right after the claim counts, but its sender reward is refused (an event names the rule)', async () => {
      const ref = await referrer();
      await rule('fast-convert', 'min_seconds_claim_to_conversion', { seconds: 600 }, 'reject');
      const claimer = fresh('quick');
      await createUser(svc, claimer);
      expect((await claim(claimer, ref.code)).status).to.equal(200);
      await svc.call('POST', '/users', { app_user_id: claimer, is_premium: true, is_trial: false });
      await eventually(async () => expect((await getUser(svc, ref.id)).stats.conversions).to.equal(1));
      expect(await credits(ref.id)).to.equal(5);
      const refused = await events(svc, `stream=user-${ref.id}&type=SenderRewardsRefused`);
      expect(refused.map((event) => event.data)).to.deep.equal([
        { rule_id: 'fast-convert', kind: 'min_seconds_claim_to_conversion', claimer, code: ref.code, variant: 'conversion', count: 1 },
      ]);
      // A conversion after the delay is rewarded.
      const patient = fresh('patient');
      await createUser(svc, patient);
      expect((await claim(patient, ref.code)).status).to.equal(200);
      svc.clock.advance(600_000);
      await svc.call('POST', '/users', { app_user_id: patient, is_premium: true, is_trial: false });
      await eventually(async () => expect(await credits(ref.id)).to.equal(5 + 5 + 7));
      await disable('fast-convert', 'min_seconds_claim_to_conversion', { seconds: 600 }, 'reject');
    });

    it('hold: the conversion`s sender reward waits for a review of variant conversion', async () => {
      const ref = await referrer();
      await rule('fast-convert-hold', 'min_seconds_claim_to_conversion', { seconds: 600 }, 'hold');
      const claimer = fresh('quick-held');
      await createUser(svc, claimer);
      expect((await claim(claimer, ref.code)).status).to.equal(200);
      await svc.call('POST', '/users', { app_user_id: claimer, is_premium: true, is_trial: false });
      const [review] = await heldReviews(ref.id, 1);
      expect(review).to.deep.include({ rule_id: 'fast-convert-hold', variant: 'conversion', claimer_app_user_id: claimer });
      expect(await credits(ref.id)).to.equal(5);
      expect((await svc.admin('POST', `/admin/reviews/${review.id}/approve`)).status).to.equal(200);
      expect(await credits(ref.id)).to.equal(12);
      await disable('fast-convert-hold', 'min_seconds_claim_to_conversion', { seconds: 600 }, 'hold');
    });
  });

  describe('reviews', () => {
    const holdAll = { app_user_ids: [] as string[] };

    async function heldClaims(count: number) {
      const ref = await referrer();
      const claimers = Array.from({ length: count }, () => fresh('reviewed'));
      holdAll.app_user_ids = [ref.id];
      await rule('review-hold', 'blocked_users', holdAll, 'hold');
      for (const claimer of claimers) {
        await createUser(svc, claimer);
        expect((await claim(claimer, ref.code)).status).to.equal(200);
      }
      await disable('review-hold', 'blocked_users', holdAll, 'hold');
      return { ref, reviews: await heldReviews(ref.id, count) };
    }

    it('40 concurrent approvals of one review grant the held reward exactly once; all answer the approved review', async () => {
      const { ref, reviews } = await heldClaims(1);
      const responses = await Promise.all(Array.from({ length: 40 }, () => svc.admin('POST', `/admin/reviews/${reviews[0].id}/approve`)));
      for (const response of responses) {
        expect(response.status).to.equal(200);
        expect(response.body.data.review.status).to.equal('approved');
      }
      expect(await credits(ref.id)).to.equal(5);
      expect(await events(svc, `stream=review-${reviews[0].id}&type=ReviewApproved`)).to.have.length(1);
      const granted = await events(svc, `stream=user-${ref.id}&type=RewardGranted`);
      expect(granted).to.have.length(1);
      expect(granted[0]!.data.cause).to.deep.include({ type: 'referrals', variant: 'claim', count: 1 });
    });

    it('concurrent approvals and rejections of one review: one decision wins, the others get 422 REVIEW.ALREADY_DECIDED', async () => {
      const { ref, reviews } = await heldClaims(1);
      const id = reviews[0].id;
      const responses = await Promise.all(
        Array.from({ length: 30 }, (_, index) => svc.admin('POST', `/admin/reviews/${id}/${index % 2 === 0 ? 'approve' : 'reject'}`)),
      );
      const decided = (await svc.admin('GET', `/admin/reviews?limit=1000`)).body.data.reviews.find((review: { id: string }) => review.id === id);
      const winner = decided.status === 'approved' ? 'approve' : 'reject';
      responses.forEach((response, index) => {
        const verb = index % 2 === 0 ? 'approve' : 'reject';
        if (verb === winner) expect(response.status).to.equal(200);
        else expect(response.body.errors[0]).to.deep.include({ code: 'REVIEW.ALREADY_DECIDED', source: 'path:/id' });
      });
      expect(await credits(ref.id)).to.equal(winner === 'approve' ? 5 : 0);
    });

    it('a second approve answers 200 and grants nothing more; approve after reject is 422; a second reject is 200', async () => {
      const { ref, reviews } = await heldClaims(2);
      const [first, second] = reviews;
      expect((await svc.admin('POST', `/admin/reviews/${first.id}/approve`)).status).to.equal(200);
      const again = await svc.admin('POST', `/admin/reviews/${first.id}/approve`);
      expect(again.status).to.equal(200);
      expect(again.body.data.review.status).to.equal('approved');
      expect(await credits(ref.id)).to.equal(5);
      const rejectApproved = await svc.admin('POST', `/admin/reviews/${first.id}/reject`);
      expect(rejectApproved.status).to.equal(422);
      expect(rejectApproved.body.errors[0]).to.deep.include({ code: 'REVIEW.ALREADY_DECIDED', source: 'path:/id' });
      expect((await svc.admin('POST', `/admin/reviews/${second.id}/reject`)).status).to.equal(200);
      expect((await svc.admin('POST', `/admin/reviews/${second.id}/reject`)).status).to.equal(200);
      const approveRejected = await svc.admin('POST', `/admin/reviews/${second.id}/approve`);
      expect(approveRejected.status).to.equal(422);
      expect(approveRejected.body.errors[0].code).to.equal('REVIEW.ALREADY_DECIDED');
      expect(await credits(ref.id)).to.equal(5);
    });

    it('404 NOT_FOUND.REVIEW for an unknown review; 400 for a malformed id', async () => {
      const response = await svc.admin('POST', '/admin/reviews/00000000-0000-5000-8000-000000000000/approve');
      expect(response.status).to.equal(404);
      expect(response.body.errors[0]).to.deep.include({ code: 'NOT_FOUND.REVIEW', source: 'path:/id' });
      expect((await svc.admin('POST', '/admin/reviews/not%20an%20id/reject')).status).to.equal(400);
    });

    it('lists by status, in the order opened, a page at a time (after = next_after)', async () => {
      const { reviews } = await heldClaims(3);
      await svc.admin('POST', `/admin/reviews/${reviews[1].id}/approve`);
      const all: any[] = [];
      let after: string | null = null;
      for (;;) {
        const page: { status: number; body: any } = await svc.admin('GET', `/admin/reviews?limit=2${after ? `&after=${after}` : ''}`);
        expect(page.status).to.equal(200);
        // No page is empty: a page holding the last review says none follows.
        expect(page.body.data.reviews).to.not.have.length(0);
        all.push(...page.body.data.reviews);
        after = page.body.data.next_after;
        if (after === null) break;
      }
      const ids = all.map((review) => review.id);
      expect(new Set(ids).size).to.equal(ids.length);
      expect((await svc.admin('GET', `/admin/reviews?limit=${all.length}`)).body.data.next_after).to.equal(null);
      const mine = ids.filter((id) => reviews.some((review) => review.id === id));
      expect(mine).to.deep.equal(reviews.map((review) => review.id));
      const pending = (await svc.admin('GET', '/admin/reviews?status=pending&limit=1000')).body.data.reviews.map((review: { id: string }) => review.id);
      expect(pending).to.include(reviews[0].id).and.not.include(reviews[1].id);
      const approved = (await svc.admin('GET', '/admin/reviews?status=approved&limit=1000')).body.data.reviews.map((review: { id: string }) => review.id);
      expect(approved).to.include(reviews[1].id);
      expect((await svc.admin('GET', '/admin/reviews?status=open')).status).to.equal(400);
    });

    it('every decision is an event naming the rule: the held claim, the held rewards, the review and its decision', async () => {
      const { ref, reviews } = await heldClaims(1);
      const claimer = reviews[0].claimer_app_user_id;
      await svc.admin('POST', `/admin/reviews/${reviews[0].id}/approve`);
      const [claimed] = await events(svc, `stream=user-${claimer}&type=CodeClaimed`);
      expect(claimed!.data.hold).to.deep.equal({ rule_id: 'review-hold', kind: 'blocked_users', review_id: reviews[0].id });
      const [held] = await events(svc, `stream=user-${ref.id}&type=SenderRewardsHeld`);
      expect(held!.data).to.deep.include({ rule_id: 'review-hold', review_id: reviews[0].id, claimer, count: 1 });
      expect(held!.data.rewards.map((reward: any) => reward.reward.key)).to.deep.equal(['credits-5']);
      const decision = await events(svc, `stream=review-${reviews[0].id}`);
      expect(decision.map((event) => [event.type, event.data.rule_id])).to.deep.equal([
        ['ReviewOpened', 'review-hold'],
        ['ReviewApproved', 'review-hold'],
      ]);
    });
  });
});
