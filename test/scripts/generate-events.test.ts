import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { openSqlite, type SqliteConnection } from '../../src/adapters/sqlite/sqlite-database.js';
import { SqliteEventStore } from '../../src/adapters/sqlite/sqlite-event-store.js';
import { RandomIds } from '../../src/adapters/system/random-ids.js';
import { openEmbeddedBackend } from '../../src/backends/embedded.js';
import { EventLog, toLogged } from '../../src/application/event-log.js';
import type { NewDomainEvent } from '../../src/domain/decider.js';
import { streams } from '../../src/domain/events/index.js';
import { type ExpectedRevision, type NewEvent, type RecordedEvent, WrongExpectedRevisionError } from '../../src/ports/event-store.js';
import { BulkAppender, besideThisFile } from '../../scripts/generate/bulk-appender.js';
import { eventually, putProgram } from '../support/fixtures.js';
import { startTestService, tempDataDir } from '../support/test-service.js';

const run = promisify(execFile);

function script(name: string, dataDir: string, args: string[] = []) {
  return run(process.execPath, ['--import', 'tsx', `scripts/${name}.ts`, ...args], {
    env: { ...process.env, DATA_DIR: dataDir, NODE_ENV: 'test', LOG_LEVEL: 'silent' },
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** The log as the service reads it (personal fields opened), or `raw` as stored. */
async function readLog(dataDir: string, { raw = false } = {}): Promise<RecordedEvent[]> {
  if (!raw) {
    const backend = openEmbeddedBackend(dataDir);
    try {
      return await backend.eventStore.readAll({ after: null, limit: 1_000_000 });
    } finally {
      await backend.close();
    }
  }
  const db = openSqlite(dataDir);
  try {
    return await new SqliteEventStore(db).readAll({ after: null, limit: 1_000_000 });
  } finally {
    db.close();
  }
}

function checkpoints(dataDir: string): Map<string, number> {
  const db = new Database(path.join(dataDir, 'referrals.db'), { readonly: true });
  try {
    const rows = db.prepare('SELECT projector, position FROM checkpoints').all() as { projector: string; position: number }[];
    return new Map(rows.map((row) => [row.projector, row.position]));
  } finally {
    db.close();
  }
}

describe("generate-events' writer thread", () => {
  it('is the module beside the script, compiled or not (the container image runs dist/scripts/generate-events.js)', () => {
    const sources = besideThisFile('event-insert-worker', 'file:///app/scripts/generate/bulk-appender.ts');
    const compiled = besideThisFile('event-insert-worker', 'file:///app/dist/scripts/generate/bulk-appender.js');
    expect(sources.href).to.equal('file:///app/scripts/generate/event-insert-worker.ts');
    expect(compiled.href).to.equal('file:///app/dist/scripts/generate/event-insert-worker.js');
    expect(fs.existsSync(fileURLToPath(besideThisFile('event-insert-worker', pathToFileURL(path.resolve('scripts/generate/bulk-appender.ts')).href)))).to.equal(
      true,
    );
  });
});

describe('npm run generate-events (child process)', function () {
  this.timeout(300_000);

  const EVENTS = 5_000;
  let dataDir: string;
  let log: RecordedEvent[];

  before(async () => {
    dataDir = tempDataDir();
    const { stdout } = await script('generate-events', dataDir, ['--events', String(EVENTS), '--seed', '7']);
    expect(stdout).to.match(/Generated \d+ events/);
    log = await readLog(dataDir);
  });

  it('writes the requested number of events (the last action may add a few)', () => {
    expect(log.length).to.be.within(EVENTS, EVENTS + 20);
  });

  it('writes valid events of every part of the history, with gapless stream revisions', () => {
    for (const event of log) expect(() => toLogged(event), `${event.type} ${event.id}`).to.not.throw();
    const types = new Set(log.map((event) => event.type));
    for (const type of [
      'RewardCreated',
      'ProgramCreated',
      'PromoCodeCreated',
      'AffiliateCreated',
      'CodeReserved',
      'UserRegistered',
      'ReferralProgramAssigned',
      'ClaimSlotTaken',
      'CodeClaimed',
      'RewardGranted',
      'ReferralClaimCounted',
      'UserConverted',
      'ReferralConversionCounted',
      'CreditsWithdrawn',
      'RewardExpired',
      'UserProfileUpdated',
    ]) {
      expect(types, type).to.include(type);
    }
    const next = new Map<string, number>();
    for (const event of log) {
      expect(event.revision, `${event.stream}`).to.equal(next.get(event.stream) ?? 0);
      next.set(event.stream, event.revision + 1);
    }
    // Requests and process steps are told apart in the metadata.
    const actors = new Set(log.map((event) => String(event.metadata.actor).split(':')[0]));
    expect([...actors].sort()).to.deep.equal(['client', 'process', 'secret']);
  });

  it('the service projects it without failure and finds no referral left to count; the audit passes', async () => {
    const svc = await startTestService({ dataDir });
    try {
      const ready = await eventually(async () => {
        const response = await svc.call('GET', '/readyz');
        expect(response.status, JSON.stringify(response.body)).to.equal(200);
        return response.body.data;
      }, 120_000);
      expect(ready.ready).to.equal(true);
      for (const projection of ready.projections) {
        expect(projection.failure, projection.name).to.equal(null);
        expect(projection.needs_replay, projection.name).to.equal(false);
      }
      const head = BigInt(log[log.length - 1]!.position);
      await eventually(async () => {
        const users = await svc.call('GET', `/users/${encodeURIComponent(String(log.find((event) => event.type === 'UserRegistered')!.data.app_user_id))}`);
        expect(users.status).to.equal(200);
        expect(checkpoints(dataDir).get('reaction:referrals+pools')).to.equal(Number(head));
      }, 120_000);
    } finally {
      await svc.stop();
    }
    // The referral reaction had nothing to add: the generator wrote the referrers' side.
    expect((await readLog(dataDir)).length).to.equal(log.length);

    const audit = await script('audit-credits', dataDir);
    expect(audit.stdout).to.contain('No mismatch');
  });

  it('a second run adds to the same store, reusing its configuration', async () => {
    await script('generate-events', dataDir, ['--events', '500']);
    const after = await readLog(dataDir);
    expect(after.length).to.be.at.least(log.length + 500);
    expect(after.filter((event) => event.type === 'ProgramCreated')).to.have.length(1);
    const prefixes = new Set(
      after.filter((event) => event.type === 'UserRegistered').map((event) => String(event.data.app_user_id).split('-').slice(0, 2).join('-')),
    );
    expect(prefixes.size).to.equal(2);
  });

  it('refuses a store with another referral program', async () => {
    const svc = await startTestService();
    await putProgram(svc, 'someone-elses', { distribution_percentage: 10 });
    await svc.stop();
    const failure = await script('generate-events', svc.dataDir, ['--events', '100']).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).to.equal(2);
    expect(failure?.stderr).to.contain('someone-elses');
  });
});

describe('npm run generate-events: Ctrl-C', function () {
  this.timeout(60_000);

  it('stops within a moment of SIGINT, keeps what it wrote and exits 130', async () => {
    const dataDir = tempDataDir();
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/generate-events.ts', '--events', '5000000', '--seed', '3'], {
      env: { ...process.env, DATA_DIR: dataDir, NODE_ENV: 'test', LOG_LEVEL: 'silent' },
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // Once it is writing (the database holds events), interrupt it.
    await eventually(async () => expect(fs.existsSync(path.join(dataDir, 'referrals.db')) && (await readLog(dataDir)).length > 10_000).to.equal(true), 30_000);
    child.kill('SIGINT');
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const code = await exited;
    clearTimeout(killer);
    expect(code, stdout).to.equal(130);
    expect(stdout).to.contain('interrupted (Ctrl-C)');
    const written = Number(/Generated (\d+) events/.exec(stdout)![1]);
    expect(written).to.be.below(5_000_000);
    // Committed: the log holds every event it counted (and the catalog it set up).
    expect((await readLog(dataDir)).length).to.be.at.least(written);
  });
});

describe('npm run generate-events: options', () => {
  it('--help prints the usage with examples and exits 0', async () => {
    const { stdout } = await script('generate-events', tempDataDir(), ['--help']);
    expect(stdout).to.contain('Usage: npm run generate-events').and.to.contain('Examples:');
  });

  for (const args of [['--events', '10', '--bogus'], ['--events', 'ten'], [], ['--events', '10', 'extra']]) {
    it(`exits 2 on ${args.join(' ') || 'no options'}, writing nothing`, async () => {
      const dataDir = tempDataDir();
      const failure = await script('generate-events', dataDir, args).then(
        () => null,
        (error: { code: number; stderr: string }) => error,
      );
      expect(failure?.code).to.equal(2);
      expect(failure?.stderr).to.contain('Usage: npm run generate-events');
      expect(fs.existsSync(path.join(dataDir, 'referrals.db'))).to.equal(false);
    });
  }

  for (const option of ['--events', '--users', '--days', '--seed']) {
    it(`exits 2 on ${option} 0 (must be a positive integer), writing nothing`, async () => {
      const dataDir = tempDataDir();
      const args = option === '--events' ? ['--events', '0'] : ['--events', '10', option, '0'];
      const failure = await script('generate-events', dataDir, args).then(
        () => null,
        (error: { code: number; stderr: string }) => error,
      );
      expect(failure?.code).to.equal(2);
      expect(failure?.stderr).to.contain(`${option} must be a positive integer`);
      expect(fs.existsSync(path.join(dataDir, 'referrals.db'))).to.equal(false);
    });
  }

  it('--days sets the simulated period: the history begins that many days before now', async function () {
    this.timeout(120_000);
    const dataDir = tempDataDir();
    const started = Date.now();
    await script('generate-events', dataDir, ['--events', '200', '--days', '3', '--seed', '5']);
    const registered = (await readLog(dataDir))
      .filter((event) => event.type === 'UserRegistered')
      .map((event) => Date.parse(event.data.registered_at as string));
    const DAY = 86_400_000;
    expect(registered).to.not.be.empty;
    for (const at of registered) expect(at).to.be.within(started - 3 * DAY, Date.now());
    // Registrations spread over the period: the first in its first day.
    expect(Math.min(...registered)).to.be.below(started - 2 * DAY);
  });
});

describe('generate-events: BulkAppender', () => {
  const context = { correlation_id: 'c', causation_id: 'c', actor: 'process:test' };
  const rows = (db: SqliteConnection) => db.prepare('SELECT position, id, stream, revision, type, data, metadata FROM events ORDER BY position').all();
  const taken = (ids: RandomIds, claimer: string): NewDomainEvent => ({
    id: ids.uuid(),
    type: 'ClaimSlotTaken',
    data: { claim_id: `k-${claimer}`, claimer, taken: 1 },
  });
  let opened: { db: SqliteConnection; appender?: BulkAppender }[] = [];

  function open(dataDir = tempDataDir()) {
    const db = openSqlite(dataDir);
    const appender = new BulkAppender(db);
    opened.push({ db, appender });
    return { db, appender, log: new EventLog(appender, new RandomIds()), dataDir };
  }

  afterEach(async () => {
    for (const { db, appender } of opened) {
      await appender?.close();
      db.close();
    }
    opened = [];
  });

  it('writes the rows SqliteEventStore writes (positions included), and refuses a wrong expected revision as it does', async () => {
    const storeDb = openSqlite(tempDataDir());
    opened.push({ db: storeDb });
    const { db: bulkDb, appender, log: bulk } = open();
    const ids = new RandomIds();
    const appends: [string, NewDomainEvent[], ExpectedRevision][] = [
      [streams.code('ABC'), [{ id: ids.uuid(), type: 'CodeReserved', data: { code: 'ABC', type: 'referral', owner_id: 'u1' } }], 'no_stream'],
      [
        streams.code('ABC'),
        [
          { id: ids.uuid(), type: 'ClaimSlotTaken', data: { claim_id: 'k1', claimer: 'u2', taken: 1 } },
          { id: ids.uuid(), type: 'ClaimSlotReleased', data: { claim_id: 'k1', claimer: 'u2', taken: 0 } },
        ],
        0,
      ],
      [streams.code('XYZ'), [{ id: ids.uuid(), type: 'CodeReserved', data: { code: 'XYZ', type: 'referral', owner_id: 'u3' } }], 'any'],
    ];
    const store = new EventLog(new SqliteEventStore(storeDb), ids);
    // The first append, outside a group, is committed at once; the others share a group.
    expect(await bulk.append(...appends[0]!, context)).to.deep.equal(await store.append(...appends[0]!, context));
    appender.begin();
    for (const [stream, events, expected] of appends.slice(1)) {
      expect(await bulk.append(stream, events, expected, context)).to.deep.equal(await store.append(stream, events, expected, context));
    }
    for (const expected of ['no_stream', 1, 5] as const) {
      const append = (log: EventLog) =>
        log.append(streams.code('ABC'), [{ type: 'ClaimSlotTaken', data: { claim_id: 'k2', claimer: 'u4', taken: 1 } }], expected, context);
      const [fromStore, fromBulk] = await Promise.all([append(store).catch((error: unknown) => error), append(bulk).catch((error: unknown) => error)]);
      expect(fromBulk)
        .to.be.instanceOf(WrongExpectedRevisionError)
        .and.to.deep.include({ actual: (fromStore as WrongExpectedRevisionError).actual });
    }
    await appender.commit();
    expect(rows(bulkDb)).to.deep.equal(rows(storeDb));
  });

  it('records the time of each append on its events, or the time an event carries (as SqliteEventStore does)', async () => {
    const { db, appender } = open();
    const ids = new RandomIds();
    const event = (claimer: string, recordedAt?: Date): NewEvent => ({
      id: ids.uuid(),
      type: 'ClaimSlotTaken',
      data: { claim_id: `k-${claimer}`, claimer, taken: 1 },
      metadata: { ...context, schema_version: 1 },
      ...(recordedAt && { recordedAt }),
    });
    const before = new Date().toISOString();
    await appender.append(streams.code('T1'), [event('a'), event('b')], 'no_stream');
    const carried = new Date('2024-02-29T12:00:00.000Z');
    await appender.append(streams.code('T2'), [event('c', carried)], 'no_stream');
    const after = new Date().toISOString();
    const recorded = db.prepare('SELECT recorded_at FROM events ORDER BY position').pluck().all() as string[];
    expect(recorded[0]).to.equal(recorded[1]);
    expect(recorded[0]! >= before && recorded[0]! <= after, `${recorded[0]} within ${before}..${after}`).to.equal(true);
    expect(recorded[2]).to.equal(carried.toISOString());
  });

  it("checks a stream written before the run against its revision in the log, and goes on from the log's last position", async () => {
    const dataDir = tempDataDir();
    const before = openSqlite(dataDir);
    const ids = new RandomIds();
    await new EventLog(new SqliteEventStore(before), ids).append(streams.code('OLD'), [taken(ids, 'a'), taken(ids, 'b')], 'no_stream', context);
    before.close();
    const { appender, log } = open(dataDir);
    appender.begin();
    const refused = await log.append(streams.code('OLD'), [taken(ids, 'c')], 'no_stream', context).catch((error: unknown) => error);
    expect(refused).to.be.instanceOf(WrongExpectedRevisionError).and.to.deep.include({ actual: 1 });
    expect(await log.append(streams.code('OLD'), [taken(ids, 'c')], 1, context)).to.deep.include({ nextExpectedRevision: 2, position: 3n });
    expect(await log.append(streams.code('NEW'), [taken(ids, 'd')], 'no_stream', context)).to.deep.include({ nextExpectedRevision: 0, position: 4n });
    await appender.commit();
  });

  it("reads a stream of the open group as committed rows followed by the group's, forwards and backwards, before the writer thread commits", async () => {
    const { db, appender, log } = open();
    const ids = new RandomIds();
    const stream = streams.code('MIX');
    await log.append(stream, [taken(ids, 'r0'), taken(ids, 'r1'), taken(ids, 'r2')], 'no_stream', context);
    appender.begin();
    await log.append(stream, [taken(ids, 'r3'), taken(ids, 'r4')], 2, context);
    // Not committed: another connection does not see the group's rows yet.
    expect((rows(db) as unknown[]).length).to.equal(3);
    const revisions = async (options: Parameters<BulkAppender['readStream']>[1]) => (await appender.readStream(stream, options)).map((event) => event.revision);
    expect(await revisions({})).to.deep.equal([0, 1, 2, 3, 4]);
    expect(await revisions({ fromRevision: 1, maxCount: 3 })).to.deep.equal([1, 2, 3]);
    expect(await revisions({ fromRevision: 4, maxCount: 1 })).to.deep.equal([4]);
    expect(await revisions({ direction: 'backwards' })).to.deep.equal([4, 3, 2, 1, 0]);
    expect(await revisions({ direction: 'backwards', fromRevision: 3, maxCount: 3 })).to.deep.equal([3, 2, 1]);
    expect(await revisions({ direction: 'backwards', maxCount: 1 })).to.deep.equal([4]);
    const [fourth] = await appender.readStream(stream, { fromRevision: 3, maxCount: 1 });
    expect(fourth).to.deep.include({ position: 4n, type: 'ClaimSlotTaken', data: { claim_id: 'k-r3', claimer: 'r3', taken: 1 } });
    expect(() => appender.readAll({ after: null, limit: 10 })).to.throw(/between groups/);
    await appender.commit();
    expect((rows(db) as unknown[]).length).to.equal(5);
    expect((await appender.readStream(stream, { fromRevision: 3, maxCount: 1 }))[0]).to.deep.equal(fourth);
    expect((await appender.readAll({ after: null, limit: 10 })).map((event) => event.revision)).to.deep.equal([0, 1, 2, 3, 4]);
  });

  it('fails the commit of a group whose row the log refuses, keeps none of the group, and refuses later appends', async () => {
    const { db, appender, log } = open();
    const ids = new RandomIds();
    const reused = taken(ids, 'a');
    await log.append(streams.code('ONE'), [reused], 'no_stream', context);
    appender.begin();
    await log.append(streams.code('TWO'), [taken(ids, 'b')], 'no_stream', context);
    await log.append(streams.code('THREE'), [reused], 'no_stream', context); // the same event id
    const failed = await appender.commit().catch((error: unknown) => error);
    expect(failed).to.be.instanceOf(Error);
    expect((failed as Error).message).to.match(/UNIQUE constraint failed: events.id/);
    expect((rows(db) as { stream: string }[]).map((row) => row.stream)).to.deep.equal([streams.code('ONE')]);
    const later = await log.append(streams.code('FOUR'), [taken(ids, 'c')], 'no_stream', context).catch((error: unknown) => error);
    expect(later).to.equal(failed);
  });
});

describe('npm run generate-events: personal data', function () {
  this.timeout(120_000);

  it('seals personal fields as the service does (one data key per user), so an erasure destroys them', async () => {
    const dataDir = tempDataDir();
    await script('generate-events', dataDir, ['--events', '500', '--seed', '3']);
    const registered = (await readLog(dataDir, { raw: true })).filter((event) => event.type === 'UserRegistered');
    expect(registered.length).to.be.greaterThan(0);
    for (const event of registered) expect(event.data.metadata, String(event.data.app_user_id)).to.have.property('$encrypted');
    const keys = new Database(path.join(dataDir, 'data-keys.db'), { readonly: true });
    try {
      expect((keys.prepare("SELECT COUNT(*) AS count FROM data_keys WHERE subject LIKE 'user:%'").get() as { count: number }).count).to.equal(
        registered.length,
      );
    } finally {
      keys.close();
    }
    const user = String(registered[0]!.data.app_user_id);
    const svc = await startTestService({ dataDir });
    try {
      const before = await svc.admin('GET', `/admin/events?stream=${encodeURIComponent(`user-${user}`)}&type=UserRegistered`);
      expect(before.body.data.events[0].data.metadata).to.not.deep.equal({ erased: true });
      expect((await svc.admin('DELETE', `/admin/users/${encodeURIComponent(user)}`)).status).to.equal(204);
      const after = await svc.admin('GET', `/admin/events?stream=${encodeURIComponent(`user-${user}`)}&type=UserRegistered`);
      expect(after.body.data.events[0].data.metadata).to.deep.equal({ erased: true });
    } finally {
      await svc.stop();
    }
  });
});
