import { expect } from 'chai';
import { claimResponse, getUserResponse } from '../../src/http/schemas/users.js';
import { codeResponse } from '../../src/http/schemas/codes.js';
import { createUser, days, eventually, events, getUser, never, putAffiliate, putProgram, putPromo, putReward } from '../support/fixtures.js';
import { startTestService, type TestService } from '../support/test-service.js';

const mainRewards = {
  sender: [{ reward_key: 'credits-5', activation: { variant: 'claim', amount: 1, limit: 0 }, deactivation: never }],
  receiver: [
    { reward_key: 'premium-week', activation: { variant: 'claim' }, deactivation: days(7) },
    { reward_key: 'welcome-bonus', activation: { variant: 'conversion' }, deactivation: never },
  ],
};

describe('API: claiming codes and the rewards engine', () => {
  let svc: TestService;

  before(async () => {
    svc = await startTestService({ env: { REFERRAL_LINK_BASE: 'https://app.example/r' } });
    await putReward(svc, 'credits-5', { kind: 'credit', name: 'Five credits', credits: 5 });
    await putReward(svc, 'premium-week', { kind: 'basic', name: 'Premium week' });
    await putReward(svc, 'welcome-bonus', { kind: 'credit', name: 'Welcome bonus', credits: 3 });
    await putProgram(svc, 'main', { limit: 0, rewards: mainRewards });
  });
  after(async () => svc.stop());

  describe('a referral claim', () => {
    it('grants the receiver its claim rewards, records referred_by and closes eligibility', async () => {
      const referrer = await createUser(svc, 'ref-a');
      expect(referrer.referral_code).to.match(/^[ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{6}$/);
      expect(referrer.referral_code_link).to.equal(`https://app.example/r/${referrer.referral_code}`);
      expect(referrer.referral_program.id).to.equal('main');
      await createUser(svc, 'claimer-a');
      const response = await svc.call('POST', '/users/claimer-a/claim-code', { code: referrer.referral_code.toLowerCase() });
      expect(response.status).to.equal(200);
      const { rewards_granted, user } = claimResponse.parse(response.body).data;
      expect(rewards_granted.basic).to.have.length(1);
      expect(rewards_granted.basic[0]!.reward.key).to.equal('premium-week');
      expect(rewards_granted.credit).to.have.length(0);
      expect(user.referred_by).to.deep.include({ code: referrer.referral_code, type: 'referral' });
      expect(user.claim_code_eligibility).to.deep.equal({ eligible: false, eligible_until: null });
      expect(user.rewards.active.basic).to.have.length(1);
      const expires = Date.parse(rewards_granted.basic[0]!.expires_at!);
      expect(expires - Date.parse(rewards_granted.basic[0]!.created_at)).to.equal(7 * 86_400_000);
      const fetched = getUserResponse.parse((await svc.call('GET', '/users/claimer-a')).body).data.user;
      expect(fetched.referred_by?.claimed_at).to.be.a('string');
    });

    it('counts the claim for the referrer and grants its sender reward (eventually)', async () => {
      const referrer = await eventually(async () => {
        const user = await getUser(svc, 'ref-a');
        expect(user.stats.claims).to.equal(1);
        return user;
      });
      expect(referrer.rewards.active.credit).to.have.length(1);
      expect(referrer.rewards.active.credit[0].credits).to.equal(5);
    });

    it('converts and churns: conversion reward for the claimer, stats for the referrer', async () => {
      const response = await svc.call('POST', '/users', { app_user_id: 'claimer-a', is_premium: true, is_trial: false });
      expect(response.status).to.equal(200);
      expect(response.body.data.user.rewards.active.credit.map((entry: any) => entry.reward.key)).to.deep.equal(['welcome-bonus']);
      await svc.call('POST', '/users', { app_user_id: 'claimer-a', is_premium: false });
      await svc.call('POST', '/users', { app_user_id: 'claimer-a', is_premium: true });
      await svc.call('POST', '/users', { app_user_id: 'claimer-a', is_premium: false });
      await eventually(async () => expect((await getUser(svc, 'ref-a')).stats).to.deep.equal({ claims: 1, conversions: 1, churns: 1 }));
      expect((await getUser(svc, 'claimer-a')).rewards.active.credit).to.have.length(1);
    });

    it('a trial user does not convert', async () => {
      const referrer = await getUser(svc, 'ref-a');
      await createUser(svc, 'claimer-trial');
      await svc.call('POST', '/users/claimer-trial/claim-code', { code: referrer.referral_code });
      const user = (await svc.call('POST', '/users', { app_user_id: 'claimer-trial', is_premium: true, is_trial: true })).body.data.user;
      expect(user.rewards.active.credit).to.have.length(0);
    });
  });

  describe('the checks of SPEC §5.1, in order', () => {
    it('400 BAD_REQUEST for a missing, empty or too long code', async () => {
      for (const body of [{}, { code: '' }, { code: 'X'.repeat(65) }, { code: 7 }]) {
        const response = await svc.call('POST', '/users/claimer-a/claim-code', body);
        expect(response.status).to.equal(400);
        expect(response.body.errors[0]).to.include({ code: 'BAD_REQUEST', source: '/code' });
      }
    });

    it('404 NOT_FOUND.USER before looking at the code', async () => {
      const response = await svc.call('POST', '/users/ghost/claim-code', { code: 'NOPE42' });
      expect(response.status).to.equal(404);
      expect(response.body.errors[0].code).to.equal('NOT_FOUND.USER');
    });

    it('422 CLAIM.CODE_NOT_FOUND', async () => {
      await createUser(svc, 'checker');
      const response = await svc.call('POST', '/users/checker/claim-code', { code: 'NOPE42' });
      expect(response.status).to.equal(422);
      expect(response.body.errors[0]).to.include({ code: 'CLAIM.CODE_NOT_FOUND', source: '/code' });
    });

    it('422 CLAIM.CODE_NOT_FOUND for a Unicode look-alike of a code (only ASCII letters match case-insensitively)', async () => {
      await putPromo(svc, 'STRASSE');
      await createUser(svc, 'look-alike');
      for (const code of ['straße', '\ufb06rasse']) {
        const response = await svc.call('POST', '/users/look-alike/claim-code', { code });
        expect(response.status, code).to.equal(422);
        expect(response.body.errors[0]).to.include({ code: 'CLAIM.CODE_NOT_FOUND', source: '/code' });
        expect((await svc.call('GET', `/codes/${encodeURIComponent(code)}`)).status, code).to.equal(404);
      }
      expect((await svc.call('POST', '/users/look-alike/claim-code', { code: 'strasse' })).status).to.equal(200);
    });

    it('422 CLAIM.ALREADY_CLAIMED', async () => {
      const referrer = await getUser(svc, 'ref-a');
      const response = await svc.call('POST', '/users/claimer-a/claim-code', { code: referrer.referral_code });
      expect(response.body.errors[0].code).to.equal('CLAIM.ALREADY_CLAIMED');
    });

    it('422 CLAIM.OWN_CODE for the own referral code and for a code of an affiliate linked to the user', async () => {
      const own = await createUser(svc, 'self-claimer');
      expect((await svc.call('POST', '/users/self-claimer/claim-code', { code: own.referral_code })).body.errors[0].code).to.equal('CLAIM.OWN_CODE');
      await putAffiliate(svc, 'self-aff', { app_user_id: 'self-claimer', codes: ['SELFAFF'] });
      expect((await svc.call('POST', '/users/self-claimer/claim-code', { code: 'selfaff' })).body.errors[0].code).to.equal('CLAIM.OWN_CODE');
    });

    it('422 CLAIM.NOT_ELIGIBLE after the claim window', async () => {
      const firstSeen = new Date(svc.clock.now().getTime() - 8 * 86_400_000).toISOString();
      const user = await createUser(svc, 'late', { first_seen_at: firstSeen });
      expect(user.claim_code_eligibility.eligible).to.equal(false);
      await putPromo(svc, 'LATE1');
      const response = await svc.call('POST', '/users/late/claim-code', { code: 'LATE1' });
      expect(response.body.errors[0].code).to.equal('CLAIM.NOT_ELIGIBLE');
    });

    it('422 CLAIM.CODE_INACTIVE for an inactive promo and an affiliate that is not approved (every other status)', async () => {
      await putPromo(svc, 'OFF1', { is_active: false });
      const notApproved = ['pending', 'rejected', 'withdrawn', 'archived', 'deactivated', 'banned'];
      for (const status of notApproved) await putAffiliate(svc, `${status}-aff`, { status, codes: [`${status.toUpperCase()}AFF`] });
      await createUser(svc, 'inactive-claimer');
      for (const code of ['OFF1', ...notApproved.map((status) => `${status.toUpperCase()}AFF`)]) {
        const response = await svc.call('POST', '/users/inactive-claimer/claim-code', { code });
        expect(response.status, code).to.equal(422);
        expect(response.body.errors[0].code, code).to.equal('CLAIM.CODE_INACTIVE');
      }
    });

    it('422 CLAIM.LIMIT_REACHED once a promo is used up', async () => {
      await putPromo(svc, 'ONCE1', { limit: 1 });
      await createUser(svc, 'first-of-once');
      await createUser(svc, 'second-of-once');
      expect((await svc.call('POST', '/users/first-of-once/claim-code', { code: 'ONCE1' })).status).to.equal(200);
      expect((await svc.call('POST', '/users/second-of-once/claim-code', { code: 'ONCE1' })).body.errors[0].code).to.equal('CLAIM.LIMIT_REACHED');
      const code = codeResponse.parse((await svc.call('GET', '/codes/once1')).body).data;
      expect(code.is_active).to.equal(false);
    });
  });

  describe('invariants under concurrency', () => {
    it('40 concurrent creates of one user reserve one referral code, and every other code stays free', async () => {
      const responses = await Promise.all(Array.from({ length: 40 }, () => svc.call('POST', '/users', { app_user_id: 'twin' })));
      expect(responses.filter((response) => response.status === 201)).to.have.length(1);
      expect(responses.filter((response) => response.status === 200)).to.have.length(39);
      const codes = new Set(responses.map((response) => response.body.data.user.referral_code));
      expect(codes.size).to.equal(1);
      const reserved = (await events(svc, 'type=CodeReserved')).filter((event) => event.data.owner_id === 'twin');
      expect(reserved.map((event) => event.data.code)).to.deep.equal([...codes]);
    });

    it('a code with limit N is claimed by exactly N of many parallel claimers', async () => {
      await putPromo(svc, 'LIMIT5', { limit: 5 });
      const users = Array.from({ length: 40 }, (_, index) => `limit-user-${index}`);
      await Promise.all(users.map((user) => createUser(svc, user)));
      const responses = await Promise.all(users.map((user) => svc.call('POST', `/users/${user}/claim-code`, { code: 'LIMIT5' })));
      expect(responses.filter((response) => response.status === 200)).to.have.length(5);
      const refused = responses.filter((response) => response.status !== 200);
      expect(refused.map((response) => response.body.errors[0].code)).to.deep.equal(Array(35).fill('CLAIM.LIMIT_REACHED'));
      const promo = (await svc.admin('GET', '/admin/promo-codes/LIMIT5')).body.data.promo_code;
      expect(promo.stats.claims).to.equal(5);
    });

    it('claims batched on one code keep their own request ids in the slot events', async () => {
      await putPromo(svc, 'TRACED', { limit: 0 });
      const users = Array.from({ length: 24 }, (_, index) => `traced-${index}`);
      await Promise.all(users.map((user) => createUser(svc, user)));
      await Promise.all(users.map((user) => svc.call('POST', `/users/${user}/claim-code`, { code: 'TRACED' }, { 'x-request-id': `req-${user}` })));
      const slots = await events(svc, 'stream=code-TRACED&type=ClaimSlotTaken');
      expect(slots).to.have.length(users.length);
      for (const slot of slots) expect(slot.metadata.correlation_id).to.equal(`req-${slot.data.claimer}`);
      expect(slots.map((slot) => slot.data.taken)).to.deep.equal(users.map((_, index) => index + 1));
    });

    it('one user racing to claim many codes succeeds exactly once, leaving no slot behind', async () => {
      const codes = Array.from({ length: 12 }, (_, index) => `RACE${index}`);
      await Promise.all(codes.map((code) => putPromo(svc, code, { limit: 1 })));
      await createUser(svc, 'racer');
      const responses = await Promise.all(codes.map((code) => svc.call('POST', '/users/racer/claim-code', { code })));
      expect(responses.filter((response) => response.status === 200)).to.have.length(1);
      expect(responses.filter((response) => response.status === 422).map((response) => response.body.errors[0].code)).to.deep.equal(
        Array(11).fill('CLAIM.ALREADY_CLAIMED'),
      );
      const open = await Promise.all(codes.map(async (code) => (await svc.call('GET', `/codes/${code}`)).body.data.is_active));
      expect(open.filter((active) => active === false)).to.have.length(1);
    });

    it("one user's many parallel claims of a limited code take one slot: the others are ALREADY_CLAIMED, and other claimers get the rest", async () => {
      await putPromo(svc, 'SHARED3', { limit: 3 });
      await Promise.all(['greedy', 'fair-1', 'fair-2'].map((user) => createUser(svc, user)));
      const [greedy, fair] = await Promise.all([
        Promise.all(Array.from({ length: 30 }, () => svc.call('POST', '/users/greedy/claim-code', { code: 'SHARED3' }))),
        Promise.all(['fair-1', 'fair-2'].map((user) => svc.call('POST', `/users/${user}/claim-code`, { code: 'SHARED3' }))),
      ]);
      expect(greedy.filter((response) => response.status === 200)).to.have.length(1);
      // Checked (SPEC §5.1 step 4) before the limit (step 8): no refusal of greedy's is about the limit.
      expect(greedy.filter((response) => response.status !== 200).map((response) => response.body.errors[0].code)).to.deep.equal(
        Array(29).fill('CLAIM.ALREADY_CLAIMED'),
      );
      // The claims in flight held no slot the other claimers needed: 1 + 2 claims on a limit of 3.
      expect(fair.map((response) => response.status)).to.deep.equal([200, 200]);
      const promo = (await svc.admin('GET', '/admin/promo-codes/SHARED3')).body.data.promo_code;
      expect(promo.stats.claims).to.equal(3);
    });

    it('an approved affiliate code claimed by 40 users at once: every claim succeeds and the affiliate counts 40 claims', async () => {
      await putAffiliate(svc, 'crowd-aff', { codes: ['AFFCROWD'] });
      const users = Array.from({ length: 40 }, (_, index) => `aff-fan-${index}`);
      await Promise.all(users.map((user) => createUser(svc, user)));
      const responses = await Promise.all(users.map((user) => svc.call('POST', `/users/${user}/claim-code`, { code: 'AFFCROWD' })));
      expect(responses.map((response) => response.status)).to.deep.equal(Array(40).fill(200));
      for (const response of responses) expect(response.body.data.user.referred_by).to.deep.include({ code: 'AFFCROWD', type: 'affiliate' });
      await eventually(async () => expect((await svc.admin('GET', '/admin/affiliates/crowd-aff')).body.data.affiliate.stats.claims).to.equal(40));
      expect(await events(svc, 'type=CodeClaimed&stream_prefix=user-aff-fan-')).to.have.length(40);
    });

    it('30 claimers each converting 3 times at once count 30 conversions, grant a conversion sender reward exactly to its limit, then 30 churns', async () => {
      // Its own service: the referrer needs a program of its own at 100% (this file's programs are shared).
      const own = await startTestService();
      try {
        await putReward(own, 'credit-1', { kind: 'credit', name: 'One credit', credits: 1 });
        await putProgram(own, 'converting', {
          rewards: { sender: [{ reward_key: 'credit-1', activation: { variant: 'conversion', amount: 2, limit: 4 }, deactivation: never }] },
        });
        const referrer = await createUser(own, 'converter-ref');
        const claimers = Array.from({ length: 30 }, (_, index) => `converter-${index}`);
        await Promise.all(claimers.map((user) => createUser(own, user)));
        const claims = await Promise.all(claimers.map((user) => own.call('POST', `/users/${user}/claim-code`, { code: referrer.referral_code })));
        expect(claims.map((claim) => claim.status)).to.deep.equal(Array(30).fill(200));
        const thrice = [...claimers, ...claimers, ...claimers];
        const conversions = await Promise.all(thrice.map((user) => own.call('POST', '/users', { app_user_id: user, is_premium: true, is_trial: false })));
        expect(conversions.map((response) => response.status)).to.deep.equal(Array(90).fill(200));
        await eventually(async () => expect((await getUser(own, 'converter-ref')).stats).to.deep.equal({ claims: 30, conversions: 30, churns: 0 }));
        expect(await events(own, 'type=UserConverted')).to.have.length(30);
        const counted = await events(own, 'stream=user-converter-ref&type=ReferralConversionCounted');
        expect(counted.map((event) => event.data.conversions)).to.deep.equal(Array.from({ length: 30 }, (_, index) => index + 1));
        // Granted at conversions 2, 4, 6 and 8; the limit of 4 stops it there.
        await eventually(async () => expect(await events(own, 'stream=user-converter-ref&type=RewardGranted')).to.have.length(4));
        const credits = (await getUser(own, 'converter-ref')).rewards.active.credit;
        expect(credits.map((entry: any) => [entry.reward.key, entry.credits])).to.deep.equal([['credit-1', 4]]);

        const churns = await Promise.all(thrice.map((user) => own.call('POST', '/users', { app_user_id: user, is_premium: false })));
        expect(churns.map((response) => response.status)).to.deep.equal(Array(90).fill(200));
        await eventually(async () => expect((await getUser(own, 'converter-ref')).stats).to.deep.equal({ claims: 30, conversions: 30, churns: 30 }));
        expect(await events(own, 'type=UserChurned')).to.have.length(30);
        const churnsCounted = await events(own, 'stream=user-converter-ref&type=ReferralChurnCounted');
        expect(churnsCounted.map((event) => event.data.churns)).to.deep.equal(Array.from({ length: 30 }, (_, index) => index + 1));
        expect(await events(own, 'stream=user-converter-ref&type=RewardGranted')).to.have.length(4);
      } finally {
        await own.stop();
      }
    });

    it('program limit, stats.claims and a limited sender reward hold with many parallel claimers', async () => {
      await putReward(svc, 'credits-1', { kind: 'credit', name: 'One credit', credits: 1 });
      // Route the next new user into "busy": main 0%, busy 100% (assignment is sticky for others).
      await putProgram(svc, 'main', { distribution_percentage: 0, rewards: mainRewards });
      await putProgram(svc, 'busy', {
        distribution_percentage: 100,
        limit: 30,
        rewards: { sender: [{ reward_key: 'credits-1', activation: { variant: 'claim', amount: 4, limit: 5 }, deactivation: never }] },
      });
      const referrer = await createUser(svc, 'popular');
      expect(referrer.referral_program.id).to.equal('busy');
      const claimers = Array.from({ length: 48 }, (_, index) => `fan-${index}`);
      await Promise.all(claimers.map((user) => createUser(svc, user)));
      const responses = await Promise.all(claimers.map((user) => svc.call('POST', `/users/${user}/claim-code`, { code: referrer.referral_code })));
      const successes = responses.filter((response) => response.status === 200).length;
      expect(successes).to.equal(30);
      expect(responses.filter((response) => response.status === 422).every((response) => response.body.errors[0].code === 'CLAIM.LIMIT_REACHED')).to.equal(
        true,
      );
      const user = await eventually(async () => {
        const current = await getUser(svc, 'popular');
        expect(current.stats.claims).to.equal(30);
        return current;
      });
      // Granted at claims 4, 8, 12, 16 and 20; the limit of 5 stops it there.
      // One never-expiring entry accumulates them (SPEC §5.3).
      expect(user.rewards.active.credit.map((entry: any) => [entry.reward.key, entry.credits])).to.deep.equal([['credits-1', 5]]);
      const counted = await events(svc, `stream=user-popular&type=ReferralClaimCounted`);
      expect(counted.map((event) => event.data.claims)).to.deep.equal(Array.from({ length: 30 }, (_, index) => index + 1));
      // Counted in batches, each count and grant still names the claim that caused it (auditors trace credits by it).
      const claims = await events(svc, 'type=CodeClaimed&stream_prefix=user-fan-');
      const claimAt = new Map(claims.map((claim) => [claim.position, claim]));
      const claimBy = new Map(claims.map((claim) => [claim.stream.slice('user-'.length), claim]));
      for (const event of counted) {
        const claim = claimAt.get(event.data.cause_position)!;
        expect(event.metadata, `count ${event.data.claims}`).to.include({ causation_id: claim.id, correlation_id: claim.metadata.correlation_id });
      }
      const grants = (await events(svc, 'stream=user-popular&type=RewardGranted')).filter((event) => event.data.cause?.type === 'referrals');
      expect(grants).to.have.length(5);
      for (const grant of grants) {
        const claim = claimBy.get(grant.data.cause.claimer)!;
        expect(grant.metadata, `grant at ${grant.data.cause.count}`).to.include({ causation_id: claim.id, correlation_id: claim.metadata.correlation_id });
      }
    });
  });
});
