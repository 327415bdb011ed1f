import Database from 'better-sqlite3';
import { expect } from 'chai';
import path from 'node:path';
import type { EventStore, NewEvent } from '../../src/ports/event-store.js';
import type { ReadConsistency } from '../../src/ports/read-consistency.js';
import { TOKENS } from '../../src/ports/tokens.js';
import { createUser, eventually, events, getUser, never, putProgram, putPromo, putReward } from '../support/fixtures.js';
import { FaultSwitch, faultyBackend } from '../support/faulty-backend.js';
import { ManualClock, startTestService, tempDataDir, type TestService } from '../support/test-service.js';

function takenOf(svc: TestService, code: string) {
  return events(svc, `stream=code-${code}`).then((list) => {
    const last = list[list.length - 1]!;
    return last.type === 'CodeReserved' ? 0 : (last.data.taken as number);
  });
}

describe('Crash safety of claims and reactions', () => {
  it('a claim that dies between taking the slot and recording the claim is repaired: no slot without a claim', async () => {
    const faults = new FaultSwitch();
    const svc = await startTestService({ backend: faultyBackend(faults) });
    try {
      await putPromo(svc, 'HALFWAY', { limit: 1 });
      await createUser(svc, 'victim');
      await createUser(svc, 'next-in-line');
      // Every write to the claimer's stream fails: the claim and its compensation both die,
      // as if the process had been killed right after taking the slot.
      faults.mode = 'unavailable';
      faults.when = (method, args) => method === 'append' && args[0] === 'user-victim';
      const failed = await svc.call('POST', '/users/victim/claim-code', { code: 'HALFWAY' });
      expect(failed.status).to.equal(503);
      expect(await takenOf(svc, 'HALFWAY')).to.equal(1);
      faults.mode = 'ok';

      // The grace period (60 s, README) counts from when the slot was taken.
      const [slot] = await events(svc, 'stream=code-HALFWAY&type=ClaimSlotTaken');
      const takenAt = new Date(slot!.recorded_at).getTime();
      // Before the grace period nothing is repaired (the claim could still be in flight).
      svc.clock.set(new Date(takenAt + 59_000));
      await svc.service.runMaintenance();
      expect(await takenOf(svc, 'HALFWAY')).to.equal(1);

      svc.clock.set(new Date(takenAt + 61_000));
      await svc.service.runMaintenance();
      expect(await takenOf(svc, 'HALFWAY')).to.equal(0);
      const victim = await events(svc, 'stream=user-victim');
      expect(victim.map((event) => event.type)).to.deep.equal(['UserRegistered', 'ClaimAbandoned']);
      expect((await getUser(svc, 'victim')).referred_by).to.equal(null);

      expect((await svc.call('POST', '/users/next-in-line/claim-code', { code: 'HALFWAY' })).status).to.equal(200);
      expect(await takenOf(svc, 'HALFWAY')).to.equal(1);
    } finally {
      await svc.stop();
    }
  });

  it("the claimer's retry after a claim died half-way gives its own slot back at once: others still find the code full", async () => {
    const faults = new FaultSwitch();
    const svc = await startTestService({ backend: faultyBackend(faults) });
    try {
      await putPromo(svc, 'RETRYME', { limit: 1 });
      await createUser(svc, 'victim');
      const others = Array.from({ length: 24 }, (_, index) => `other-${index}`);
      for (const other of others) await createUser(svc, other);
      faults.mode = 'unavailable';
      faults.when = (method, args) => method === 'append' && args[0] === 'user-victim';
      expect((await svc.call('POST', '/users/victim/claim-code', { code: 'RETRYME' })).status).to.equal(503);
      faults.mode = 'ok';
      expect(await takenOf(svc, 'RETRYME')).to.equal(1);

      // Within the repair's grace period, the victim retries while two dozen others try the code.
      const [retried, ...refused] = await Promise.all(['victim', ...others].map((user) => svc.call('POST', `/users/${user}/claim-code`, { code: 'RETRYME' })));
      expect(retried!.status, JSON.stringify(retried!.body)).to.equal(200);
      for (const response of refused) {
        expect(response.status).to.equal(422);
        expect(response.body.errors[0].code).to.equal('CLAIM.LIMIT_REACHED');
      }
      expect(await takenOf(svc, 'RETRYME')).to.equal(1);
      const victim = await events(svc, 'stream=user-victim');
      expect(victim.map((event) => event.type)).to.deep.equal(['UserRegistered', 'ClaimAbandoned', 'CodeClaimed']);
      expect((await getUser(svc, 'victim')).referred_by).to.not.equal(null);
      // The slot taken by the retry is the claim's: the repair, later, has nothing to release.
      svc.clock.set(new Date(Date.now() + 2 * 60_000));
      await svc.service.runMaintenance();
      expect(await takenOf(svc, 'RETRYME')).to.equal(1);
      expect(await events(svc, 'type=ClaimSlotReleased')).to.have.length(1);
    } finally {
      await svc.stop();
    }
  });

  it("a claimer's retry that finds room gives its earlier slot back once claimed: the code is not full of a dead claim", async () => {
    const faults = new FaultSwitch();
    const svc = await startTestService({ backend: faultyBackend(faults) });
    try {
      await putPromo(svc, 'ROOMY', { limit: 3 });
      await putPromo(svc, 'ELSEWHERE', { limit: 1 });
      await createUser(svc, 'victim');
      await createUser(svc, 'wanderer');
      const others = Array.from({ length: 24 }, (_, index) => `other-${index}`);
      for (const other of others) await createUser(svc, other);
      faults.mode = 'unavailable';
      faults.when = (method, args) => method === 'append' && (args[0] === 'user-victim' || args[0] === 'user-wanderer');
      expect((await svc.call('POST', '/users/victim/claim-code', { code: 'ROOMY' })).status).to.equal(503);
      expect((await svc.call('POST', '/users/wanderer/claim-code', { code: 'ELSEWHERE' })).status).to.equal(503);
      faults.mode = 'ok';
      expect(await takenOf(svc, 'ROOMY')).to.equal(1);
      expect(await takenOf(svc, 'ELSEWHERE')).to.equal(1);

      // Within the repair's grace period: the wanderer claims another code, the victim retries
      // beside two dozen others while the code still has room.
      expect((await svc.call('POST', '/users/wanderer/claim-code', { code: 'ROOMY' })).status).to.equal(200);
      expect(await takenOf(svc, 'ELSEWHERE')).to.equal(0);
      const answers = await Promise.all(['victim', ...others].map((user) => svc.call('POST', `/users/${user}/claim-code`, { code: 'ROOMY' })));
      for (const answer of answers) {
        if (answer.status !== 200) expect(answer.body.errors[0].code).to.equal('CLAIM.LIMIT_REACHED');
      }
      const claimers = async () => (await events(svc, 'type=CodeClaimed')).filter((event) => event.data.code === 'ROOMY').length;
      // Every slot of the code is a recorded claim: none is left to the dead attempt.
      expect(await takenOf(svc, 'ROOMY')).to.equal(await claimers());
      const late = 'late-comer';
      await createUser(svc, late);
      const lateAnswer = await svc.call('POST', `/users/${late}/claim-code`, { code: 'ROOMY' });
      expect(lateAnswer.status).to.equal((await claimers()) < 3 ? 200 : 422);
      expect(await takenOf(svc, 'ROOMY')).to.equal(await claimers());
      expect(await claimers()).to.equal(3);
      expect((await events(svc, 'type=ClaimAbandoned')).map((event) => event.stream).sort()).to.deep.equal(['user-victim', 'user-wanderer']);
    } finally {
      await svc.stop();
    }
  });

  it('a slot whose claim was abandoned by a request that died before releasing it is released by the next repair run, without its grace period', async () => {
    const faults = new FaultSwitch();
    const svc = await startTestService({ backend: faultyBackend(faults) });
    try {
      await putPromo(svc, 'SETTLED', { limit: 2 });
      await createUser(svc, 'victim');
      faults.mode = 'unavailable';
      faults.when = (method, args) => method === 'append' && args[0] === 'user-victim';
      expect((await svc.call('POST', '/users/victim/claim-code', { code: 'SETTLED' })).status).to.equal(503);
      // The retry is recorded and abandons the dead claim, but the release of its slot fails,
      // as if the process died between the two.
      faults.when = (method, args) =>
        method === 'append' && args[0] === 'code-SETTLED' && (args[1] as NewEvent[]).some((event) => event.type === 'ClaimSlotReleased');
      expect((await svc.call('POST', '/users/victim/claim-code', { code: 'SETTLED' })).status).to.equal(200);
      faults.mode = 'ok';
      expect(await takenOf(svc, 'SETTLED')).to.equal(2);
      expect((await events(svc, 'stream=user-victim')).map((event) => event.type)).to.deep.equal(['UserRegistered', 'CodeClaimed', 'ClaimAbandoned']);

      // Seconds later, well within the grace period: the claimer's stream has settled the claim.
      await svc.service.runMaintenance();
      expect(await takenOf(svc, 'SETTLED')).to.equal(1);
      await createUser(svc, 'next-in-line');
      expect((await svc.call('POST', '/users/next-in-line/claim-code', { code: 'SETTLED' })).status).to.equal(200);
    } finally {
      await svc.stop();
    }
  });

  it('one repair run releases every abandoned slot, not only the first', async () => {
    const faults = new FaultSwitch();
    const svc = await startTestService({ backend: faultyBackend(faults) });
    try {
      const victims = ['victim-a', 'victim-b', 'victim-c'];
      const codeOf = (victim: string) => `LOST${victim.slice(-1).toUpperCase()}`;
      for (const victim of victims) {
        await putPromo(svc, codeOf(victim), { limit: 1 });
        await createUser(svc, victim);
      }
      faults.mode = 'unavailable';
      faults.when = (method, args) => method === 'append' && String(args[0]).startsWith('user-victim-');
      for (const victim of victims) {
        expect((await svc.call('POST', `/users/${victim}/claim-code`, { code: codeOf(victim) })).status).to.equal(503);
        expect(await takenOf(svc, codeOf(victim))).to.equal(1);
      }
      faults.mode = 'ok';
      const head = (await svc.service.container.resolve<EventStore>(TOKENS.EventStore).headPosition())!;
      expect(await svc.service.container.resolve<ReadConsistency>(TOKENS.ReadConsistency).waitFor(head, 10_000)).to.equal(true);

      svc.clock.set(new Date(Date.now() + 2 * 60_000));
      await svc.service.runMaintenance();
      for (const victim of victims) expect(await takenOf(svc, codeOf(victim)), victim).to.equal(0);
      expect((await events(svc, 'type=ClaimAbandoned')).map((event) => event.stream).sort()).to.deep.equal(victims.map((victim) => `user-${victim}`));
    } finally {
      await svc.stop();
    }
  });

  it('a claimer whose claim died after its payment customer was counted is not counted again when it retries', async () => {
    const faults = new FaultSwitch();
    const svc = await startTestService({ backend: faultyBackend(faults) });
    try {
      await putProgram(svc, 'cards', { rewards: { sender: [], receiver: [] } });
      expect(
        (await svc.admin('PUT', '/admin/rules/one-per-card', { kind: 'payment_customer_claimers', params: { max: 1 }, action: 'reject', enabled: true }))
          .status,
      ).to.equal(201);
      const referrer = await createUser(svc, 'card-referrer');
      await createUser(svc, 'card-holder', { payment_customer_id: 'cus_card' });
      // The claim and every compensation of it fail, as if the process died right after counting the payment customer.
      faults.mode = 'unavailable';
      faults.when = (method, args) =>
        method === 'append' &&
        (args[0] === 'user-card-holder' ||
          (String(args[0]).startsWith('payment-customer-') && (args[1] as NewEvent[]).some((event) => event.type === 'PaymentCustomerClaimReleased')));
      expect((await svc.call('POST', '/users/card-holder/claim-code', { code: referrer.referral_code })).status).to.equal(503);
      faults.mode = 'ok';
      // Its retry is the same claimer, not a second one sharing the card.
      const retried = await svc.call('POST', '/users/card-holder/claim-code', { code: referrer.referral_code });
      expect(retried.status, JSON.stringify(retried.body)).to.equal(200);
      const counted = await events(svc, 'type=PaymentCustomerClaimCounted');
      expect(counted.map((event) => event.data.claimers)).to.deep.equal([1, 1]);
      // A second card holder is one too many.
      await createUser(svc, 'card-sharer', { payment_customer_id: 'cus_card' });
      const shared = await svc.call('POST', '/users/card-sharer/claim-code', { code: referrer.referral_code });
      expect(shared.body.errors[0]).to.deep.include({ code: 'CLAIM.REJECTED_BY_RULE', source: 'rule:one-per-card' });
    } finally {
      await svc.stop();
    }
  });

  it("a claim refused after its payment customer was counted gives the count back: the customer's next claimer gets through", async () => {
    const svc = await startTestService();
    try {
      await putProgram(svc, 'cards', { limit: 1, rewards: { sender: [], receiver: [] } });
      expect(
        (await svc.admin('PUT', '/admin/rules/one-per-card', { kind: 'payment_customer_claimers', params: { max: 1 }, action: 'reject', enabled: true }))
          .status,
      ).to.equal(201);
      const full = await createUser(svc, 'full-referrer');
      const open = await createUser(svc, 'open-referrer');
      await createUser(svc, 'first-in');
      expect((await svc.call('POST', '/users/first-in/claim-code', { code: full.referral_code })).status).to.equal(200);
      // Counted for its card, then refused by the referrer's limit: the count is given back.
      await createUser(svc, 'too-late', { payment_customer_id: 'cus_one' });
      expect((await svc.call('POST', '/users/too-late/claim-code', { code: full.referral_code })).body.errors[0].code).to.equal('CLAIM.LIMIT_REACHED');
      await createUser(svc, 'card-owner', { payment_customer_id: 'cus_one' });
      expect((await svc.call('POST', '/users/card-owner/claim-code', { code: open.referral_code })).status).to.equal(200);
      expect((await events(svc, 'type=PaymentCustomerClaimReleased')).map((event) => event.data.claimers)).to.deep.equal([0]);
    } finally {
      await svc.stop();
    }
  });

  it('a claim that lost its race gives its slot back at once', async () => {
    const svc = await startTestService();
    try {
      await putPromo(svc, 'GIVEBACK', { limit: 3 });
      await putPromo(svc, 'OTHER', { limit: 0 });
      await createUser(svc, 'double');
      const [a, b] = await Promise.all([
        svc.call('POST', '/users/double/claim-code', { code: 'GIVEBACK' }),
        svc.call('POST', '/users/double/claim-code', { code: 'OTHER' }),
      ]);
      expect([a.status, b.status].sort()).to.deep.equal([200, 422]);
      const giveback = await takenOf(svc, 'GIVEBACK');
      expect(giveback).to.equal(a.status === 200 ? 1 : 0);
    } finally {
      await svc.stop();
    }
  });

  it('the referral process manager neither loses nor doubles referrer rewards across failures and replays', async () => {
    const faults = new FaultSwitch();
    const dataDir = tempDataDir();
    const clock = new ManualClock();
    let svc = await startTestService({ dataDir, clock, backend: faultyBackend(faults) });
    await putReward(svc, 'per-claim', { kind: 'credit', name: 'Per claim', credits: 2 });
    await putProgram(svc, 'pm', {
      rewards: { sender: [{ reward_key: 'per-claim', activation: { variant: 'claim', amount: 1, limit: 0 }, deactivation: never }] },
    });
    const referrer = await createUser(svc, 'pm-referrer');
    // The reaction's writes to the referrer fail for a while: it must retry, not skip.
    faults.mode = 'unavailable';
    faults.when = (method, args) =>
      method === 'append' && args[0] === 'user-pm-referrer' && (args[1] as NewEvent[]).some((event) => event.type === 'ReferralClaimCounted');
    const claimers = Array.from({ length: 10 }, (_, index) => `pm-claimer-${index}`);
    for (const claimer of claimers) await createUser(svc, claimer);
    await Promise.all(claimers.map((claimer) => svc.call('POST', `/users/${claimer}/claim-code`, { code: referrer.referral_code })));
    expect((await getUser(svc, 'pm-referrer')).stats.claims).to.equal(0);
    const stuck = await eventually(async () => {
      const response = await svc.call('GET', '/readyz');
      expect(response.status).to.equal(503);
      return response.body.data.reactions;
    });
    expect(stuck.failure.error).to.contain('injected');
    // Operators alert on the gauge (README, Metrics): 1 while held, 0 once it goes on.
    const reactionsFailing = async () => /^reactions_failing (\d+)$/m.exec(await (await fetch(`${svc.url}/metrics`)).text())?.[1];
    expect(await reactionsFailing()).to.equal('1');
    faults.mode = 'ok';
    const before = await eventually(async () => {
      const user = await getUser(svc, 'pm-referrer');
      expect(user.stats.claims).to.equal(10);
      return user;
    });
    // Ten grants of one never-expiring reward accumulate in one entry (SPEC §5.3).
    expect(before.rewards.active.credit.map((entry: any) => entry.credits)).to.deep.equal([10 * 2]);
    expect(await events(svc, 'stream=user-pm-referrer&type=RewardGranted')).to.have.length(10);
    await eventually(async () => expect((await svc.call('GET', '/readyz')).body.data.reactions.failure).to.equal(null));
    expect(await reactionsFailing()).to.equal('0');
    await svc.stop();

    // Forget the process manager's checkpoint, as if it crashed before ever saving one.
    const db = new Database(path.join(dataDir, 'referrals.db'));
    db.prepare("DELETE FROM checkpoints WHERE projector LIKE 'reaction:%'").run();
    const head = (db.prepare('SELECT MAX(position) AS head FROM events').get() as { head: number }).head;
    db.close();

    svc = await startTestService({ dataDir, clock });
    try {
      await eventually(async () => {
        const replayed = new Database(path.join(dataDir, 'referrals.db'), { readonly: true });
        const row = replayed.prepare("SELECT position FROM checkpoints WHERE projector LIKE 'reaction:%'").get() as { position: number } | undefined;
        replayed.close();
        expect(row?.position ?? 0).to.be.at.least(head);
      });
      const after = await getUser(svc, 'pm-referrer');
      expect(after.stats).to.deep.equal(before.stats);
      expect(after.rewards.active.credit).to.deep.equal(before.rewards.active.credit);
      expect(await events(svc, 'stream=user-pm-referrer&type=RewardGranted')).to.have.length(10);
      expect(await events(svc, 'stream=user-pm-referrer&type=ReferralClaimCounted')).to.have.length(10);
    } finally {
      await svc.stop();
    }
  });
});
