import { expect } from 'chai';
import { createUser, days, eventually, events, getUser, never, putProgram, putPromo, putReward } from '../support/fixtures.js';
import type { EventStore } from '../../src/ports/event-store.js';
import type { ReadConsistency } from '../../src/ports/read-consistency.js';
import { TOKENS } from '../../src/ports/tokens.js';
import { startTestService, type TestService } from '../support/test-service.js';

const DAY = 86_400_000;

describe('API: reward expiry and pooled one-time codes', () => {
  let svc: TestService;

  before(async () => {
    svc = await startTestService();
    await putReward(svc, 'week-pass', { kind: 'basic', name: 'Week pass' });
    await putReward(svc, 'coins', { kind: 'credit', name: 'Coins', credits: 10 });
    await putReward(svc, 'store-promo', { kind: 'store_promo_code', name: 'Store promo code' });
    await putReward(svc, 'offer', { kind: 'offer_code', name: 'Offer', offer_code_id: 'oc-1', offer_code_ref_name: 'ref', subscription_product_id: 'prod' });
    await putProgram(svc, 'none', { distribution_percentage: 0 });
  });
  after(async () => svc.stop());

  it('moves an entry to rewards.expired at read time, and the sweep records RewardExpired (injected clock)', async () => {
    await putPromo(svc, 'EXPIRE1', {
      rewards: [
        { reward_key: 'week-pass', activation: { variant: 'claim' }, deactivation: days(7) },
        { reward_key: 'coins', activation: { variant: 'claim' }, deactivation: days(3) },
      ],
    });
    await createUser(svc, 'expiring');
    const claimed = (await svc.call('POST', '/users/expiring/claim-code', { code: 'EXPIRE1' })).body.data.user;
    expect(claimed.rewards.active.basic).to.have.length(1);
    expect(claimed.rewards.active.credit[0].credits).to.equal(10);

    svc.clock.advance(4 * DAY);
    const midway = await getUser(svc, 'expiring');
    expect(midway.rewards.active.credit).to.have.length(0);
    expect(midway.rewards.expired.credit).to.have.length(1);
    expect(midway.rewards.expired.credit[0]).to.have.all.keys('reward', 'expired_at', 'created_at', 'updated_at');
    expect(midway.rewards.active.basic).to.have.length(1);

    svc.clock.advance(4 * DAY);
    const later = await getUser(svc, 'expiring');
    expect(later.rewards.active.basic).to.have.length(0);
    expect(later.rewards.expired.basic[0].expired_at).to.equal(claimed.rewards.active.basic[0].expires_at);

    await svc.service.runMaintenance();
    const expired = await events(svc, 'stream=user-expiring&type=RewardExpired');
    expect(expired.map((event) => event.data.reward_key).sort()).to.deep.equal(['coins', 'week-pass']);
    expect(expired.find((event) => event.data.reward_key === 'coins')!.data).to.include({ credits_forfeited: 10, balance_after: 0 });
    await svc.service.runMaintenance();
    expect(await events(svc, 'stream=user-expiring&type=RewardExpired')).to.have.length(2);
  });

  it('one sweep run records the due expiries of every user, not only the first', async () => {
    const own = await startTestService();
    try {
      await putReward(own, 'coins', { kind: 'credit', name: 'Coins', credits: 10 });
      const users = ['sweep-a', 'sweep-b', 'sweep-c'];
      for (const [index, user] of users.entries()) {
        await createUser(own, user);
        own.clock.advance(60_000 * (index + 1));
        expect((await own.admin('POST', `/users/${user}/rewards/grant`, { key: 'coins', deactivation: days(1) })).status).to.equal(201);
      }
      const head = (await own.service.container.resolve<EventStore>(TOKENS.EventStore).headPosition())!;
      expect(await own.service.container.resolve<ReadConsistency>(TOKENS.ReadConsistency).waitFor(head, 10_000)).to.equal(true);
      own.clock.advance(2 * DAY);
      await own.service.runMaintenance();
      const expired = await events(own, 'type=RewardExpired');
      expect(expired.map((event) => event.stream).sort()).to.deep.equal(users.map((user) => `user-${user}`));
    } finally {
      await own.stop();
    }
  });

  it('an expired credit entry cannot be withdrawn', async () => {
    const response = await svc.call('POST', '/users/expiring/rewards/withdraw-credits', { key: 'coins', amount: 5 });
    expect(response.status).to.equal(200);
    expect(response.body.data.withdraw_result).to.deep.equal({
      credits_available_at_start: 0,
      credits_available_at_end: 0,
      credits_requested_to_withdraw: 5,
      credits_withdrawn: 0,
    });
  });

  it('gives pooled rewards a one-time code at claim, oldest usable first', async () => {
    const future = new Date(svc.clock.now().getTime() + 365 * DAY).toISOString();
    const past = new Date(svc.clock.now().getTime() - DAY).toISOString();
    await svc.admin('POST', '/admin/rewards/offer/codes', {
      codes: [
        { value: 'STALE', link: 'https://apps.apple.com/redeem?code=STALE', expires_at: past },
        { value: 'OFFER-1', link: 'https://apps.apple.com/redeem?code=OFFER-1', expires_at: future },
        { value: 'OFFER-2', link: 'https://apps.apple.com/redeem?code=OFFER-2', expires_at: future },
      ],
    });
    await putPromo(svc, 'OFFERS', { rewards: [{ reward_key: 'offer', activation: { variant: 'claim' }, deactivation: never }] });
    await createUser(svc, 'offer-taker');
    const response = await svc.call('POST', '/users/offer-taker/claim-code', { code: 'offers' });
    expect(response.body.data.rewards_granted.offer_code[0].value).to.deep.equal({
      value: 'OFFER-1',
      link: 'https://apps.apple.com/redeem?code=OFFER-1',
      expires_at: future,
    });
  });

  it('refuses pool codes a user could not read back (blank, padded, control characters) and links that are not http(s): 400, nothing added', async () => {
    const future = '2099-01-01T00:00:00Z';
    const before = (await svc.admin('GET', '/admin/rewards/offer/codes')).body.data;
    const refused = [
      [{ value: '   ', link: 'https://apps.apple.com/redeem?code=X', expires_at: future }, '/codes/0/value'],
      [{ value: ' PAD', link: 'https://apps.apple.com/redeem?code=X', expires_at: future }, '/codes/0/value'],
      [{ value: 'PAD\u3000', link: 'https://apps.apple.com/redeem?code=X', expires_at: future }, '/codes/0/value'],
      [{ value: 'NUL\u0000', link: 'https://apps.apple.com/redeem?code=X', expires_at: future }, '/codes/0/value'],
      [{ value: '\u200bZWSP', link: 'https://apps.apple.com/redeem?code=X', expires_at: future }, '/codes/0/value'],
      [{ value: 'PADDED', link: ' \thttps://apps.apple.com/redeem?code=X', expires_at: future }, '/codes/0/link'],
      [{ value: 'BROKEN', link: 'https://apps.apple.com/re\ndeem', expires_at: future }, '/codes/0/link'],
      [{ value: 'JS', link: 'javascript:alert(1)', expires_at: future }, '/codes/0/link'],
      [{ value: 'DATA', link: 'data:text/html,hi', expires_at: future }, '/codes/0/link'],
      [{ value: 'FILE', link: 'file:///etc/passwd', expires_at: future }, '/codes/0/link'],
    ] as const;
    for (const [code, source] of refused) {
      const response = await svc.admin('POST', '/admin/rewards/offer/codes', { codes: [code] });
      expect(response.status, JSON.stringify(code)).to.equal(400);
      expect(response.body.errors[0], JSON.stringify(code)).to.include({ code: 'BAD_REQUEST', source });
    }
    expect((await svc.admin('GET', '/admin/rewards/offer/codes')).body.data).to.deep.equal(before);
    const inner = await svc.admin('POST', '/admin/rewards/offer/codes', {
      codes: [{ value: 'TWO WORDS', link: 'HTTPS://apps.apple.com/redeem', expires_at: future }],
    });
    expect(inner.status).to.equal(200);
  });

  it('each pool code goes to one user; grants without a code wait and are filled in grant order', async () => {
    await putPromo(svc, 'PROMOS', { rewards: [{ reward_key: 'store-promo', activation: { variant: 'claim' }, deactivation: never }] });
    const users = Array.from({ length: 12 }, (_, index) => `promo-taker-${index}`);
    await Promise.all(users.map((user) => createUser(svc, user)));
    await svc.admin('POST', '/admin/rewards/store-promo/codes', {
      codes: Array.from({ length: 5 }, (_, index) => ({ value: `SP-${index}`, expires_at: '2099-01-01T00:00:00Z' })),
    });
    const claims = await Promise.all(users.map((user) => svc.call('POST', `/users/${user}/claim-code`, { code: 'PROMOS' })));
    expect(claims.every((claim) => claim.status === 200)).to.equal(true);
    const values = () => Promise.all(users.map(async (user) => (await getUser(svc, user)).rewards.active.store_promo_code[0].value?.value ?? null));
    const first = await values();
    expect(first.filter((value) => value !== null).sort()).to.deep.equal(['SP-0', 'SP-1', 'SP-2', 'SP-3', 'SP-4']);
    const entry = (await getUser(svc, users[first.indexOf('SP-0')]!)).rewards.active.store_promo_code[0];
    expect(entry.value).to.have.all.keys('value', 'expires_at');
    const figures = async () => (await svc.admin('GET', '/admin/rewards/store-promo/codes')).body.data;
    await eventually(async () => expect(await figures()).to.deep.equal({ available: 0, used: 5, expired: 0, waiting: 7 }));

    await svc.admin('POST', '/admin/rewards/store-promo/codes', {
      // SP-4 is already in the pool (skipped); SP-5..SP-11 serve the seven waiting grants.
      codes: Array.from({ length: 8 }, (_, index) => ({ value: `SP-${index + 4}`, expires_at: '2099-01-01T00:00:00Z' })),
    });
    const filled = await eventually(async () => {
      const current = await values();
      expect(current.every((value) => value !== null)).to.equal(true);
      return current;
    });
    expect(new Set(filled).size).to.equal(users.length);
    await eventually(async () => expect(await figures()).to.deep.equal({ available: 0, used: 12, expired: 0, waiting: 0 }));
    const waiting = await events(svc, 'stream=pool-store-promo&type=PoolCodeRequested');
    const assigned = await events(svc, 'stream=pool-store-promo&type=PoolCodeAssigned');
    // Grant order: the grants' log positions, whichever request reached the pool first.
    const order = [...waiting].sort((a, b) => Number(BigInt(a.data.grant_position) - BigInt(b.data.grant_position))).map((event) => event.data.grant_id);
    const servedLater = assigned.filter((event) => order.includes(event.data.grant_id)).map((event) => event.data.grant_id);
    expect(servedLater).to.deep.equal(order);
  });

  it('20 concurrent uploads of the same 10 values add each value once: the added figures sum to 10, 10 available', async () => {
    await putReward(svc, 'dup-pool', { kind: 'store_promo_code', name: 'Duplicate uploads' });
    const codes = Array.from({ length: 10 }, (_, index) => ({ value: `DUP-${index}`, expires_at: '2099-01-01T00:00:00Z' }));
    const uploads = await Promise.all(Array.from({ length: 20 }, () => svc.admin('POST', '/admin/rewards/dup-pool/codes', { codes })));
    for (const upload of uploads) {
      expect(upload.status, JSON.stringify(upload.body)).to.be.oneOf([200, 201]);
      expect(upload.body.data.added + upload.body.data.skipped).to.equal(10);
    }
    expect(uploads.reduce((sum, upload) => sum + upload.body.data.added, 0)).to.equal(10);
    expect((await svc.admin('GET', '/admin/rewards/dup-pool/codes')).body.data).to.deep.equal({ available: 10, used: 0, expired: 0, waiting: 0 });
    const added = (await events(svc, 'stream=pool-dup-pool&type=PoolCodesAdded')).flatMap((event) =>
      event.data.codes.map((code: { value: string }) => code.value),
    );
    expect(added.sort()).to.deep.equal(codes.map((code) => code.value).sort());
  });

  it('30 claims racing 3 refills of 5 codes: 15 distinct codes handed out, 15 grants waiting', async () => {
    await putReward(svc, 'race-pool', { kind: 'store_promo_code', name: 'Raced pool' });
    await putPromo(svc, 'POOLRACE', { rewards: [{ reward_key: 'race-pool', activation: { variant: 'claim' }, deactivation: never }] });
    const users = Array.from({ length: 30 }, (_, index) => `pool-racer-${index}`);
    await Promise.all(users.map((user) => createUser(svc, user)));
    const refill = (batch: number) =>
      svc.admin('POST', '/admin/rewards/race-pool/codes', {
        codes: Array.from({ length: 5 }, (_, index) => ({ value: `RACE-${batch}-${index}`, expires_at: '2099-01-01T00:00:00Z' })),
      });
    const claims = users.map((user) => svc.call('POST', `/users/${user}/claim-code`, { code: 'POOLRACE' }));
    const [refills, claimed] = await Promise.all([Promise.all([refill(0), refill(1), refill(2)]), Promise.all(claims)]);
    expect(refills.map((response) => response.body.data.added)).to.deep.equal([5, 5, 5]);
    expect(claimed.map((response) => response.status)).to.deep.equal(Array(30).fill(200));
    const figures = async () => (await svc.admin('GET', '/admin/rewards/race-pool/codes')).body.data;
    await eventually(async () => expect(await figures()).to.deep.equal({ available: 0, used: 15, expired: 0, waiting: 15 }));
    const values = await eventually(async () => {
      const current = await Promise.all(users.map(async (user) => (await getUser(svc, user)).rewards.active.store_promo_code[0].value?.value ?? null));
      const handedOut = current.filter((value) => value !== null);
      expect(handedOut).to.have.length(15);
      return handedOut;
    });
    expect(new Set(values).size).to.equal(15);
    const assigned = await events(svc, 'stream=pool-race-pool&type=PoolCodeAssigned');
    expect(assigned.map((event) => event.data.code.value).sort()).to.deep.equal([...values].sort());
  });

  it("a referrer's pooled sender grants keep their place in line ahead of a manual grant made after them, though the reaction asks later", async () => {
    const own = await startTestService();
    try {
      await putReward(own, 'sender-pool', { kind: 'store_promo_code', name: 'Sender pool' });
      await putProgram(own, 'pooled-senders', {
        rewards: { sender: [{ reward_key: 'sender-pool', activation: { variant: 'claim', amount: 1, limit: 0 }, deactivation: never }] },
      });
      const referrer = await createUser(own, 'pool-referrer');
      const claimers = Array.from({ length: 20 }, (_, index) => `pool-claimer-${index}`);
      await Promise.all(claimers.map((user) => createUser(own, user)));
      const claims = await Promise.all(claimers.map((user) => own.call('POST', `/users/${user}/claim-code`, { code: referrer.referral_code })));
      expect(claims.map((claim) => claim.status)).to.deep.equal(claimers.map(() => 200));
      await createUser(own, 'late-grantee');
      expect((await own.admin('POST', '/users/late-grantee/rewards/grant', { key: 'sender-pool' })).status).to.equal(201);
      // Every grant asked (the referrer's through the pools reaction), then 20 codes: the 20 grants made first get them.
      await eventually(async () => expect((await own.admin('GET', '/admin/rewards/sender-pool/codes')).body.data.waiting).to.equal(21));
      await own.admin('POST', '/admin/rewards/sender-pool/codes', {
        codes: Array.from({ length: 20 }, (_, index) => ({ value: `SENDER-${index}`, expires_at: '2099-01-01T00:00:00Z' })),
      });
      await eventually(async () => {
        const entries = (await getUser(own, 'pool-referrer')).rewards.active.store_promo_code;
        expect(entries.filter((entry: { value: unknown }) => entry.value !== null)).to.have.length(20);
      });
      expect((await getUser(own, 'late-grantee')).rewards.active.store_promo_code[0].value).to.equal(null);
      expect((await own.admin('GET', '/admin/rewards/sender-pool/codes')).body.data).to.deep.include({ used: 20, waiting: 1 });
    } finally {
      await own.stop();
    }
  });

  it('manual grants with operation_ids, 20 at once and one operation_id for two users: each 201 at once, each a code of its own', async () => {
    await putReward(svc, 'manual-pool', { kind: 'store_promo_code', name: 'Manual pool' });
    await svc.admin('POST', '/admin/rewards/manual-pool/codes', {
      codes: Array.from({ length: 30 }, (_, index) => ({ value: `MP-${index}`, expires_at: '2099-01-01T00:00:00Z' })),
    });
    const users = Array.from({ length: 20 }, (_, index) => `manual-taker-${index}`);
    await Promise.all(users.map((user) => createUser(svc, user)));
    const grants = await Promise.all(
      users.map((user, index) => svc.admin('POST', `/users/${user}/rewards/grant`, { key: 'manual-pool', operation_id: `op-${index}` })),
    );
    expect(grants.map((grant) => grant.status)).to.deep.equal(Array(20).fill(201));
    // One operation_id used by two users is two operations (operation ids are per user).
    await createUser(svc, 'welcome-ann');
    await createUser(svc, 'welcome-bob');
    const ann = await svc.admin('POST', '/users/welcome-ann/rewards/grant', { key: 'manual-pool', operation_id: 'welcome' });
    const bob = await svc.admin('POST', '/users/welcome-bob/rewards/grant', { key: 'manual-pool', operation_id: 'welcome' });
    expect([ann.status, bob.status]).to.deep.equal([201, 201]);
    const codeOf = async (user: string) =>
      (await getUser(svc, user)).rewards.active.store_promo_code.find((entry: any) => entry.reward.key === 'manual-pool').value.value;
    const values = await Promise.all([...users, 'welcome-ann', 'welcome-bob'].map(codeOf));
    expect(new Set(values).size).to.equal(22);
    expect((await svc.admin('GET', '/admin/rewards/manual-pool/codes')).body.data).to.deep.include({ used: 22, waiting: 0 });
    // The repeat answers the first grant, with its code.
    const again = await svc.admin('POST', '/users/welcome-bob/rewards/grant', { key: 'manual-pool', operation_id: 'welcome' });
    expect(again.status).to.equal(200);
    expect(await codeOf('welcome-bob')).to.equal(values[21]);
  });

  it('a waiting grant whose entry expired gets no code from a refill: the next waiting grant does', async () => {
    await putReward(svc, 'short-pool', { kind: 'store_promo_code', name: 'Short pool' });
    await createUser(svc, 'short-lived');
    await createUser(svc, 'long-lived');
    expect((await svc.admin('POST', '/users/short-lived/rewards/grant', { key: 'short-pool', deactivation: days(1) })).status).to.equal(201);
    svc.clock.advance(2 * DAY);
    expect((await svc.admin('POST', '/users/long-lived/rewards/grant', { key: 'short-pool' })).status).to.equal(201);
    const figures = async () => (await svc.admin('GET', '/admin/rewards/short-pool/codes')).body.data;
    expect(await figures()).to.include({ waiting: 1 });
    await svc.admin('POST', '/admin/rewards/short-pool/codes', { codes: [{ value: 'E1', expires_at: '2099-01-01T00:00:00Z' }] });
    await eventually(async () => {
      const entry = (await getUser(svc, 'long-lived')).rewards.active.store_promo_code.find((candidate: any) => candidate.reward.key === 'short-pool');
      expect(entry.value?.value).to.equal('E1');
    });
    expect(await figures()).to.deep.equal({ available: 0, used: 1, expired: 0, waiting: 0 });
  });
});
