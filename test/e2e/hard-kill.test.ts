import { spawnSync } from 'node:child_process';
import { expect } from 'chai';
import { get, post, SECRET_KEY, startChildService } from '../support/child-service.js';
import { tempDataDir } from '../support/test-service.js';

/** Fires `work(i)` for i = 0.. with `concurrency` in flight until `stop()` says so. */
async function burst(concurrency: number, total: number, work: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const index = next;
        next += 1;
        await work(index);
      }
    }),
  );
}

describe('E2E: hard kill (SIGKILL) of the real service process', function () {
  this.timeout(120_000);

  it('keeps every acknowledged user across a SIGKILL in the middle of a burst of upserts, and across restarts', async () => {
    const dataDir = tempDataDir();
    const first = await startChildService(dataDir);
    const acknowledged: string[] = [];
    let killed = false;
    await burst(16, 2_000, async (index) => {
      if (killed) return;
      const id = `burst-${index}`;
      try {
        const response = await post(first.url, '/users', { app_user_id: id, metadata: { index } });
        if (response.status === 201 || response.status === 200) acknowledged.push(id);
      } catch {
        // connection cut by the kill: not acknowledged
      }
      if (acknowledged.length === 300 && !killed) {
        killed = true;
        await first.kill();
      }
    });
    expect(killed).to.equal(true);
    expect(acknowledged.length).to.be.at.least(300);

    const second = await startChildService(dataDir);
    try {
      const missing: string[] = [];
      for (const id of acknowledged) {
        const response = await get(second.url, `/users/${id}`);
        if (response.status !== 200) missing.push(id);
      }
      expect(missing).to.deep.equal([]);
    } finally {
      await second.stop();
    }
    const third = await startChildService(dataDir);
    try {
      expect((await get(third.url, `/users/${acknowledged[0]}`)).status).to.equal(200);
    } finally {
      await third.stop();
    }
  });

  it('withdrawals with operation ids: kill mid-stream, restart, replay all — nothing applied twice, audit clean', async () => {
    const dataDir = tempDataDir();
    const first = await startChildService(dataDir);
    const put = await fetch(`${first.url}/admin/rewards/gold`, {
      method: 'PUT',
      headers: { 'x-api-key': SECRET_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'credit', name: 'Gold', credits: 100 }),
    });
    expect(put.status).to.equal(201);
    await post(first.url, '/users', { app_user_id: 'spender' });
    for (let index = 0; index < 3; index += 1) {
      expect((await post(first.url, '/users/spender/rewards/grant', { key: 'gold', operation_id: `grant-${index}` }, SECRET_KEY)).status).to.equal(201);
    }
    const operations = Array.from({ length: 120 }, (_, index) => `op-${index}`);
    let answered = 0;
    let killed = false;
    await burst(8, operations.length, async (index) => {
      if (killed) return;
      try {
        const response = await post(first.url, '/users/spender/rewards/withdraw-credits', { key: 'gold', amount: 2, operation_id: operations[index] });
        if (response.status === 200) answered += 1;
      } catch {
        // cut by the kill
      }
      if (answered === 40 && !killed) {
        killed = true;
        await first.kill();
      }
    });
    expect(killed).to.equal(true);

    const second = await startChildService(dataDir);
    try {
      const results = [];
      for (const operation of operations) {
        const response = await post(second.url, '/users/spender/rewards/withdraw-credits', { key: 'gold', amount: 2, operation_id: operation });
        expect(response.status).to.equal(200);
        results.push(response.body.data.withdraw_result);
      }
      expect(results.every((result) => result.credits_withdrawn === 2)).to.equal(true);
      const user = (await get(second.url, '/users/spender')).body.data.user;
      const balance = user.rewards.active.credit.reduce((sum: number, entry: { credits: number }) => sum + entry.credits, 0);
      expect(balance).to.equal(300 - 2 * operations.length);
      const withdrawals = (await get(second.url, '/admin/events?stream=user-spender&type=CreditsWithdrawn&limit=1000', SECRET_KEY)).body.data.events;
      expect(withdrawals).to.have.length(operations.length);
      const ledger = (await get(second.url, '/admin/users/spender/credit-ledger', SECRET_KEY)).body.data.entries;
      expect(ledger.reduce((sum: number, entry: { delta: number }) => sum + entry.delta, 0)).to.equal(balance);

      const audit = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/audit-credits.ts'], {
        env: { ...process.env, DATA_DIR: dataDir, NODE_ENV: 'test' },
        encoding: 'utf8',
      });
      expect(audit.status, audit.stdout + audit.stderr).to.equal(0);
      expect(audit.stdout).to.contain('No mismatch');
    } finally {
      await second.stop();
    }
  });

  it('claims on one referral code: kill mid-burst, restart, retry all — the code limit never exceeded, stats.claims exact, sender grants exactly to their limit, audit clean', async () => {
    const dataDir = tempDataDir();
    const first = await startChildService(dataDir);
    const admin = (pathname: string, body: unknown) =>
      fetch(`${first.url}${pathname}`, { method: 'PUT', headers: { 'x-api-key': SECRET_KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await admin('/admin/rewards/per-claim', { kind: 'credit', name: 'Per claim', credits: 2 })).status).to.equal(201);
    const sender = { reward_key: 'per-claim', activation: { variant: 'claim', amount: 1, limit: 25 }, deactivation: { variant: 'never' } };
    const program = { name: 'Killed', distribution_percentage: 100, limit: 40, rewards: { sender: [sender], receiver: [] } };
    expect((await admin('/admin/programs/killed', program)).status).to.equal(201);
    const referrer = await post(first.url, '/users', { app_user_id: 'kill-referrer' });
    const code: string = referrer.body.data.user.referral_code;
    const claimers = Array.from({ length: 120 }, (_, index) => `kill-claimer-${index}`);
    for (const claimer of claimers) expect((await post(first.url, '/users', { app_user_id: claimer })).status).to.equal(201);

    const acknowledged = new Set<string>();
    let killed = false;
    await burst(16, claimers.length, async (index) => {
      if (killed) return;
      try {
        const response = await post(first.url, `/users/${claimers[index]}/claim-code`, { code });
        if (response.status === 200) acknowledged.add(claimers[index]!);
      } catch {
        // cut by the kill
      }
      if (acknowledged.size === 20 && !killed) {
        killed = true;
        await first.kill();
      }
    });
    expect(killed).to.equal(true);

    const second = await startChildService(dataDir);
    try {
      for (const claimer of claimers) {
        const response = await post(second.url, `/users/${claimer}/claim-code`, { code });
        if (acknowledged.has(claimer))
          expect(response.body?.errors?.[0]?.code, `${claimer}: ${response.status} ${JSON.stringify(response.body)}`).to.equal('CLAIM.ALREADY_CLAIMED');
        else
          expect(
            response.status === 200 || ['CLAIM.ALREADY_CLAIMED', 'CLAIM.LIMIT_REACHED'].includes(response.body?.errors?.[0]?.code),
            JSON.stringify(response.body),
          ).to.equal(true);
      }
      const claimed: string[] = [];
      for (const claimer of claimers) {
        const user = (await get(second.url, `/users/${claimer}`)).body.data.user;
        if (user.referred_by !== null) claimed.push(claimer);
      }
      for (const claimer of acknowledged) expect(claimed).to.include(claimer);
      // Exactly the limit, without waiting for the claim repair: every claim the kill cut off
      // after its slot was taken was retried, and its claimer gave that slot back (as it took a
      // new one of the full code, or once its claim was recorded), so no dead slot keeps out a
      // claimer the limit has room for.
      expect(claimed.length).to.equal(40);
      let stats: { claims: number } = { claims: -1 };
      for (let attempt = 0; attempt < 100 && stats.claims !== claimed.length; attempt += 1) {
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 100));
        stats = (await get(second.url, '/users/kill-referrer')).body.data.user.stats;
      }
      expect(stats.claims).to.equal(claimed.length);
      const grants = async () => (await get(second.url, '/admin/events?stream=user-kill-referrer&type=RewardGranted&limit=1000', SECRET_KEY)).body.data.events;
      let granted = await grants();
      for (let attempt = 0; attempt < 100 && granted.length < 25; attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        granted = await grants();
      }
      expect(granted).to.have.length(25);
      const counted = (await get(second.url, '/admin/events?stream=user-kill-referrer&type=ReferralClaimCounted&limit=1000', SECRET_KEY)).body.data.events;
      expect(counted.map((event: { data: { claimer: string } }) => event.data.claimer).sort()).to.deep.equal([...claimed].sort());
      expect(counted.map((event: { data: { claims: number } }) => event.data.claims)).to.deep.equal(claimed.map((_, index) => index + 1));
      const credits = (await get(second.url, '/users/kill-referrer')).body.data.user.rewards.active.credit;
      expect(credits.reduce((sum: number, entry: { credits: number }) => sum + entry.credits, 0)).to.equal(50);
    } finally {
      await second.stop();
    }
    const audit = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/audit-credits.ts'], {
      env: { ...process.env, DATA_DIR: dataDir, NODE_ENV: 'test' },
      encoding: 'utf8',
    });
    expect(audit.status, audit.stdout + audit.stderr).to.equal(0);
    expect(audit.stdout).to.contain('No mismatch');
  });
});
