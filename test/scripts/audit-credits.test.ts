import { spawnSync } from 'node:child_process';
import path from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { auditCredits } from '../../src/application/audit/credit-audit.js';
import { EventLog } from '../../src/application/event-log.js';
import type { ReadStore } from '../../src/ports/read-store.js';
import { TOKENS } from '../../src/ports/tokens.js';
import { DAY, event, iso, registered, rewardGranted } from '../support/events.js';
import { createUser, days, putReward } from '../support/fixtures.js';
import { ManualClock, startTestService } from '../support/test-service.js';

function runAudit(dataDir: string, args: string[] = [], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'scripts/audit-credits.ts', ...args], {
    env: { ...process.env, DATA_DIR: dataDir, NODE_ENV: 'test', ...env },
    encoding: 'utf8',
  });
}

/** `npm run audit`, the name issue #10 gives the audit: the same script through npm. */
function runNpmAudit(dataDir: string) {
  const npm = process.env.npm_execpath;
  const [command, args] = npm ? [process.execPath, [npm, 'run', '-s', 'audit']] : ['npm', ['run', '-s', 'audit']];
  return spawnSync(command, args, { env: { ...process.env, DATA_DIR: dataDir, NODE_ENV: 'test' }, encoding: 'utf8' });
}

/** A stopped service where each user got two grants of 7 tokens and withdrew 3 (ledger 7, 14, 11). */
async function ledgersOf(users: string[]) {
  const svc = await startTestService();
  await putReward(svc, 'tokens', { kind: 'credit', name: 'Tokens', credits: 7 });
  for (const user of users) {
    await createUser(svc, user);
    await svc.admin('POST', `/users/${user}/rewards/grant`, { key: 'tokens', operation_id: `${user}-1` });
    await svc.admin('POST', `/users/${user}/rewards/grant`, { key: 'tokens', operation_id: `${user}-2` });
    await svc.call('POST', `/users/${user}/rewards/withdraw-credits`, { key: 'tokens', amount: 3 });
  }
  await svc.stop();
  return svc;
}

/** A user's credit-ledger rows, oldest first, as stored (checked to be the 7, 14, 11 of `ledgersOf`). */
function ledgerRows(db: Database.Database, user: string) {
  const rows = db
    .prepare<[string], { id: string; doc: string }>(
      "SELECT id, doc FROM rm_credit_ledger WHERE json_extract(doc, '$.app_user_id') = ? ORDER BY json_extract(doc, '$.seq')",
    )
    .all(user);
  expect(rows.map((row) => JSON.parse(row.doc).balance_after)).to.deep.equal([7, 14, 11]);
  return rows;
}

/** `readStore` with one method replaced, the others its own. */
function replacing<K extends keyof ReadStore>(readStore: ReadStore, name: K, replacement: ReadStore[K]): ReadStore {
  return new Proxy(readStore, {
    get(target, property) {
      if (property === name) return replacement;
      const value = Reflect.get(target, property) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('npm run audit-credits', function () {
  this.timeout(60_000);

  it('says how many entries passed their expiry without an event recording it yet (balances still count them), and nothing once recorded', async () => {
    // The service's clock runs 3 days behind: its 1-day grant has lapsed by the audit's clock.
    const clock = new ManualClock(new Date(Date.now() - 3 * 86_400_000));
    const svc = await startTestService({ clock });
    await putReward(svc, 'tokens', { kind: 'credit', name: 'Tokens', credits: 7 });
    await createUser(svc, 'lapsing');
    await svc.admin('POST', '/users/lapsing/rewards/grant', { key: 'tokens', deactivation: days(1) });
    await svc.admin('POST', '/users/lapsing/rewards/grant', { key: 'tokens' });
    await svc.stop();
    const audit = runAudit(svc.dataDir);
    expect(audit.status, audit.stderr).to.equal(0);
    expect(audit.stdout).to.contain('1 reward entries passed their expiry and no event records it yet');
    expect(audit.stdout).to.match(/^ {2}user lapsing, entry manual\/[0-9a-f-]{36}\/0, expired at \d{4}-\d\d-\d\dT[\d:.]+Z$/m);
    expect(audit.stdout).to.match(/^tokens\s+1\s+14\s+14\s+14$/m);

    const again = await startTestService({ dataDir: svc.dataDir, clock: new ManualClock() });
    expect((await again.admin('GET', '/admin/users/lapsing/credit-ledger')).body.data.entries.at(-1)).to.include({ kind: 'expire', balance_after: 7 });
    await again.stop();
    const recorded = runAudit(svc.dataDir);
    expect(recorded.stdout).to.not.contain('passed their expiry');
    expect(recorded.stdout).to.match(/^tokens\s+1\s+7\s+7\s+7$/m);
  });

  it('names the first 20 lapsed entries and counts the rest on a line of their own', async () => {
    const clock = new ManualClock(new Date(Date.now() - 3 * 86_400_000));
    const svc = await startTestService({ clock });
    await putReward(svc, 'tokens', { kind: 'credit', name: 'Tokens', credits: 1 });
    await createUser(svc, 'many-lapsing');
    // A minute apart, so each grant is an entry of its own (grants with one expiry accumulate).
    for (let grant = 0; grant < 21; grant += 1) {
      clock.advance(60_000);
      expect((await svc.admin('POST', '/users/many-lapsing/rewards/grant', { key: 'tokens', deactivation: days(1) })).status).to.equal(201);
    }
    await svc.stop();
    const audit = runAudit(svc.dataDir);
    expect(audit.status, audit.stderr).to.equal(0);
    expect(audit.stdout).to.contain('21 reward entries passed their expiry and no event records it yet');
    expect(audit.stdout.match(/^ {2}user many-lapsing, entry /gm)).to.have.length(20);
    expect(audit.stdout).to.match(/^ {2}… and 1 more$/m);
  });

  it('passes on consistent data and reports a tampered read model with the event ids involved', async () => {
    const svc = await startTestService();
    await putReward(svc, 'tokens', { kind: 'credit', name: 'Tokens', credits: 7 });
    await createUser(svc, 'honest');
    await createUser(svc, 'tampered');
    for (const user of ['honest', 'tampered']) {
      await svc.admin('POST', `/users/${user}/rewards/grant`, { key: 'tokens' });
      await svc.call('POST', `/users/${user}/rewards/withdraw-credits`, { key: 'tokens', amount: 3 });
    }
    await svc.stop();

    const clean = runAudit(svc.dataDir);
    expect(clean.status, clean.stderr).to.equal(0);
    expect(clean.stdout).to.contain('No mismatch');
    // A real table: a header row naming each column, a rule, then one row per reward key.
    const lines = clean.stdout.split('\n');
    const header = lines.findIndex((line) => line.startsWith('reward key'));
    expect(lines[header]).to.match(/^reward key\s+users\s+balance from events\s+balance in read model\s+balance in ledger$/);
    expect(lines[header + 1]).to.match(/^-+( +-+){4}$/);
    expect(lines[header + 2]).to.match(/^tokens\s+2\s+8\s+8\s+8$/);
    expect(clean.stdout).to.not.contain('(index)');
    const viaNpm = runNpmAudit(svc.dataDir);
    expect(viaNpm.status, viaNpm.stderr).to.equal(0);
    expect(viaNpm.stdout).to.equal(clean.stdout);

    const db = new Database(path.join(svc.dataDir, 'referrals.db'));
    const row = db.prepare("SELECT id, doc FROM rm_user_rewards WHERE json_extract(doc, '$.app_user_id') = 'tampered'").get() as { id: string; doc: string };
    const doc = JSON.parse(row.doc) as { credits: number };
    doc.credits += 100;
    db.prepare('UPDATE rm_user_rewards SET doc = ? WHERE id = ?').run(JSON.stringify(doc), row.id);
    db.close();

    const dirty = runAudit(svc.dataDir);
    expect(dirty.status).to.equal(1);
    expect(dirty.stdout).to.contain('MISMATCH');
    expect(dirty.stdout).to.contain('tampered');
    expect(dirty.stdout).to.match(/^user\s+reward key\s+check\s+expected\s+actual\s+event ids$/m);
    expect(dirty.stdout).to.match(/^tampered\s+tokens\s+read_model\s+4\s+104\s/m);
    expect(dirty.stdout).to.not.match(/honest.*read_model/);
    expect(dirty.stdout).to.match(/[0-9a-f]{8}-[0-9a-f]{4}-/);
    const dirtyViaNpm = runNpmAudit(svc.dataDir);
    expect(dirtyViaNpm.status).to.equal(1);
    expect(dirtyViaNpm.stdout).to.equal(dirty.stdout);
  });

  it('exits 75, not with mismatches, while a read model it audits was built by another version (after an upgrade, before the replay)', async () => {
    const svc = await startTestService();
    await putReward(svc, 'tokens', { kind: 'credit', name: 'Tokens', credits: 7 });
    await createUser(svc, 'upgraded');
    await svc.admin('POST', '/users/upgraded/rewards/grant', { key: 'tokens' });
    await svc.stop();
    const db = new Database(path.join(svc.dataDir, 'referrals.db'));
    db.prepare("UPDATE checkpoints SET version = 0 WHERE projector = 'credit_ledger'").run();
    db.close();
    const audit = runAudit(svc.dataDir);
    expect(audit.status, audit.stdout).to.equal(75);
    expect(audit.stderr).to.contain('The read models credit_ledger were built by another version of the service: run `npm run replay`');
    expect(audit.stdout).to.not.contain('MISMATCH');
  });

  it("reports a user whose last ledger row is missing: the ledger's sum and last balance both disagree with the events", async () => {
    const svc = await ledgersOf(['row-lost', 'intact']);
    const db = new Database(path.join(svc.dataDir, 'referrals.db'));
    const rows = ledgerRows(db, 'row-lost');
    // The rows left still chain (7, then 14): only the sum and the last balance show the loss.
    db.prepare('DELETE FROM rm_credit_ledger WHERE id = ?').run(rows[2]!.id);
    db.close();

    const audit = runAudit(svc.dataDir);
    expect(audit.status, audit.stdout + audit.stderr).to.equal(1);
    expect(audit.stdout).to.match(/^row-lost\s+tokens\s+ledger_last\s+11\s+14\s/m);
    expect(audit.stdout).to.match(/^row-lost\s+tokens\s+ledger_sum\s+11\s+14\s/m);
    expect(audit.stdout).to.not.match(/^row-lost\s+tokens\s+(read_model|ledger_running)/m);
    expect(audit.stdout).to.not.match(/^intact\s/m);
  });

  it('exits 75, without auditing, while even one of the read models it audits is behind the log', async () => {
    const svc = await startTestService();
    await putReward(svc, 'tokens', { kind: 'credit', name: 'Tokens', credits: 7 });
    await createUser(svc, 'lagging');
    await svc.admin('POST', '/users/lagging/rewards/grant', { key: 'tokens' });
    await svc.stop();
    const db = new Database(path.join(svc.dataDir, 'referrals.db'));
    const head = (db.prepare('SELECT MAX(position) AS head FROM events').get() as { head: number }).head;
    const checkpoints = db.prepare<[], { projector: string; position: number }>('SELECT projector, position FROM checkpoints').all();
    // users and reward_expiries stand at the head; the credit ledger alone is one event behind.
    for (const name of ['users', 'reward_expiries', 'credit_ledger']) {
      expect(checkpoints.find((checkpoint) => checkpoint.projector === name)?.position, name).to.equal(head);
    }
    db.prepare("UPDATE checkpoints SET position = ? WHERE projector = 'credit_ledger'").run(head - 1);
    db.close();

    const audit = runAudit(svc.dataDir, ['--catch-up-timeout', '0']);
    expect(audit.status, audit.stdout + audit.stderr).to.equal(75);
    expect(audit.stderr).to.contain('The read models are behind the log');
    expect(audit.stdout).to.not.contain('Audited');
  });

  it('exits 78 naming the setting on a bad configuration, before reading the store', async () => {
    const svc = await startTestService();
    await svc.stop();
    const audit = runAudit(svc.dataDir, [], { CLAIM_WINDOW_DAYS: 'abc' });
    expect(audit.status, audit.stdout + audit.stderr).to.equal(78);
    expect(audit.stderr).to.contain('CLAIM_WINDOW_DAYS');
    expect(audit.stdout).to.not.contain('Audited');
  });

  it("reports a ledger row whose balance_after or delta was changed, naming that row's event (the sum and last balance still agree)", async () => {
    const svc = await ledgersOf(['balance-edited', 'delta-edited']);
    const db = new Database(path.join(svc.dataDir, 'referrals.db'));
    const middleRow = (user: string) => {
      const rows = ledgerRows(db, user);
      return { id: rows[1]!.id, doc: JSON.parse(rows[1]!.doc) as { balance_after: number; delta: number; event_id: string } };
    };
    const edited = middleRow('balance-edited');
    db.prepare('UPDATE rm_credit_ledger SET doc = ? WHERE id = ?').run(JSON.stringify({ ...edited.doc, balance_after: 999 }), edited.id);
    const delta = middleRow('delta-edited');
    db.prepare('UPDATE rm_credit_ledger SET doc = ? WHERE id = ?').run(JSON.stringify({ ...delta.doc, delta: 8 }), delta.id);
    db.close();

    const audit = runAudit(svc.dataDir);
    expect(audit.status).to.equal(1);
    expect(audit.stdout).to.match(new RegExp(`^balance-edited\\s+tokens\\s+ledger_running\\s+14\\s+999\\s+${edited.doc.event_id}\\s*$`, 'm'));
    expect(audit.stdout).to.not.match(/^balance-edited\s+tokens\s+ledger_(sum|last)/m);
    expect(audit.stdout).to.match(new RegExp(`^delta-edited\\s+tokens\\s+ledger_running\\s+15\\s+14\\s+${delta.doc.event_id}\\s*$`, 'm'));
  });

  it("reports an event whose own figures disagree (a withdrawal's credits_withdrawn or credits_available_at_start), though every balance agrees", async () => {
    const svc = await startTestService();
    await putReward(svc, 'tokens', { kind: 'credit', name: 'Tokens', credits: 7 });
    for (const user of ['withdrawn-edited', 'start-edited', 'untouched']) {
      await createUser(svc, user);
      await svc.admin('POST', `/users/${user}/rewards/grant`, { key: 'tokens', operation_id: `${user}-1` });
      await svc.call('POST', `/users/${user}/rewards/withdraw-credits`, { key: 'tokens', amount: 3 });
    }
    await svc.stop();
    const db = new Database(path.join(svc.dataDir, 'referrals.db'));
    const withdrawal = (user: string) =>
      db.prepare<[string], { id: string }>("SELECT id FROM events WHERE stream = ? AND type = 'CreditsWithdrawn'").get(`user-${user}`)!.id;
    const edit = (user: string, field: string, value: number) =>
      db.prepare(`UPDATE events SET data = json_set(data, '$.${field}', ?) WHERE id = ?`).run(value, withdrawal(user));
    // The probe's edit: the amount the API answered and the webhook sent, not the debits the balances follow.
    edit('withdrawn-edited', 'credits_withdrawn', 2);
    edit('start-edited', 'credits_available_at_start', 9);
    const ids = { withdrawn: withdrawal('withdrawn-edited'), start: withdrawal('start-edited') };
    db.close();

    const audit = runAudit(svc.dataDir);
    expect(audit.status, audit.stdout + audit.stderr).to.equal(1);
    expect(audit.stdout).to.match(new RegExp(`^withdrawn-edited\\s+tokens\\s+event_amounts\\s+3\\s+2\\s+${ids.withdrawn}\\s*$`, 'm'));
    expect(audit.stdout).to.match(new RegExp(`^start-edited\\s+tokens\\s+event_amounts\\s+7\\s+9\\s+${ids.start}\\s*$`, 'm'));
    expect(audit.stdout).to.not.match(/^untouched\s/m);
  });

  it('reports a grant, an expiry or a clawback whose own figures disagree: balance_after, credits_forfeited, credits_granted', async () => {
    const svc = await startTestService();
    try {
      const log = svc.service.container.resolve(EventLog);
      const forged = [
        registered('forged'),
        rewardGranted({ grant_id: 'kept', credits: 5, balance_after: 5 }),
        // Balance 10 after it, not 99.
        rewardGranted({ grant_id: 'lapsing', credits: 5, balance_after: 99, expires_at: iso(DAY) }),
        // The entry held 5 when it expired, not 4; the balance after it is right.
        event('RewardExpired', { grant_id: 'lapsing', reward_key: 'coins', kind: 'credit', expired_at: iso(DAY), credits_forfeited: 4, balance_after: 5 }),
        // Debits 5 and no shortfall account for 5 credits granted, not 6; the balance after it is 0, not 1.
        event('RewardRevoked', {
          grant_id: 'kept',
          entry_id: 'kept',
          reward_key: 'coins',
          kind: 'credit',
          revoked_at: iso(2 * DAY),
          claimer: 'someone',
          refund: { provider: 'stripe', notification_id: 'evt_r', transaction_id: 'in_1', original_transaction_id: null },
          credits_granted: 6,
          debits: [{ grant_id: 'kept', credits: 5 }],
          shortfall: 0,
          balance_after: 1,
        }),
      ];
      await log.append('user-forged', forged, 'no_stream', { correlation_id: 'forger', causation_id: 'forger', actor: 'process:test' });
      const ids = (await log.store.readStream('user-forged')).map((recorded) => recorded.id);
      const audit = await auditCredits(log, svc.service.container.resolve<ReadStore>(TOKENS.ReadStore));
      const found = audit.mismatches.filter((mismatch) => mismatch.check !== 'read_model' && !mismatch.check.startsWith('ledger'));
      expect(found.map((mismatch) => [mismatch.check, mismatch.expected, mismatch.actual, mismatch.event_ids])).to.deep.equal([
        ['event_balance_after', 10, 99, [ids[2]]],
        ['event_amounts', 5, 4, [ids[3]]],
        ['event_amounts', 5, 6, [ids[4]]],
        ['event_balance_after', 0, 1, [ids[4]]],
      ]);
    } finally {
      await svc.stop();
    }
  });

  it('finds no mismatch when the service writes for a user while the audit runs (a tampered balance is compared again and still shows)', async () => {
    const svc = await startTestService();
    try {
      await putReward(svc, 'tokens', { kind: 'credit', name: 'Tokens', credits: 7 });
      await createUser(svc, 'busy');
      await svc.admin('POST', '/users/busy/rewards/grant', { key: 'tokens' });
      const log = svc.service.container.resolve(EventLog);
      const readStore = svc.service.container.resolve<ReadStore>(TOKENS.ReadStore);
      // The service grants again after the scan stopped at its head, before the audit reads busy's rows.
      let granted = false;
      const racing = replacing(readStore, 'find', async (...args) => {
        if (!granted) {
          granted = true;
          expect((await svc.admin('POST', '/users/busy/rewards/grant', { key: 'tokens' })).status).to.equal(201);
        }
        return readStore.find(...args);
      });
      const audit = await auditCredits(log, racing);
      expect(granted).to.equal(true);
      expect(audit.mismatches).to.deep.equal([]);
      expect(audit.rows.find((row) => row.app_user_id === 'busy')).to.include({ events: 14, read_model: 14, ledger_sum: 14 });
    } finally {
      await svc.stop();
    }
  });

  it('keeps a mismatch when the read models stand behind the head it scanned to (no re-check hides a stale read model)', async () => {
    const svc = await startTestService();
    try {
      await putReward(svc, 'tokens', { kind: 'credit', name: 'Tokens', credits: 7 });
      await createUser(svc, 'stale');
      await svc.admin('POST', '/users/stale/rewards/grant', { key: 'tokens' });
      const db = new Database(path.join(svc.dataDir, 'referrals.db'));
      const row = db.prepare("SELECT id, doc FROM rm_user_rewards WHERE json_extract(doc, '$.app_user_id') = 'stale'").get() as { id: string; doc: string };
      db.prepare('UPDATE rm_user_rewards SET doc = ? WHERE id = ?').run(JSON.stringify({ ...JSON.parse(row.doc), credits: 0 }), row.id);
      db.close();
      const log = svc.service.container.resolve(EventLog);
      const readStore = svc.service.container.resolve<ReadStore>(TOKENS.ReadStore);
      // The read models say they stand at position 1, long before the grant.
      const behind = replacing(readStore, 'checkpoint', async (name) => ({ ...(await readStore.checkpoint(name)), position: 1n }));
      const audit = await auditCredits(log, behind);
      expect(audit.mismatches.map((mismatch) => [mismatch.app_user_id, mismatch.check, mismatch.expected, mismatch.actual])).to.deep.include([
        'stale',
        'read_model',
        7,
        0,
      ]);
    } finally {
      await svc.stop();
    }
  });
});
