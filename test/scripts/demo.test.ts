import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { eventually, events } from '../support/fixtures.js';
import { startTestService, tempDataDir, type TestService } from '../support/test-service.js';

const run = promisify(execFile);

function runDemo(dataDir: string, env: Record<string, string> = {}) {
  const { PORT: _port, ...inherited } = process.env;
  return run(process.execPath, ['--import', 'tsx', 'scripts/demo.ts'], {
    env: { ...inherited, DATA_DIR: dataDir, NODE_ENV: 'test', LOG_LEVEL: 'silent', CLIENT_API_KEYS: '', SECRET_API_KEYS: '', ...env },
  });
}

/** The README walkthrough's bodies, verbatim. */
const walkthrough = {
  rewards: {
    'referral-credits': { kind: 'credit', name: '50 credits', credits: 50 },
    'premium-week': { kind: 'basic', name: 'Premium week' },
  },
  program: {
    name: 'Invite friends',
    distribution_percentage: 100,
    limit: 0,
    rewards: {
      sender: [{ reward_key: 'referral-credits', activation: { variant: 'claim', amount: 1, limit: 0 }, deactivation: { variant: 'never' } }],
      receiver: [{ reward_key: 'premium-week', activation: { variant: 'claim' }, deactivation: { variant: 'interval', duration: 7, period: 'days' } }],
    },
  },
};

async function countByType(svc: TestService): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const event of await events(svc, '')) counts[event.type] = (counts[event.type] ?? 0) + 1;
  return counts;
}

describe('npm run demo (child process)', function () {
  this.timeout(180_000);

  let dataDir: string;
  let svc: TestService;
  let afterFirstRun: string;
  let afterSecondRun: string;
  let eventsAfterFirstRun: number;
  let eventsAfterSecondRun: number;

  const eventCount = () => {
    const db = new Database(path.join(dataDir, 'referrals.db'), { readonly: true });
    try {
      return (db.prepare('SELECT count(*) AS count FROM events').get() as { count: number }).count;
    } finally {
      db.close();
    }
  };

  before(async () => {
    dataDir = tempDataDir();
    const first = await runDemo(dataDir, { PORT: '3456', REFERRAL_LINK_BASE: 'https://example.com/r' });
    afterFirstRun = first.stdout;
    eventsAfterFirstRun = eventCount();
    const second = await runDemo(dataDir);
    afterSecondRun = second.stdout;
    eventsAfterSecondRun = eventCount();
    svc = await startTestService({ dataDir });
  });

  after(async () => {
    await svc?.stop();
  });

  it('runs twice, both times successfully, and says what it created and how to try it', () => {
    for (const output of [afterFirstRun, afterSecondRun]) {
      for (const name of [
        'referral-credits',
        'premium-week',
        'friends',
        'WELCOME10',
        'acme-studio',
        'ACME',
        'demo-premium-3m',
        'demo-ana',
        'demo-ben',
        'demo-cleo',
        'demo-dan',
      ]) {
        expect(output).to.contain(name);
      }
      expect(output).to.contain('curl');
    }
    expect(afterFirstRun).to.contain('program friends: created');
    expect(afterSecondRun).to.contain('already claimed');
  });

  it("prints commands for the port, store and link base the service is configured with, the start command included (the README's link base when none is: newcomer probe)", () => {
    expect(afterFirstRun).to.contain(
      `  DATA_DIR=${dataDir} PORT=3456 REFERRAL_LINK_BASE=https://example.com/r CLIENT_API_KEYS=ck_demo SECRET_API_KEYS=sk_demo npm start\n`,
    );
    expect(afterSecondRun).to.contain(
      `  DATA_DIR=${dataDir} REFERRAL_LINK_BASE=https://example.com/r CLIENT_API_KEYS=ck_demo SECRET_API_KEYS=sk_demo npm start\n`,
    );
    expect(afterFirstRun).to.contain('http://localhost:3456/users/demo-ana');
    expect(afterFirstRun).to.not.contain('localhost:8080');
    expect(afterSecondRun).to.contain('http://localhost:8080/users/demo-ana');
  });

  it('prints the keys it was run with in the start command, and uses the client key in its commands', async () => {
    const withKeys = (await runDemo(dataDir, { CLIENT_API_KEYS: 'ck_mine', SECRET_API_KEYS: 'sk_mine' })).stdout;
    expect(withKeys).to.contain(`  DATA_DIR=${dataDir} REFERRAL_LINK_BASE=https://example.com/r CLIENT_API_KEYS=ck_mine SECRET_API_KEYS=sk_mine npm start\n`);
    expect(withKeys).to.contain("-H 'x-api-key: ck_mine'");
    expect(withKeys).to.not.contain('ck_demo');
  });

  it('the second run appends no event at all', () => {
    expect(eventsAfterFirstRun).to.be.greaterThan(20);
    expect(eventsAfterSecondRun).to.equal(eventsAfterFirstRun);
    expect(afterSecondRun).to.contain('program friends: already there');
  });

  it('the second run duplicated nothing', async () => {
    const counts = await countByType(svc);
    expect(counts).to.include({
      RewardCreated: 3,
      ProgramCreated: 1,
      PromoCodeCreated: 1,
      AffiliateCreated: 1,
      StoreOfferCodeCreated: 1,
      UserRegistered: 4,
      ClaimSlotTaken: 3,
      CodeClaimed: 3,
      ReferralClaimCounted: 1,
      CreditsWithdrawn: 1,
    });
    const ana = (await svc.call('GET', '/users/demo-ana')).body.data.user;
    expect(ana.stats.claims).to.equal(1);
    expect(ana.rewards.active.credit.map((entry: { credits: number }) => entry.credits)).to.deep.equal([30]);
  });

  it("resolves the demo's promo and affiliate codes, and serves its store offer code", async () => {
    const promo = await svc.call('GET', '/codes/WELCOME10');
    expect(promo.status).to.equal(200);
    expect(promo.body.data).to.include({ type: 'promo', code: 'WELCOME10', is_active: true });
    expect(promo.body.data.rewards.credit).to.have.length(1);
    const affiliate = await svc.call('GET', '/codes/acme');
    expect(affiliate.status).to.equal(200);
    expect(affiliate.body.data).to.include({ type: 'affiliate', code: 'ACME', is_active: true });
    expect(affiliate.body.data.entity.name).to.equal('Acme Studio');
    const offer = await svc.call('GET', '/store/offer-codes/demo-premium-3m');
    expect(offer.status).to.equal(200);
    const referral = await svc.call('GET', `/codes/${(await svc.call('GET', '/users/demo-ana')).body.data.user.referral_code}`);
    expect(referral.body.data).to.include({ type: 'referral', is_active: true });
  });

  it('the README walkthrough works on top of it', async () => {
    // 1–2: the same rewards and program: plain updates.
    for (const [key, body] of Object.entries(walkthrough.rewards)) {
      expect((await svc.admin('PUT', `/admin/rewards/${key}`, body)).status).to.equal(200);
    }
    expect((await svc.admin('PUT', '/admin/programs/friends', walkthrough.program)).status).to.equal(200);
    // 3: two new users; alice gets a referral code.
    const alice = await svc.call('POST', '/users', { app_user_id: 'alice', is_premium: true });
    expect(alice.status).to.equal(201);
    expect(alice.body.data.user.referral_code).to.be.a('string');
    expect((await svc.call('POST', '/users', { app_user_id: 'bob' })).status).to.equal(201);
    // 4: bob claims alice's code, in lower case.
    const claim = await svc.call('POST', '/users/bob/claim-code', { code: String(alice.body.data.user.referral_code).toLowerCase() });
    expect(claim.status, JSON.stringify(claim.body)).to.equal(200);
    // 5: bob has a premium week; alice 1 claim and 50 credits.
    const bob = (await svc.call('GET', '/users/bob')).body.data.user;
    expect(bob.rewards.active.basic.map((entry: { reward: { key: string } }) => entry.reward.key)).to.deep.equal(['premium-week']);
    await eventually(async () => {
      const current = (await svc.call('GET', '/users/alice')).body.data.user;
      expect(current.stats.claims).to.equal(1);
      expect(current.rewards.active.credit[0].credits).to.equal(50);
    });
    // 6: alice spends 20; the same operation_id again spends nothing more.
    const withdraw = { key: 'referral-credits', amount: 20, operation_id: 'order-1001' };
    const spent = await svc.call('POST', '/users/alice/rewards/withdraw-credits', withdraw);
    expect(spent.status).to.equal(200);
    expect(spent.body.data.withdraw_result.credits_withdrawn).to.equal(20);
    const repeated = await svc.call('POST', '/users/alice/rewards/withdraw-credits', withdraw);
    expect(repeated.body.data.withdraw_result).to.deep.equal(spent.body.data.withdraw_result);
    expect(repeated.body.data.user.rewards.active.credit[0].credits).to.equal(30);
    // 7: what the auditors see.
    const ledger = await svc.admin('GET', '/admin/users/alice/credit-ledger');
    expect(ledger.status).to.equal(200);
    expect(ledger.body.data.entries.map((entry: { delta: number }) => entry.delta)).to.deep.equal([50, -20]);
    const log = await svc.admin('GET', '/admin/events?stream=user-alice');
    expect(log.status).to.equal(200);
    expect(log.body.data.events.map((event: { type: string }) => event.type)).to.include.members([
      'UserRegistered',
      'ReferralClaimCounted',
      'CreditsWithdrawn',
    ]);
  });
});
