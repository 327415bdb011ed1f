import { expect } from 'chai';
import { never, putReward } from '../support/fixtures.js';
import { startTestService, type TestService } from '../support/test-service.js';

/**
 * Inputs that once answered 500: the HTTP schema admitted them, no business check looked at
 * them, and the event schema refused them at append. Each must be a documented 4xx, with
 * nothing written.
 */
describe('API: client input that once answered 500', () => {
  let svc: TestService;

  before(async () => {
    svc = await startTestService();
    await putReward(svc, 'basic', { kind: 'basic', name: 'Basic' });
  });
  after(async () => svc.stop());

  const entry = (activation: object) => ({ reward_key: 'basic', activation, deactivation: never });

  async function expectRefused(method: string, path: string, body: object, code: string, source: string) {
    const before = (await svc.admin('GET', '/admin/events?limit=1000')).body.data.events.length;
    const response = await svc.admin(method, path, body);
    expect(response.status, JSON.stringify(response.body)).to.equal(422);
    expect(response.body.errors[0]).to.include({ code, status: 422, source });
    expect((await svc.admin('GET', '/admin/events?limit=1000')).body.data.events.length, 'nothing written').to.equal(before);
  }

  it('promo code entry with amount 0 → 422 CODE.INVALID_ACTIVATION', async () => {
    await expectRefused(
      'PUT',
      '/admin/promo-codes/X-AMOUNT',
      { is_active: true, limit: 0, rewards: [entry({ variant: 'claim', amount: 0 })] },
      'CODE.INVALID_ACTIVATION',
      '/rewards/0/activation',
    );
  });

  it('promo code entry with limit -1 → 422 CODE.INVALID_ACTIVATION', async () => {
    await expectRefused(
      'PUT',
      '/admin/promo-codes/X-LIMIT',
      { is_active: true, limit: 0, rewards: [entry({ variant: 'claim', limit: -1 })] },
      'CODE.INVALID_ACTIVATION',
      '/rewards/0/activation',
    );
  });

  for (const amount of [0, -1]) {
    it(`program receiver entry with amount ${amount} → 422 PROGRAM.INVALID_ACTIVATION`, async () => {
      const body = { name: 'P', distribution_percentage: 0, limit: 0, rewards: { sender: [], receiver: [entry({ variant: 'claim', amount })] } };
      await expectRefused('PUT', '/admin/programs/p-receiver', body, 'PROGRAM.INVALID_ACTIVATION', '/rewards/receiver/0/activation');
    });
  }

  it('program basic sender entry with amount 1, limit -1 → 422 PROGRAM.INVALID_ACTIVATION', async () => {
    const body = { name: 'P', distribution_percentage: 0, limit: 0, rewards: { sender: [entry({ variant: 'claim', amount: 1, limit: -1 })], receiver: [] } };
    await expectRefused('PUT', '/admin/programs/p-sender', body, 'PROGRAM.INVALID_ACTIVATION', '/rewards/sender/0/activation');
  });

  it('affiliate entry with amount 0 → 422 AFFILIATE.INVALID_ACTIVATION', async () => {
    const body = { status: 'approved', name: 'A', platforms: [], codes: [], rewards: [entry({ variant: 'claim', amount: 0 })] };
    await expectRefused('PUT', '/admin/affiliates/a-amount', body, 'AFFILIATE.INVALID_ACTIVATION', '/rewards/0/activation');
  });

  it('a date-time whose offset moves it past year 9999 → 400 BAD_REQUEST', async () => {
    const response = await svc.call('POST', '/users', { app_user_id: 'far-future', first_seen_at: '9999-12-31T23:59:59-23:59' });
    expect(response.status).to.equal(400);
    expect(response.body.errors[0]).to.include({ code: 'BAD_REQUEST', source: '/first_seen_at' });
    const pool = await putReward(svc, 'pool', { kind: 'store_promo_code', name: 'Pool' });
    expect(pool.data.reward.key).to.equal('pool');
    const codes = await svc.admin('POST', '/admin/rewards/pool/codes', { codes: [{ value: 'A', expires_at: '0000-01-01T00:00:00+01:00' }] });
    expect(codes.status).to.equal(400);
    expect(codes.body.errors[0]).to.include({ code: 'BAD_REQUEST', source: '/codes/0/expires_at' });
  });

  it('the edge days by their offset, as docs/behaviour.md says: + on 0000-01-01 and - on 9999-12-31 refused whatever the time, Z and the other direction accepted; a leap second refused', async () => {
    const cases: [string, number][] = [
      ['0000-01-01T10:00:00+01:00', 400],
      ['0000-01-01T10:00:00-01:00', 201],
      ['0000-01-01T10:00:00Z', 201],
      ['9999-12-31T10:00:00-05:00', 400],
      ['2016-12-31T23:59:60Z', 400],
    ];
    for (const [index, [firstSeenAt, status]] of cases.entries()) {
      const response = await svc.call('POST', '/users', { app_user_id: `edge-day-${index}`, first_seen_at: firstSeenAt });
      expect(response.status, firstSeenAt).to.equal(status);
      if (status === 400) expect(response.body.errors[0], firstSeenAt).to.include({ code: 'BAD_REQUEST', source: '/first_seen_at' });
    }
    const late = await svc.call('POST', '/users', { app_user_id: 'edge-day-late', first_seen_at: '9999-12-31T10:00:00+05:00' });
    expect(late.status, 'accepted by the format, then refused as in the future').to.equal(422);
    expect(late.body.errors[0].code).to.equal('USER.FIRST_SEEN_AT_IN_FUTURE');
  });

  it('an event-log cursor past any position is an empty page, not an error', async () => {
    const response = await svc.admin('GET', '/admin/events?after=99999999999999999999');
    expect(response.status).to.equal(200);
    expect(response.body.data.events).to.deep.equal([]);
  });

  it('a promo code that only upper-cases into the format (non-ASCII) → 400 BAD_REQUEST', async () => {
    const response = await svc.admin('PUT', '/admin/promo-codes/%C3%9F%C3%9F%C3%9F', { is_active: true, limit: 0, rewards: [] });
    expect(response.status).to.equal(400);
    expect(response.body.errors[0]).to.include({ code: 'BAD_REQUEST', source: 'path:/code' });
  });
});
