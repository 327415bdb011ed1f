import 'reflect-metadata';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { defaultProjections } from '../support/projections.js';
import { links, REVENUE_LINKS } from '../../projections/revenue-index.js';
import { EventLog } from '../../src/application/event-log.js';
import { auditCredits } from '../../src/application/audit/credit-audit.js';
import { replayProjections } from '../../src/application/projections/projection-replay.js';
import { ExportOvertakenByErasure } from '../../src/application/privacy/export-erasure-gate.js';
import { customerSubject, keptKeyCount, userSubject } from '../../src/application/privacy/personal-data-cipher.js';
import { UserErasure } from '../../src/application/privacy/user-erasure.js';
import { UserExport } from '../../src/application/privacy/user-export.js';
import type { Backend } from '../../src/backends/backend.js';
import { WEBHOOKS_FILE } from '../../src/backends/embedded.js';
import type { EventStore } from '../../src/ports/event-store.js';
import type { KeyStore } from '../../src/ports/key-store.js';
import type { ReadConsistency } from '../../src/ports/read-consistency.js';
import type { ReadStore } from '../../src/ports/read-store.js';
import { TOKENS } from '../../src/ports/tokens.js';
import { createUser, eventually, getUser, never, putAffiliate, putProgram, putReward } from '../support/fixtures.js';
import { invoicePaid, STRIPE_SECRET, stripeEvent } from '../support/revenue-senders.js';
import { SECRET_KEY, startTestService, type TestService, tempDataDir } from '../support/test-service.js';
import { newRegistered } from '../support/new-events.js';
import { openSqlite } from '../../src/adapters/sqlite/sqlite-database.js';
import { SqliteEventStore } from '../../src/adapters/sqlite/sqlite-event-store.js';
import { pino } from 'pino';
import { Receiver } from '../support/webhook-receiver.js';

/** Distinctive plaintexts: found in the bytes only if they are stored in the clear. */
const EMAIL = 'ann.erasable@example.org';
const CUSTOMER = 'cus_ErasableAnn7341';
const ACCOUNT_TOKEN = '7f0c6a52-2f4e-4d7a-9a1b-3c5d2e8f9a10';
const LATER_EMAIL = 'ann.after-erasure@example.org';

/**
 * The files of the data directory (databases, -wal, -shm, the key store) whose raw bytes hold
 * `plaintext`. Read by grep, in a process of its own: the service runs in this process, and a
 * close() of a database file here would drop SQLite's POSIX locks on it, so the next process to
 * close it (the export below) would take itself for the last and delete the WAL under the service
 * (sqlite.org/howtocorrupt.html, 2.2), which the service then reports and refuses to write past.
 */
function filesHolding(dataDir: string, plaintext: string): string[] {
  const files = fs.readdirSync(dataDir).filter((name) => fs.statSync(path.join(dataDir, name)).isFile());
  const found = spawnSync('grep', ['-l', '-a', '-F', '-e', plaintext, '--', ...files], { cwd: dataDir, encoding: 'utf8' });
  if (found.status !== 0 && found.status !== 1) throw new Error(`grep failed: ${found.stderr}`);
  return found.stdout.split('\n').filter((name) => name !== '');
}

async function settled(svc: TestService) {
  const store = svc.service.container.resolve<EventStore>(TOKENS.EventStore);
  const consistency = svc.service.container.resolve<ReadConsistency>(TOKENS.ReadConsistency);
  for (;;) {
    const head = (await store.headPosition())!;
    await consistency.waitFor(head, 5_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    if ((await store.headPosition()) === head) return;
  }
}

async function liveDocuments(readStore: ReadStore) {
  const all: Record<string, unknown[]> = {};
  for (const projection of defaultProjections) {
    for (const collection of projection.collections) all[collection.name] = await readStore.find(collection.name);
  }
  return all;
}

async function userEvents(svc: TestService, appUserId: string) {
  const response = await svc.admin('GET', `/admin/events?stream=user-${appUserId}&limit=1000`);
  expect(response.status).to.equal(200);
  return response.body.data.events as { id: string; type: string; data: Record<string, any> }[];
}

describe('API: erasure and access (DELETE /admin/users/{id}, GET /admin/users/{id}/export)', function () {
  this.timeout(120_000);
  let svc: TestService;

  before(async () => {
    // A webhook endpoint that never answers: user.created messages wait in the outbox.
    svc = await startTestService({ env: { WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' } });
    expect((await svc.admin('PUT', '/admin/webhooks/backend', { url: 'http://127.0.0.1:9/hooks' })).status).to.equal(201);
    await putReward(svc, 'coins', { kind: 'credit', name: 'Coins', credits: 10 });
    await putProgram(svc, 'friends', {
      rewards: { sender: [{ reward_key: 'coins', activation: { variant: 'claim', amount: 1, limit: 0 }, deactivation: never }], receiver: [] },
    });
    const ann = await createUser(svc, 'ann', { metadata: { email: EMAIL, plan: 'gold' }, payment_customer_id: CUSTOMER });
    for (let index = 0; index < 3; index += 1) {
      await createUser(svc, `friend-${index}`);
      expect((await svc.call('POST', `/users/friend-${index}/claim-code`, { code: ann.referral_code })).status).to.equal(200);
    }
    await eventually(async () => expect((await getUser(svc, 'ann')).stats.claims).to.equal(3));
    expect((await svc.call('POST', '/users/ann/rewards/withdraw-credits', { key: 'coins', amount: 5, operation_id: 'w-1' })).status).to.equal(200);
    const link = { original_transaction_id: '2000000111', app_account_token: ACCOUNT_TOKEN };
    expect((await svc.call('POST', '/users/ann/transactions/app-store', link)).status).to.equal(204);
    // A transaction of ann's that friend-0 tries to link too: refused, and recorded for review under friend-0.
    expect((await svc.call('POST', '/users/friend-0/transactions/app-store', { original_transaction_id: '2000000111' })).status).to.equal(204);
    // Enough events on ann's stream for the executor to write a snapshot of its state.
    for (let index = 0; index < 110; index += 1) {
      expect((await svc.call('POST', '/users', { app_user_id: 'ann', metadata: { email: EMAIL, visit: index } })).status).to.equal(200);
    }
    await settled(svc);
  });
  after(async () => svc.stop());

  it('keeps personal fields encrypted in the log and clear for the application before erasure', async () => {
    const user = await getUser(svc, 'ann');
    expect(user.metadata).to.deep.equal({ email: EMAIL, visit: 109 });
    expect(user.payment_customer_id).to.equal(CUSTOMER);
    const db = new Database(path.join(svc.dataDir, 'referrals.db'), { readonly: true });
    const stored = db.prepare<[], { data: string }>("SELECT data FROM events WHERE stream = 'user-ann' ORDER BY revision").all();
    db.close();
    const outboxDb = new Database(path.join(svc.dataDir, WEBHOOKS_FILE), { readonly: true });
    const outbox = outboxDb.prepare<[], { payload: string }>("SELECT payload FROM webhook_messages WHERE event_type = 'user.created'").all();
    outboxDb.close();
    expect(JSON.stringify(stored)).to.not.contain(EMAIL).and.not.contain(CUSTOMER);
    expect(JSON.parse(stored[0]!.data).metadata).to.have.property('$encrypted');
    // The queued user.created message and the executor's snapshot of ann's state are sealed too.
    expect(outbox.map((row) => JSON.parse(row.payload).data.app_user_id)).to.include('ann');
    expect(JSON.stringify(outbox)).to.not.contain(EMAIL).and.not.contain(CUSTOMER);
    const snapshot = await svc.service.container.resolve<ReadStore>(TOKENS.ReadStore).get<{ state: Record<string, unknown> }>('snapshots', 'user-ann');
    expect(snapshot!.state.metadata).to.have.property('$encrypted');
    expect(JSON.stringify(snapshot)).to.not.contain(EMAIL).and.not.contain(CUSTOMER);
    // The read models keep them sealed as the log holds them: no file of the data directory holds them in the clear.
    const userDoc = await svc.service.container.resolve<ReadStore>(TOKENS.ReadStore).get<Record<string, unknown>>('users', 'ann');
    expect(userDoc!.metadata).to.have.property('$encrypted');
    expect(userDoc!.payment_customer_id).to.have.property('$encrypted');
    expect(filesHolding(svc.dataDir, EMAIL)).to.deep.equal([]);
    expect(filesHolding(svc.dataDir, CUSTOMER)).to.deep.equal([]);
    const exported = await svc.admin('GET', '/admin/users/ann/export');
    expect(exported.status).to.equal(200);
    const document = exported.body.data.export;
    expect(document.user.payment_customer_id).to.equal(CUSTOMER);
    expect(document.events[0].data).to.include({ payment_customer_id: CUSTOMER });
    expect(document.events[0].data.metadata).to.deep.equal({ email: EMAIL, plan: 'gold' });
    expect(document.credit_ledger.map((row: { delta: number }) => row.delta)).to.deep.equal([10, 10, 10, -5]);
    expect(document.transactions.links).to.have.length(1);
    expect(document.transactions.links[0]).to.include({ provider: 'app-store', transaction_id: '2000000111', app_account_token: ACCOUNT_TOKEN });
    expect(document.transactions.refused_attempts).to.deep.equal([]);
    // The other side's export lists its refused attempt, without naming ann (another person's id).
    const friend = (await svc.admin('GET', '/admin/users/friend-0/export')).body.data.export;
    expect(friend.transactions.links).to.deep.equal([]);
    expect(friend.transactions.refused_attempts.map((a: { transaction_id: string }) => a.transaction_id)).to.deep.equal(['2000000111']);
    expect(JSON.stringify(friend.transactions)).to.not.contain('ann');
  });

  it('DELETE erases: 204, fields null, the log shows {"erased": true}, no plaintext in any file of the data directory', async () => {
    const before = await getUser(svc, 'ann');
    // Opening ann's fields kept her key in memory; the erasure drops it at once. (At least one:
    // the kept keys are module-wide, and tests run earlier in the same process may hold another ann's.)
    expect(keptKeyCount(userSubject('ann'))).to.be.at.least(1);
    // Her payment customer's link, made by her registration (a digest of the customer id, for matching notifications to her).
    const [registration] = await userEvents(svc, 'ann');
    const customerLink = () => svc.service.container.resolve<ReadStore>(TOKENS.ReadStore).get(REVENUE_LINKS, links.customerLink('ann', registration!.id));
    expect(await customerLink()).to.have.property('customer');
    const deleted = await svc.admin('DELETE', '/admin/users/ann');
    expect(deleted.status).to.equal(204);
    expect(keptKeyCount(userSubject('ann'))).to.equal(0);
    const after = await getUser(svc, 'ann');
    expect(after).to.include({ metadata: null, payment_customer_id: null });
    const { metadata: _m, payment_customer_id: _p, ...kept } = before;
    const { metadata: _m2, payment_customer_id: _p2, ...keptAfter } = after;
    expect(keptAfter).to.deep.equal(kept);

    const events = await userEvents(svc, 'ann');
    expect(events[0]!.data.metadata).to.deep.equal({ erased: true });
    expect(events[0]!.data.payment_customer_id).to.deep.equal({ erased: true });
    expect(events.filter((event) => event.type === 'UserErased').map((event) => event.data.fields)).to.deep.equal([['metadata', 'payment_customer_id']]);
    // The executor's snapshot is rewritten at the erasure, fields gone: a cold load of ann's 100+ events starts there, not at her first event.
    const snapshot = await svc.service.container
      .resolve<ReadStore>(TOKENS.ReadStore)
      .get<{ revision: number; state: Record<string, unknown> }>('snapshots', 'user-ann');
    expect(snapshot!.revision).to.equal(events.length - 1);
    expect(snapshot!.state).to.include({ metadata: null, payment_customer_id: null });
    const webhookMessages = await svc.admin('GET', '/admin/webhooks/backend/deliveries?limit=100');
    const created = (webhookMessages.body.data.deliveries as { event_type: string }[]).filter((message) => message.event_type === 'user.created');
    expect(created.length).to.be.greaterThan(0);

    await settled(svc);
    expect(await customerLink()).to.equal(null);
    expect(filesHolding(svc.dataDir, EMAIL)).to.deep.equal([]);
    expect(filesHolding(svc.dataDir, CUSTOMER)).to.deep.equal([]);

    // The export script (stored JSON text passed through) shows the same marker.
    const exported = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/export-events.ts', '--stream-prefix', 'user-ann', '--type', 'UserRegistered'], {
      env: { ...process.env, DATA_DIR: svc.dataDir, NODE_ENV: 'test' },
      encoding: 'utf8',
    });
    expect(exported.status, exported.stderr).to.equal(0);
    const [line] = exported.stdout
      .trim()
      .split('\n')
      .map((text) => JSON.parse(text) as { data: Record<string, unknown> });
    expect(line!.data).to.deep.include({ metadata: { erased: true }, payment_customer_id: { erased: true } });
  });

  it('the export holds every affiliate linked to the user, whole as the admin API shows them', async () => {
    await createUser(svc, 'export-affiliate');
    expect((await svc.admin('GET', '/admin/users/export-affiliate/export')).body.data.export.affiliates).to.deep.equal([]);
    const platforms = [{ type: 'youtube', handle: '@exported', verified: true }];
    await putAffiliate(svc, 'aff-export', { name: 'Exported Affiliate', platforms, app_user_id: 'export-affiliate', codes: ['EXPORTAFF'] });
    await putAffiliate(svc, 'aff-export-2', { name: 'Second Channel', app_user_id: 'export-affiliate', codes: ['EXPORTAFF2'] });
    const exported = (await svc.admin('GET', '/admin/users/export-affiliate/export')).body.data.export;
    const admin = async (id: string) => (await svc.admin('GET', `/admin/affiliates/${id}`)).body.data.affiliate;
    expect(exported.affiliates).to.deep.equal([await admin('aff-export'), await admin('aff-export-2')]);
    expect(exported.affiliates[0]).to.deep.include({ id: 'aff-export', name: 'Exported Affiliate', platforms });
  });

  it('a second DELETE is a no-op (204, no new event); an unknown user is 404 NOT_FOUND.USER', async () => {
    const count = (await userEvents(svc, 'ann')).length;
    expect((await svc.admin('DELETE', '/admin/users/ann')).status).to.equal(204);
    expect((await userEvents(svc, 'ann')).length).to.equal(count);
    const unknown = await svc.admin('DELETE', '/admin/users/nobody');
    expect(unknown.status).to.equal(404);
    expect(unknown.body.errors[0].code).to.equal('NOT_FOUND.USER');
    for (const path of ['/admin/users/nobody/export', '/admin/users/nobody/account-token']) {
      const missing = await svc.admin('GET', path);
      expect(missing.status, path).to.equal(404);
      expect(missing.body.errors[0], path).to.include({ code: 'NOT_FOUND.USER', source: 'path:/app_user_id' });
    }
    expect((await svc.call('DELETE', '/admin/users/ann')).status).to.equal(403);
  });

  it('UserErased.erased_events lists the events that held a personal value, not those whose personal fields were null or absent', async () => {
    await createUser(svc, 'erased-events');
    await createUser(svc, 'erased-events', { metadata: { email: 'later@example.org' } });
    await createUser(svc, 'erased-events', { is_premium: true });
    const before = await userEvents(svc, 'erased-events');
    const withValue = before.filter((event) => event.type === 'UserProfileUpdated' && (event.data.changes as Record<string, unknown>).metadata !== undefined);
    expect(withValue).to.have.length(1);
    expect(before[0]).to.deep.include({ type: 'UserRegistered' });
    expect(before[0]!.data).to.include({ metadata: null, payment_customer_id: null });
    expect((await svc.admin('DELETE', '/admin/users/erased-events')).status).to.equal(204);
    const erasure = (await userEvents(svc, 'erased-events')).find((event) => event.type === 'UserErased')!;
    expect(erasure.data.erased_events).to.deep.equal([withValue[0]!.id]);
  });

  it('30 concurrent DELETEs of one user all answer 204 and erase once: exactly one UserErased', async () => {
    await createUser(svc, 'erased-at-once', { metadata: { email: 'erased-at-once@example.org' }, payment_customer_id: 'cus_erased_at_once' });
    const responses = await Promise.all(Array.from({ length: 30 }, () => svc.admin('DELETE', '/admin/users/erased-at-once')));
    expect(responses.map((response) => response.status)).to.deep.equal(Array(30).fill(204));
    expect((await userEvents(svc, 'erased-at-once')).filter((event) => event.type === 'UserErased')).to.have.length(1);
    const user = await getUser(svc, 'erased-at-once');
    expect(user.metadata).to.equal(null);
    expect(user.payment_customer_id).to.equal(null);
  });

  it('balances, stats and the credit audit are unaffected; a replay reproduces the read models', async () => {
    const user = await getUser(svc, 'ann');
    expect(user.stats.claims).to.equal(3);
    const ledger = await svc.admin('GET', '/admin/users/ann/credit-ledger');
    expect(ledger.body.data.entries.map((row: { balance_after: number }) => row.balance_after)).to.deep.equal([10, 20, 30, 25]);
    const log = svc.service.container.resolve(EventLog);
    const readStore = svc.service.container.resolve<ReadStore>(TOKENS.ReadStore);
    const audit = await auditCredits(log, readStore);
    expect(audit.mismatches).to.deep.equal([]);
    expect(audit.rows.find((row) => row.app_user_id === 'ann')).to.include({ key: 'coins' });
    const live = await liveDocuments(readStore);
    expect(await replayProjections(log, readStore, defaultProjections)).to.equal('switched');
    expect(await liveDocuments(readStore)).to.deep.equal(live);
  });

  it('data sent after the erasure is kept under a new key; the export shows old values erased and new ones clear', async () => {
    const updated = await svc.call('POST', '/users', { app_user_id: 'ann', metadata: { email: LATER_EMAIL } });
    expect(updated.status).to.equal(200);
    expect(updated.body.data.user.metadata).to.deep.equal({ email: LATER_EMAIL });
    const exported = (await svc.admin('GET', '/admin/users/ann/export')).body.data.export;
    expect(exported.user.metadata).to.deep.equal({ email: LATER_EMAIL });
    expect(exported.events[0].data.metadata).to.deep.equal({ erased: true });
    expect(exported.events[exported.events.length - 1].data.changes.metadata).to.deep.equal({ email: LATER_EMAIL });
    expect(filesHolding(svc.dataDir, EMAIL)).to.deep.equal([]);
    // A new erasure has something to do again, and erases the new value too.
    expect((await svc.admin('DELETE', '/admin/users/ann')).status).to.equal(204);
    expect((await userEvents(svc, 'ann')).filter((event) => event.type === 'UserErased')).to.have.length(2);
    expect((await getUser(svc, 'ann')).metadata).to.equal(null);
    await settled(svc);
    expect(filesHolding(svc.dataDir, LATER_EMAIL)).to.deep.equal([]);
  });

  it('updates racing a DELETE are erased with it or kept after it: nothing before an erasure stays readable', async () => {
    for (let round = 0; round < 3; round += 1) {
      const user = `racer-${round}`;
      await createUser(svc, user, { metadata: { email: `${user}-0@example.org` }, payment_customer_id: `cus_${user}_0` });
      const update = (index: number) =>
        svc.call('POST', '/users', { app_user_id: user, metadata: { email: `${user}-${index}@example.org` }, payment_customer_id: `cus_${user}_${index}` });
      // Updates already queued on the user's stream when the DELETE arrives, and more after it.
      const requests = Array.from({ length: 20 }, (_, index) => update(index + 1));
      await new Promise((resolve) => setTimeout(resolve, 5 * round));
      requests.push(svc.admin('DELETE', `/admin/users/${user}`), ...Array.from({ length: 10 }, (_, index) => update(index + 21)));
      for (const response of await Promise.all(requests)) expect(response.status).to.be.oneOf([200, 204]);
      const events = await userEvents(svc, user);
      const lastErasure = events.map((event) => event.type).lastIndexOf('UserErased');
      expect(lastErasure).to.be.greaterThan(0);
      // Before the last erasure, every personal value reads as erased (or was null); after it, sent values read clear.
      const before = JSON.stringify(events.slice(0, lastErasure));
      expect(before, `round ${round}`).not.to.contain('@example.org');
      expect(before, `round ${round}`).not.to.contain(`cus_${user}_`);
      const exported = JSON.stringify((await svc.admin('GET', `/admin/users/${user}/export`)).body.data.export.events.slice(0, lastErasure));
      expect(exported).not.to.contain('@example.org');
    }
  });

  it('updates racing DELETEs of an already erased user are never half-erased: what lands after the last erasure reads clear, whole', async () => {
    for (let round = 0; round < 5; round += 1) {
      const user = `erased-racer-${round}`;
      await createUser(svc, user, { metadata: { email: `${user}-0@example.org` } });
      expect((await svc.admin('DELETE', `/admin/users/${user}`)).status).to.equal(204);
      // Each DELETE finds the user erased (a no-op) or erases the updates that landed before it.
      const requests = Array.from({ length: 12 }, (_, index) =>
        index % 3 === 2
          ? svc.admin('DELETE', `/admin/users/${user}`)
          : svc.call('POST', '/users', { app_user_id: user, metadata: { email: `${user}-${index}@example.org` }, payment_customer_id: `cus_${user}_${index}` }),
      );
      for (const response of await Promise.all(requests)) expect(response.status).to.be.oneOf([200, 204]);
      const events = await userEvents(svc, user);
      const lastErasure = events.map((event) => event.type).lastIndexOf('UserErased');
      for (const event of events.slice(lastErasure + 1)) {
        expect(event.type, `round ${round}`).to.equal('UserProfileUpdated');
        const { metadata, payment_customer_id } = event.data.changes as Record<string, unknown>;
        expect(metadata, `round ${round}: ${JSON.stringify(event.data)}`)
          .to.have.property('email')
          .that.matches(/@example\.org$/);
        expect(payment_customer_id, `round ${round}: ${JSON.stringify(event.data)}`).to.match(new RegExp(`^cus_${user}_`));
      }
      const last = events[events.length - 1]!;
      const shown = await getUser(svc, user);
      if (last.type === 'UserErased') expect([shown.metadata, shown.payment_customer_id]).to.deep.equal([null, null]);
      else expect([shown.metadata, shown.payment_customer_id]).to.deep.equal([last.data.changes.metadata, last.data.changes.payment_customer_id]);
    }
  });

  it('a key made after the erasure for an update not appended yet (another process, which the stream lock does not hold back) survives a repeated DELETE', async () => {
    await createUser(svc, 'erased-then-keyed', { metadata: { email: 'erased-then-keyed-0@example.org' } });
    expect((await svc.admin('DELETE', '/admin/users/erased-then-keyed')).status).to.equal(204);
    // What another process's update does first: it makes the user's new key, then appends.
    const keys = svc.service.container.resolve<KeyStore>(TOKENS.KeyStore);
    const made = await keys.keyFor(userSubject('erased-then-keyed'));
    const count = (await userEvents(svc, 'erased-then-keyed')).length;
    expect((await svc.admin('DELETE', '/admin/users/erased-then-keyed')).status).to.equal(204);
    expect((await userEvents(svc, 'erased-then-keyed')).length).to.equal(count);
    expect((await keys.existingKey(userSubject('erased-then-keyed')))?.id).to.equal(made.id);
    const later = { email: 'erased-then-keyed-1@example.org' };
    expect((await svc.call('POST', '/users', { app_user_id: 'erased-then-keyed', metadata: later })).status).to.equal(200);
    const events = await userEvents(svc, 'erased-then-keyed');
    expect(events[events.length - 1]!.data.changes.metadata).to.deep.equal(later);
    expect((await getUser(svc, 'erased-then-keyed')).metadata).to.deep.equal(later);
  });
});

describe('API: a Stripe notification racing the erasure of its customer', () => {
  const RACING_CUSTOMER = 'cus_RacingErasure5150';

  it('is matched and kept before the customer key goes, or kept unmatched after: never readable and linked to the erased user', async () => {
    let svc: TestService | undefined;
    let racing: Promise<{ status: number; body: any }> | null = null;
    // The erasure's key store: right after the customer's key is destroyed, and before the
    // read models drop the user's link to the customer, a notification naming it arrives.
    const backend = (inner: Backend): Backend => {
      const destroy = async (subject: string) => {
        const destroyed = await inner.keyStore.destroy(subject);
        if (subject === customerSubject(RACING_CUSTOMER) && racing === null) {
          racing = stripeEvent(svc!, invoicePaid('in_racing', RACING_CUSTOMER));
          // Matched through the old link, it would be kept by now (the lock makes it wait instead).
          await Promise.race([racing, new Promise((resolve) => setTimeout(resolve, 1_000))]);
        }
        return destroyed;
      };
      return {
        ...inner,
        keyStore: new Proxy(inner.keyStore, { get: (target, property) => (property === 'destroy' ? destroy : Reflect.get(target, property)) }),
      };
    };
    svc = await startTestService({ backend, env: { STRIPE_WEBHOOK_SECRET: STRIPE_SECRET } });
    try {
      await createUser(svc, 'racing', { payment_customer_id: RACING_CUSTOMER });
      expect((await stripeEvent(svc, invoicePaid('in_before', RACING_CUSTOMER))).body.data.status).to.equal('applied');
      expect((await svc.admin('DELETE', '/admin/users/racing')).status).to.equal(204);
      expect(racing).to.not.equal(null);
      const answer = await racing!;
      expect(answer.status).to.equal(200);
      expect(answer.body.data.status).to.equal('unmatched');
      const received = (await svc.admin('GET', '/admin/events?type=NotificationReceived&limit=1000')).body.data.events as any[];
      expect(received).to.have.length(2);
      // Linked to the erased user: its customer id reads as erased (kept unmatched after the erasure, it is the customer's own).
      expect(received.map((event) => event.data.app_user_id)).to.deep.equal(['racing', null]);
      for (const event of received.filter((candidate) => candidate.data.app_user_id === 'racing')) {
        expect(event.data.notification.match.customer_id, event.id).to.deep.equal({ erased: true });
      }
    } finally {
      await svc.stop();
    }
  });
});

describe('API: an erasure that dies between destroying keys, retried', () => {
  it("destroys every payment customer's key before the user's: the retry, which finds the customer ids only while the user's key exists, finishes", async () => {
    let dying = true;
    // The first erasure dies right after the user's key is destroyed (as a killed process would).
    const backend = (inner: Backend): Backend => {
      const destroy = async (subject: string) => {
        const destroyed = await inner.keyStore.destroy(subject);
        if (subject === userSubject('dying') && dying) {
          dying = false;
          throw new Error('the process died here');
        }
        return destroyed;
      };
      return {
        ...inner,
        keyStore: new Proxy(inner.keyStore, { get: (target, property) => (property === 'destroy' ? destroy : Reflect.get(target, property)) }),
      };
    };
    const svc = await startTestService({ backend, env: { STRIPE_WEBHOOK_SECRET: STRIPE_SECRET } });
    try {
      const customers = ['cus_DyingOne', 'cus_DyingTwo', 'cus_DyingThree'];
      for (const [index, customer] of customers.entries()) {
        await createUser(svc, 'dying', { payment_customer_id: customer });
        expect((await stripeEvent(svc, invoicePaid(`in_dying_${index}`, customer))).body.data.status).to.equal('applied');
      }
      expect((await svc.admin('DELETE', '/admin/users/dying')).status).to.be.greaterThanOrEqual(500);
      expect((await svc.admin('DELETE', '/admin/users/dying')).status).to.equal(204);
      const received = JSON.stringify((await svc.admin('GET', '/admin/events?type=NotificationReceived&limit=1000')).body.data.events);
      const exported = JSON.stringify((await svc.admin('GET', '/admin/users/dying/export')).body.data);
      for (const customer of customers) {
        // The subscription's id (`sub_<customer>` in these payloads) is not personal data; the customer's id is.
        expect(received.replaceAll(`sub_${customer}`, ''), customer).not.to.contain(customer);
        expect(exported.replaceAll(`sub_${customer}`, ''), customer).not.to.contain(customer);
      }
    } finally {
      await svc.stop();
    }
  });
});

describe('API: an export and an erasure of its user at the same time (GET /admin/users/{id}/export, DELETE /admin/users/{id})', function () {
  this.timeout(60_000);
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(async () => svc.stop());

  /** A user whose stream holds its e-mail in 31 events: pages of 5 make the export take many turns. */
  async function userWithHistory(appUserId: string) {
    await createUser(svc, appUserId, { metadata: { email: EMAIL } });
    for (let index = 0; index < 30; index += 1) {
      expect((await svc.call('POST', '/users', { app_user_id: appUserId, metadata: { email: EMAIL, visit: index } })).status).to.equal(200);
    }
    const exports = svc.service.container.resolve(UserExport);
    exports.pageSize = 5;
    return exports;
  }

  it('an erasure that overtakes an export under way cuts it short: no document shows the user both before and after', async () => {
    const exports = await userWithHistory('overtaken');
    const pieces = (await exports.open('overtaken', 'overtaken-export'))![Symbol.asyncIterator]();
    let text = '';
    // The user (clear) and the first page of its events are written before the erasure.
    for (let index = 0; index < 8; index += 1) text += (await pieces.next()).value;
    expect(text).to.contain(EMAIL);
    expect((await svc.admin('DELETE', '/admin/users/overtaken')).status).to.equal(204);
    let cut: unknown = null;
    try {
      for (let next = await pieces.next(); !next.done; next = await pieces.next()) text += next.value;
    } catch (error) {
      cut = error;
    }
    expect(cut).to.be.instanceOf(ExportOvertakenByErasure);
    expect(text).to.not.contain('"erased":true');
  });

  it('an export asked for while its user is being erased waits for the erasure, and shows the user erased throughout', async () => {
    const exports = await userWithHistory('waited');
    // The erasure is under way (at its first wait) when the export is asked for.
    const context = { correlation_id: 'waited-erasure', causation_id: 'waited-erasure', actor: 'secret:test' };
    const erasure = svc.service.container.resolve(UserErasure).erase('waited', context);
    let text = '';
    for await (const piece of (await exports.open('waited', 'waited-export'))!) text += piece;
    expect(await erasure).to.deep.equal({ erased: true });
    const document = JSON.parse(text).data.export;
    expect(document.user.metadata).to.equal(null);
    expect(text).to.not.contain(EMAIL);
    expect(
      document.events.filter((event: { data: { metadata?: unknown } }) => 'metadata' in event.data).map((event: any) => event.data.metadata),
    ).to.deep.equal(Array(1).fill({ erased: true }));
  });

  it('exports and an erasure fired together over HTTP: each export is whole and clear, whole and erased, or cut short', async () => {
    for (let round = 0; round < 4; round += 1) {
      const user = `raced-${round}`;
      await userWithHistory(user);
      const exported = Array.from({ length: 6 }, () =>
        fetch(`${svc.url}/admin/users/${user}/export`, { headers: { 'x-api-key': SECRET_KEY } }).then(
          (response) => response.text().catch(() => 'cut'),
          () => 'cut',
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, round * 3));
      expect((await svc.admin('DELETE', `/admin/users/${user}`)).status).to.equal(204);
      for (const text of await Promise.all(exported)) {
        let document: any = null;
        try {
          document = JSON.parse(text).data.export;
        } catch {
          continue; // cut short
        }
        const erased = text.includes('"erased":true');
        expect(document.user.metadata === null, `round ${round}: the user ${erased ? 'erased' : 'clear'} in the whole document`).to.equal(erased);
        expect(text.includes(EMAIL), `round ${round}`).to.equal(!erased);
      }
    }
  });
});

describe("API: a receiver's answer to a message with personal fields, and the erasure (GET /admin/webhooks/{id}/deliveries)", function () {
  this.timeout(60_000);
  const ECHOED = 'echoed.erasable@example.org';
  let svc: TestService;
  let receiver: Receiver;

  before(async () => {
    receiver = await new Receiver().start();
    // The receiver refuses every message and echoes it back, personal fields included.
    receiver.respond = (request) => ({ status: 422, body: `rejected: ${JSON.stringify(request.json?.data?.metadata)}` });
    svc = await startTestService({ env: { WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' } });
    expect((await svc.admin('PUT', '/admin/webhooks/echo', { url: receiver.url, events: ['user.created'] })).status).to.equal(201);
  });
  after(async () => {
    await svc.stop();
    await receiver.stop();
  });

  it("is kept sealed under the user's key: listed clear before the erasure, null after, never in a file of the data directory", async () => {
    await createUser(svc, 'echoed', { metadata: { email: ECHOED } });
    const lastError = async () =>
      eventually(async () => {
        const [delivery] = (await svc.admin('GET', '/admin/webhooks/echo/deliveries')).body.data.deliveries;
        expect(delivery?.attempts).to.be.at.least(1);
        return delivery.last_error as string | null;
      });
    expect(await lastError()).to.contain(ECHOED);
    await settled(svc);
    expect(filesHolding(svc.dataDir, ECHOED)).to.deep.equal([]);

    expect((await svc.admin('DELETE', '/admin/users/echoed')).status).to.equal(204);
    expect(await lastError()).to.equal(null);
  });
});

describe('API: erasing a user whose events were written before encryption (a log of 0.1.0 not migrated)', () => {
  it('answers 204 and tells the operator that the clear values stay in the log, naming npm run migrate-events', async () => {
    const dataDir = tempDataDir();
    const db = openSqlite(dataDir);
    const raw = new SqliteEventStore(db);
    await raw.append('user-legacy', [newRegistered('legacy', { metadata: { email: 'legacy@example.org' } })], 'no_stream');
    await raw.close();
    db.close();
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
    const svc = await startTestService({ dataDir, logger });
    try {
      await createUser(svc, 'sealed', { metadata: { email: 'sealed@example.org' } });
      expect((await svc.admin('DELETE', '/admin/users/sealed')).status).to.equal(204);
      expect(lines.filter((line) => line.includes('in the clear'))).to.deep.equal([]);
      expect((await svc.admin('DELETE', '/admin/users/legacy')).status).to.equal(204);
      const warnings = lines.map((line) => JSON.parse(line)).filter((line) => String(line.msg).includes('in the clear'));
      expect(warnings).to.have.length(1);
      expect(warnings[0]).to.include({ app_user_id: 'legacy', events: 1 });
      expect(warnings[0].msg).to.contain('npm run migrate-events');
    } finally {
      await svc.stop();
    }
  });
});
