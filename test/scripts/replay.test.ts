import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { defaultProjections } from '../support/projections.js';
import { EventLog } from '../../src/application/event-log.js';
import { replayProjections } from '../../src/application/projections/projection-replay.js';
import type { EventStore } from '../../src/ports/event-store.js';
import type { ReadConsistency } from '../../src/ports/read-consistency.js';
import type { ReadStore } from '../../src/ports/read-store.js';
import { TOKENS } from '../../src/ports/tokens.js';
import { createUser, days, eventually, getUser, never, putProgram, putPromo, putReward } from '../support/fixtures.js';
import { ManualClock, SECRET_KEY, startTestService, type TestService, tempDataDir } from '../support/test-service.js';

async function liveDocuments(readStore: ReadStore) {
  const all: Record<string, unknown[]> = {};
  for (const projection of defaultProjections) {
    for (const collection of projection.collections) all[collection.name] = await readStore.find(collection.name);
  }
  return all;
}

/** Waits until the reactions and projections have settled (no new events for a moment). */
async function settled(svc: TestService) {
  const store = svc.service.container.resolve<EventStore>(TOKENS.EventStore);
  const consistency = svc.service.container.resolve<ReadConsistency>(TOKENS.ReadConsistency);
  for (;;) {
    const head = (await store.headPosition())!;
    await consistency.waitFor(head, 5_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    if ((await store.headPosition()) === head) return;
  }
}

async function someTraffic(svc: TestService) {
  await putReward(svc, 'coins', { kind: 'credit', name: 'Coins', credits: 5 });
  await putReward(svc, 'pass', { kind: 'basic', name: 'Pass' });
  await putProgram(svc, 'replayed', {
    rewards: {
      sender: [{ reward_key: 'coins', activation: { variant: 'claim', amount: 1, limit: 0 }, deactivation: never }],
      receiver: [{ reward_key: 'pass', activation: { variant: 'claim' }, deactivation: days(3) }],
    },
  });
  await putPromo(svc, 'REPLAY', { limit: 2, rewards: [{ reward_key: 'coins', activation: { variant: 'claim' }, deactivation: days(1) }] });
  const referrer = await createUser(svc, 'r-0');
  for (let index = 1; index < 12; index += 1) {
    await createUser(svc, `r-${index}`, { is_premium: index % 3 === 0 });
    await svc.call('POST', `/users/r-${index}/claim-code`, { code: index % 4 === 0 ? 'REPLAY' : referrer.referral_code });
  }
  await svc.call('POST', '/users/r-0/rewards/withdraw-credits', { key: 'coins', amount: 7, operation_id: 'w-1' });
  svc.clock.advance(2 * 86_400_000);
  await svc.service.runMaintenance();
  await eventually(async () => expect((await getUser(svc, 'r-0')).stats.claims).to.be.greaterThan(5));
}

describe('npm run replay', function () {
  this.timeout(120_000);

  it('rebuilds every read model equal to the live one, document for document, while the service runs', async () => {
    const svc = await startTestService();
    try {
      await someTraffic(svc);
      await settled(svc);
      const readStore = svc.service.container.resolve<ReadStore>(TOKENS.ReadStore);
      const before = await liveDocuments(readStore);
      const replay = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/replay.ts'], {
        env: { ...process.env, DATA_DIR: svc.dataDir, NODE_ENV: 'test' },
        encoding: 'utf8',
      });
      expect(replay.status, replay.stderr).to.equal(0);
      for (const projection of defaultProjections) expect(replay.stdout).to.contain(`${projection.name}: rebuilt and switched in`);
      expect(await liveDocuments(readStore)).to.deep.equal(before);

      // The running service notices the switch and keeps projecting new events.
      await createUser(svc, 'after-replay');
      expect((await getUser(svc, 'after-replay')).app_user_id).to.equal('after-replay');
    } finally {
      await svc.stop();
    }
  });

  /** A running service with some settled traffic, for a replay run in the test's own process. */
  async function withTraffic(test: (stores: { readStore: ReadStore; log: EventLog }) => Promise<void>): Promise<void> {
    const svc = await startTestService();
    try {
      await someTraffic(svc);
      await settled(svc);
      await test({ readStore: svc.service.container.resolve<ReadStore>(TOKENS.ReadStore), log: svc.service.container.resolve(EventLog) });
    } finally {
      await svc.stop();
    }
  }

  it('resumes an interrupted replay of every read model and still ends equal', () =>
    withTraffic(async ({ readStore, log }) => {
      const before = await liveDocuments(readStore);
      expect(await replayProjections(log, readStore, defaultProjections, { pageSize: 10, maxPages: 3 })).to.equal('interrupted');
      expect(await liveDocuments(readStore)).to.deep.equal(before);
      const interruptedAt = (await readStore.checkpoint('replay:users')).position;
      expect(interruptedAt).to.not.equal(null);
      const resumed: { projection: string; after: bigint }[] = [];
      expect(await replayProjections(log, readStore, defaultProjections, { pageSize: 10, onResume: (list) => resumed.push(...list) })).to.equal('switched');
      // Every read model says it continues, and from where (the script prints it).
      expect(resumed.map(({ projection }) => projection)).to.deep.equal(defaultProjections.map((projection) => projection.name));
      expect(resumed.find(({ projection }) => projection === 'users')?.after).to.equal(interruptedAt);
      expect(await liveDocuments(readStore)).to.deep.equal(before);
      for (const projection of defaultProjections) expect((await readStore.checkpoint(`replay:${projection.name}`)).position).to.equal(null);
    }));

  it('resumes one interrupted read model inside a replay of all of them: it skips what it already folded, the others start fresh, all end equal', () =>
    withTraffic(async ({ readStore, log }) => {
      const before = await liveDocuments(readStore);
      // claim_stats counts (a claim folded twice counts twice); the users read model would not show
      // a second fold, since its documents take their values from the events rather than add them.
      const counting = defaultProjections.filter((projection) => projection.name === 'claim_stats');
      const logged = await log.readAll(null, 1_000);
      // Interrupted exactly at a counted claim, whose document later claims touch again.
      const claims = logged.flatMap((event) => (event.type === 'CodeClaimed' && event.data.type !== 'referral' ? [event] : []));
      const claim = claims[0]!;
      const counted = claims.filter((event) => event.data.owner_id === claim.data.owner_id);
      expect(counted.length).to.be.greaterThan(1);
      const pages = logged.findIndex((event) => event.id === claim.id) + 1;
      expect(await replayProjections(log, readStore, counting, { pageSize: 1, maxPages: pages })).to.equal('interrupted');
      expect((await readStore.checkpoint('replay:claim_stats')).position).to.equal(claim.position);
      const resumed: { projection: string; after: bigint }[] = [];
      expect(await replayProjections(log, readStore, defaultProjections, { pageSize: 10, onResume: (list) => resumed.push(...list) })).to.equal('switched');
      expect(resumed).to.deep.equal([{ projection: 'claim_stats', after: claim.position }]);
      expect(await liveDocuments(readStore)).to.deep.equal(before);
    }));

  it('a resumed rebuild deletes a document its interrupted run wrote (a claim slot taken before the interruption, released by its claim after)', () =>
    withTraffic(async ({ readStore, log }) => {
      const before = await liveDocuments(readStore);
      const logged = await log.readAll(null, 1_000);
      const pages = logged.findIndex((event) => event.type === 'ClaimSlotTaken') + 1;
      expect(await replayProjections(log, readStore, defaultProjections, { pageSize: 1, maxPages: pages })).to.equal('interrupted');
      expect(await replayProjections(log, readStore, defaultProjections, { pageSize: 10 })).to.equal('switched');
      expect(await liveDocuments(readStore)).to.deep.equal(before);
    }));

  it('refuses a --projection name it does not know (exit 2, a usage error), naming the ones it knows', () => {
    const replay = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/replay.ts', '--projection', 'user'], {
      env: { ...process.env, DATA_DIR: path.join(process.cwd(), 'no-such-data-dir-for-replay'), NODE_ENV: 'test' },
      encoding: 'utf8',
    });
    expect(replay.status, replay.stdout + replay.stderr).to.equal(2);
    expect(replay.stderr).to.match(/unknown projection user; known: .*\busers\b/);
  });

  it('--projection users rebuilds the users read model alone: the others are neither rebuilt nor switched', async () => {
    const svc = await startTestService();
    await putPromo(svc, 'UNTOUCHED', { limit: 2 });
    await createUser(svc, 'rebuilt');
    await svc.stop();
    const db = new Database(path.join(svc.dataDir, 'referrals.db'));
    const docOf = (table: string, id: string) => (db.prepare(`SELECT doc FROM ${table} WHERE id = ?`).get(id) as { doc: string }).doc;
    const userId = (db.prepare("SELECT id FROM rm_users WHERE json_extract(doc, '$.app_user_id') = 'rebuilt'").get() as { id: string }).id;
    const user = docOf('rm_users', userId);
    // Both read models tampered with: a rebuild of either would undo it.
    db.prepare('UPDATE rm_users SET doc = ? WHERE id = ?').run(JSON.stringify({ ...JSON.parse(user), tampered: true }), userId);
    const code = JSON.stringify({ ...JSON.parse(docOf('rm_codes', 'UNTOUCHED')), taken: 99 });
    db.prepare('UPDATE rm_codes SET doc = ? WHERE id = ?').run(code, 'UNTOUCHED');
    db.close();

    const replay = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/replay.ts', '--projection', 'users'], {
      env: { ...process.env, DATA_DIR: svc.dataDir, NODE_ENV: 'test' },
      encoding: 'utf8',
    });
    expect(replay.status, replay.stderr).to.equal(0);
    expect(replay.stdout.match(/^\S+: rebuilt and switched in$/gm)).to.deep.equal(['users: rebuilt and switched in']);
    const after = new Database(path.join(svc.dataDir, 'referrals.db'), { readonly: true });
    try {
      expect((after.prepare('SELECT doc FROM rm_users WHERE id = ?').get(userId) as { doc: string }).doc).to.equal(user);
      expect((after.prepare('SELECT doc FROM rm_codes WHERE id = ?').get('UNTOUCHED') as { doc: string }).doc).to.equal(code);
    } finally {
      after.close();
    }
  });

  it('flushing after every page still ends equal, and reads back from the store no document the last flush wrote', () =>
    withTraffic(async ({ readStore, log }) => {
      const before = await liveDocuments(readStore);
      let lastFlush = new Set<string>();
      const readBack: string[] = [];
      let reads = 0;
      const counting = Object.create(readStore) as ReadStore;
      counting.get = async <T extends Record<string, unknown>>(collection: string, id: string) => {
        reads += 1;
        if (lastFlush.has(`${collection}/${id}`)) readBack.push(`${collection}/${id}`);
        return readStore.get<T>(collection, id);
      };
      counting.commitBatches = async (batches) => {
        lastFlush = new Set(batches.flatMap((batch) => batch.changes.map((change) => `${change.collection}/${change.id}`)));
        return readStore.commitBatches(batches);
      };
      expect(await replayProjections(log, counting, defaultProjections, { pageSize: 5, flushDocuments: 1 })).to.equal('switched');
      expect(await liveDocuments(readStore)).to.deep.equal(before);
      // Documents touched again two pages later or more are read from the store.
      expect(reads).to.be.greaterThan(0);
      expect(readBack, 'documents the last flush wrote, read back from the store').to.deep.equal([]);
    }));

  it('a rebuild interrupted under one version of a projection starts over under the next version instead of continuing it', () =>
    withTraffic(async ({ readStore, log }) => {
      const users = defaultProjections.find((projection) => projection.name === 'users')!;
      expect(await replayProjections(log, readStore, [users], { pageSize: 10, maxPages: 3 })).to.equal('interrupted');
      expect((await readStore.checkpoint('replay:users')).version).to.equal(users.version);
      const next = { ...users, version: users.version + 1 };
      const positions: (bigint | null)[] = [];
      let resumed = false;
      expect(
        await replayProjections(log, readStore, [next], {
          pageSize: 10,
          onProgress: ({ position }) => positions.push(position),
          onResume: () => (resumed = true),
        }),
      ).to.equal('switched');
      expect(resumed, 'a rebuild started over does not say it resumes').to.equal(false);
      // From the first page of the log, not from where the other version stopped.
      expect(positions[0]! <= 10n).to.equal(true);
      expect((await readStore.checkpoint('users')).version).to.equal(users.version + 1);
    }));

  it('the service tells which read models need a replay after a projection version change', async () => {
    const T0 = new Date('2026-03-01T00:00:00.000Z');
    const first = await startTestService({ clock: new ManualClock(T0) });
    await createUser(first, 'versioned');
    await putReward(first, 'coins', { kind: 'credit', name: 'Coins', credits: 5 });
    expect((await first.admin('POST', '/users/versioned/rewards/grant', { key: 'coins', deactivation: days(1) })).status).to.equal(201);
    await first.stop();
    const db = new Database(path.join(first.dataDir, 'referrals.db'));
    db.prepare("UPDATE checkpoints SET version = 0 WHERE projector = 'users'").run();
    db.close();
    // Two days on, the grant's expiry is due: the sweep (every second here) would record it.
    const svc = await startTestService({
      dataDir: first.dataDir,
      clock: new ManualClock(new Date(T0.getTime() + 2 * 86_400_000)),
      env: { SWEEP_INTERVAL_S: '1', STRIPE_WEBHOOK_SECRET: 'whsec_dGVzdHNlY3JldA==' },
    });
    try {
      const readiness = await svc.call('GET', '/readyz');
      expect(readiness.status).to.equal(503);
      expect(readiness.body.data.ready).to.equal(false);
      const ready = readiness.body.data.projections as { name: string; needs_replay: boolean }[];
      expect(ready.filter((projection) => projection.needs_replay).map((projection) => projection.name)).to.deep.equal(['users']);
      // This version cannot read the old read model: every request is refused before anything is done.
      const head = (await svc.admin('GET', '/readyz')).body.data.head;
      for (const [method, path, body] of [
        ['GET', '/users/versioned', undefined],
        ['POST', '/users', { app_user_id: 'newcomer' }],
        ['POST', '/users/versioned/rewards/withdraw-credits', { key: 'coins', amount: 1, operation_id: 'w-1' }],
        ['GET', '/admin/users/versioned/credit-ledger', undefined],
        ['POST', '/webhooks/stripe', {}],
      ] as const) {
        const refused = await svc.call(method, path, body, method === 'GET' && path.startsWith('/admin') ? { 'x-api-key': SECRET_KEY } : {});
        expect(refused.status, `${method} ${path}`).to.equal(503);
        expect(refused.body.errors[0]).to.include({ code: 'SERVICE_UNAVAILABLE', source: null });
        expect(refused.body.errors[0].message).to.contain('need a replay (users)').and.contain('npm run replay');
        expect(refused.headers.get('retry-after')).to.equal('5');
      }
      // Paths and methods the service does not have answer as ever.
      expect((await svc.call('GET', '/webhooks/nope')).status).to.equal(404);
      // Nor do process managers, deliveries and jobs run meanwhile: the due expiry is not recorded.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect((await svc.admin('GET', '/readyz')).body.data.head, 'nothing was written').to.equal(head);
      // A comma-separated list rebuilds each read model named.
      const replay = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/replay.ts', '--projection', 'users,codes'], {
        env: { ...process.env, DATA_DIR: svc.dataDir, NODE_ENV: 'test' },
        encoding: 'utf8',
      });
      expect(replay.status, replay.stderr).to.equal(0);
      expect(replay.stdout)
        .to.match(/^users: rebuilt and switched in$/m)
        .and.match(/^codes: rebuilt and switched in$/m);
      await eventually(async () => {
        const after = (await svc.call('GET', '/readyz')).body.data.projections as { needs_replay: boolean }[];
        expect(after.every((projection) => !projection.needs_replay)).to.equal(true);
      });
      await eventually(async () => expect((await svc.call('GET', '/users/versioned')).status).to.equal(200));
      // Then the sweep records the expiry.
      await eventually(async () =>
        expect((await svc.admin('GET', '/admin/events?stream=user-versioned&type=RewardExpired')).body.data.events).to.have.length(1),
      );
      expect((await svc.call('GET', '/readyz')).status).to.equal(200);
    } finally {
      await svc.stop();
    }
  });
});

describe('npm run replay: SIGKILL', function () {
  this.timeout(180_000);

  const env = (dataDir: string) => ({ ...process.env, DATA_DIR: dataDir, NODE_ENV: 'test', LOG_LEVEL: 'silent' });
  const replay = (dataDir: string) => spawnSync(process.execPath, ['--import', 'tsx', 'scripts/replay.ts'], { env: env(dataDir), encoding: 'utf8' });

  /** Every read model's documents (id and body), table by table, as the file holds them. */
  function readModels(dataDir: string): Record<string, [string, string][]> {
    const db = new Database(path.join(dataDir, 'referrals.db'), { readonly: true });
    try {
      const tables = (
        db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rm\\_%' ESCAPE '\\' ORDER BY name").all() as { name: string }[]
      ).map(({ name }) => name);
      return Object.fromEntries(tables.map((table) => [table, db.prepare(`SELECT id, doc FROM ${table} ORDER BY id`).raw().all() as [string, string][]]));
    } finally {
      db.close();
    }
  }

  function replayCheckpoints(dataDir: string): number {
    const db = new Database(path.join(dataDir, 'referrals.db'), { readonly: true });
    try {
      return (db.prepare("SELECT COUNT(*) AS n FROM checkpoints WHERE projector LIKE 'replay:%' AND position IS NOT NULL").get() as { n: number }).n;
    } finally {
      db.close();
    }
  }

  it('killed after a flush, a second run resumes and ends with the same read models as a replay never interrupted', async () => {
    const killed = tempDataDir();
    const generate = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/generate-events.ts', '--events', '40000', '--seed', '11'], {
      env: env(killed),
      encoding: 'utf8',
    });
    expect(generate.status, generate.stderr).to.equal(0);
    const whole = tempDataDir();
    fs.cpSync(killed, whole, { recursive: true });
    const uninterrupted = replay(whole);
    expect(uninterrupted.status, uninterrupted.stderr).to.equal(0);

    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/replay.ts'], { env: env(killed), stdio: 'ignore' });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // Killed as soon as a flush has committed some rebuilt documents and their checkpoints.
    await eventually(async () => expect(replayCheckpoints(killed)).to.be.greaterThan(0), 60_000);
    child.kill('SIGKILL');
    await exited;
    expect(child.signalCode, 'the replay ended before the kill: the log is too short for this test').to.equal('SIGKILL');

    const resumed = replay(killed);
    expect(resumed.status, resumed.stderr).to.equal(0);
    expect(resumed.stdout).to.match(/^users: resuming an interrupted rebuild after position \d+$/m);
    expect(resumed.stdout).to.contain('users: rebuilt and switched in');
    expect(replayCheckpoints(killed)).to.equal(0);
    expect(readModels(killed)).to.deep.equal(readModels(whole));
  });
});
