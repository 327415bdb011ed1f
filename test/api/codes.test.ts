import { expect } from 'chai';
import { codeResponse } from '../../src/http/schemas/codes.js';
import { getUserResponse } from '../../src/http/schemas/users.js';
import { createUser, days, events, eventually, never, putAffiliate, putProgram, putPromo, putReward } from '../support/fixtures.js';
import { startTestService, type TestService } from '../support/test-service.js';

describe('API: GET /codes/{code} and affiliates of users', () => {
  let svc: TestService;

  before(async () => {
    svc = await startTestService({ env: { REFERRAL_LINK_BASE: 'https://app.example/r' } });
    await putReward(svc, 'trial-month', { kind: 'basic', name: 'Trial month' });
    await putProgram(svc, 'friends', {
      name: 'Friends',
      rewards: { receiver: [{ reward_key: 'trial-month', activation: { variant: 'claim' }, deactivation: days(30) }] },
    });
  });
  after(async () => svc.stop());

  it('resolves a referral code: program name as entity, receiver rewards, active', async () => {
    const referrer = await createUser(svc, 'code-owner');
    const response = await svc.call('GET', `/codes/${referrer.referral_code.toLowerCase()}`);
    expect(response.status).to.equal(200);
    const code = codeResponse.parse(response.body).data;
    expect(code).to.deep.include({ type: 'referral', code: referrer.referral_code, is_active: true });
    expect(code.entity).to.deep.equal({ name: 'Friends', logo_url: null, platforms: [] });
    expect(code.rewards.basic[0]!.reward.key).to.equal('trial-month');
    expect(code.rewards.basic[0]!.activation).to.deep.equal({ variant: 'claim' });
  });

  it('resolves a promo code: description (or the code) as entity name, is_active from the promo', async () => {
    await putPromo(svc, 'SPRING', {
      description: 'Spring sale',
      rewards: [{ reward_key: 'trial-month', activation: { variant: 'claim' }, deactivation: never }],
    });
    await putPromo(svc, 'PLAIN', { is_active: false });
    const spring = codeResponse.parse((await svc.call('GET', '/codes/spring')).body).data;
    expect(spring).to.deep.include({ type: 'promo', code: 'SPRING', is_active: true, entity: { name: 'Spring sale', logo_url: null, platforms: [] } });
    const plain = codeResponse.parse((await svc.call('GET', '/codes/PLAIN')).body).data;
    expect(plain).to.deep.include({ is_active: false, entity: { name: 'PLAIN', logo_url: null, platforms: [] } });
    // An empty description is no description: the code names the entity.
    await putPromo(svc, 'EMPTY', { description: '' });
    expect((await svc.call('GET', '/codes/EMPTY')).body.data.entity.name).to.equal('EMPTY');
  });

  it('resolves an affiliate code with its logo and platforms; only approved affiliates are active', async () => {
    await putAffiliate(svc, 'creator', {
      name: 'Creator',
      logo_url: 'https://cdn.example/c.png',
      platforms: [{ type: 'tiktok', handle: '@creator', verified: false }],
      codes: ['CREATOR'],
      app_user_id: 'creator-user',
      rewards: [{ reward_key: 'trial-month', activation: { variant: 'claim' }, deactivation: days(14) }],
    });
    const code = codeResponse.parse((await svc.call('GET', '/codes/creator')).body).data;
    expect(code).to.deep.include({ type: 'affiliate', is_active: true });
    expect(code.entity).to.deep.equal({
      name: 'Creator',
      logo_url: 'https://cdn.example/c.png',
      platforms: [{ type: 'tiktok', handle: '@creator', verified: false }],
    });
    expect(code.rewards.basic[0]!.deactivation).to.deep.equal({ variant: 'interval', duration: 14, period: 'days' });
  });

  it('404 NOT_FOUND.CODE for an unknown code; 401 without a key', async () => {
    const response = await svc.call('GET', '/codes/UNKNOWN');
    expect(response.status).to.equal(404);
    expect(response.body.errors[0]).to.include({ code: 'NOT_FOUND.CODE', source: 'path:/code' });
    expect((await svc.call('GET', '/codes/UNKNOWN', undefined, { 'x-api-key': '' })).status).to.equal(401);
  });

  it('GET /users shows the linked affiliate with its codes and claim stats', async () => {
    await createUser(svc, 'creator-user');
    await createUser(svc, 'creator-fan', { is_premium: true });
    expect((await svc.call('POST', '/users/creator-fan/claim-code', { code: 'creator' })).status).to.equal(200);
    const { affiliate } = await eventually(async () => {
      const data = getUserResponse.parse((await svc.call('GET', '/users/creator-user')).body).data;
      expect(data.affiliate?.stats.claims).to.equal(1);
      return data;
    });
    expect(affiliate).to.deep.equal({
      id: 'creator',
      status: 'approved',
      codes: [{ code: 'CREATOR', code_link: 'https://app.example/r/CREATOR' }],
      stats: { claims: 1, conversions: 1, earnings: 0 },
    });
  });

  it('a new user refused 422 under a program reserves no referral code: the log does not grow', async () => {
    const logged = async () => (await events(svc, '')).length;
    const before = await logged();
    const future = new Date(svc.clock.now().getTime() + 6 * 60_000).toISOString();
    const refused = await svc.call('POST', '/users', { app_user_id: 'refused-referrer', first_seen_at: future });
    expect(refused.status).to.equal(422);
    expect(await logged()).to.equal(before);
  });
});
