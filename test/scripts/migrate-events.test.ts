import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { carryDigestKey, digestKeyToCarry, MigrationConflictError, migrateEvents } from '../../scripts/migrate-events.js';
import { MemoryKeyStore } from '../../src/adapters/memory/memory-key-store.js';
import { SqliteProjectorLock } from '../../src/adapters/sqlite/projector-lock.js';
import { openSqlite, type SqliteConnection } from '../../src/adapters/sqlite/sqlite-database.js';
import { SqliteEventStore } from '../../src/adapters/sqlite/sqlite-event-store.js';
import { PAYMENT_CUSTOMER_DIGEST_SUBJECT, userSubject } from '../../src/application/privacy/personal-data-cipher.js';
import { openEmbeddedBackend } from '../../src/backends/embedded.js';
import type { EventStore, NewEvent, RecordedEvent } from '../../src/ports/event-store.js';
import { tempDir } from '../support/temp-dir.js';

const run = promisify(execFile);

interface EmbeddedLog {
  dir: string;
  db: SqliteConnection;
  store: SqliteEventStore;
}

function openLog(dir = tempDir('referrals-migrate')): EmbeddedLog {
  const db = openSqlite(dir);
  return { dir, db, store: new SqliteEventStore(db) };
}

function closeLog(log: EmbeddedLog): void {
  log.db.close();
}

function event(type: string, data: Record<string, unknown>, operationId?: string): NewEvent {
  return {
    id: randomUUID(),
    type,
    data,
    metadata: {
      correlation_id: `req-${randomUUID()}`,
      causation_id: `cause-${randomUUID()}`,
      actor: 'secret:abc123',
      schema_version: 1,
      ...(operationId ? { operation_id: operationId } : {}),
      extra: { note: 'kept as is', list: [1, 2] },
    },
  };
}

/** A small but varied history: interleaved streams, multi-event appends, metadata with operation ids. */
async function seed(store: EventStore): Promise<void> {
  await store.append('user-ada', [event('UserRegistered', { app_user_id: 'ada' }), event('UserUpdated', { is_premium: false })], 'no_stream');
  await store.append('code-ABC123', [event('CodeReserved', { owner: 'ada' })], 'no_stream');
  await store.append('user-bob', [event('UserRegistered', { app_user_id: 'bob' })], 'no_stream');
  await store.append('user-ada', [event('RewardGranted', { key: 'credits', credits: 10 }, 'op-1')], 1);
  await store.append(
    'user-bob',
    [event('CodeClaimed', { code: 'ABC123' }), event('RewardGranted', { key: 'credits', credits: 5 }), event('UserUpdated', { name: 'Zoë ✓' })],
    0,
  );
  await store.append('user-ada', [event('CreditsWithdrawn', { key: 'credits', amount: 3 }, 'op-2')], 2);
  await store.append('program-p1', [event('ProgramDefined', { id: 'p1', nested: { a: [true, null] } })], 'no_stream');
}

async function everything(store: EventStore): Promise<RecordedEvent[]> {
  const all: RecordedEvent[] = [];
  let after: bigint | null = null;
  for (;;) {
    const page = await store.readAll({ after, limit: 3 });
    if (page.length === 0) return all;
    all.push(...page);
    after = page[page.length - 1]!.position;
  }
}

/** What a migration must keep: order, ids, streams, revisions, types, data, metadata and when each was first recorded. */
function comparable(events: RecordedEvent[]) {
  return events.map(({ id, stream, revision, type, data, metadata, recordedAt }) => ({
    id,
    stream,
    revision,
    type,
    data,
    metadata,
    recordedAt: recordedAt.toISOString(),
  }));
}

describe('scripts/migrate-events (embedded → embedded)', function () {
  let source: EmbeddedLog;
  let target: EmbeddedLog;

  beforeEach(async function () {
    source = openLog();
    target = openLog();
    await seed(source.store);
  });

  afterEach(function () {
    closeLog(source);
    closeLog(target);
  });

  it('copies the whole log in commit order, preserving ids, revisions, types, data, metadata and recording times', async function () {
    // The copy is made later than the source was written: its times must still be the source's.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const result = await migrateEvents(source.store, target.store, { pageSize: 4 });
    expect(result).to.deep.equal({ copied: 10, resumedAfter: null, complete: true });
    expect(comparable(await everything(target.store))).to.deep.equal(comparable(await everything(source.store)));
    const [withdrawal] = await target.store.readStream('user-ada', { fromRevision: 3 });
    expect(withdrawal!.metadata).to.deep.include({ operation_id: 'op-2', actor: 'secret:abc123' });
  });

  it('keeps each stream appendable with the revisions the source had', async function () {
    await migrateEvents(source.store, target.store);
    const appended = await target.store.append('user-ada', [event('UserUpdated', {})], 3);
    expect(appended.nextExpectedRevision).to.equal(4);
  });

  it('resumes after an interruption, also one that split an append, without copying anything twice', async function () {
    const progress: number[] = [];
    const first = await migrateEvents(source.store, target.store, { maxEvents: 7, onProgress: ({ copied }) => progress.push(copied) });
    expect(first).to.deep.include({ copied: 7, complete: false });
    expect(progress[progress.length - 1]).to.equal(7);
    // The 7th event is the middle of bob's three-event append.
    const partial = await everything(target.store);
    expect(partial).to.have.length(7);
    expect(partial[6]).to.deep.include({ stream: 'user-bob', revision: 2 });

    const second = await migrateEvents(source.store, target.store, { maxEvents: 2 });
    expect(second.resumedAfter).to.deep.include({ stream: 'user-bob', revision: 2 });
    expect(second).to.deep.include({ copied: 2, complete: false });

    const third = await migrateEvents(source.store, target.store);
    expect(third).to.deep.include({ copied: 1, complete: true });
    expect(comparable(await everything(target.store))).to.deep.equal(comparable(await everything(source.store)));

    const again = await migrateEvents(source.store, target.store);
    expect(again).to.deep.include({ copied: 0, complete: true });
    expect(await everything(target.store)).to.have.length(10);
  });

  it('picks up events written to the source after a first complete run', async function () {
    await migrateEvents(source.store, target.store);
    await source.store.append('user-bob', [event('UserUpdated', { is_premium: true })], 3);
    const result = await migrateEvents(source.store, target.store);
    expect(result).to.deep.include({ copied: 1, complete: true });
    expect(comparable(await everything(target.store))).to.deep.equal(comparable(await everything(source.store)));
  });

  for (const [what, stream, appUserId] of [
    ['holds events from elsewhere (a stream the source lacks)', 'user-zed', 'zed'],
    // Another deployment's log: its user-ada also begins with a registration, not the source's.
    ['ends with an event where the source has another one (same stream and revision, another id)', 'user-ada', 'ada'],
  ]) {
    it(`refuses a target that ${what}`, async function () {
      await target.store.append(stream!, [event('UserRegistered', { app_user_id: appUserId })], 'no_stream');
      let failure: unknown = null;
      try {
        await migrateEvents(source.store, target.store);
      } catch (error) {
        failure = error;
      }
      expect(failure).to.be.instanceOf(MigrationConflictError);
      expect(await everything(target.store)).to.have.length(1);
    });
  }

  it('runs from the command line, reporting on stderr (with a warning while a service runs on the source), and resumes when run again', async function () {
    const targetDir = tempDir('referrals-migrate-cli');
    const script = path.resolve('scripts/migrate-events.ts');
    // A service projecting on the source holds its lock: what it appends meanwhile is left behind.
    const service = new SqliteProjectorLock(source.dir);
    expect(service.tryTake()).to.equal(true);
    let first: { stderr: string };
    try {
      first = await run(process.execPath, ['--import', 'tsx', script, '--from', source.dir, '--to', targetDir, '--max-events', '5']);
    } finally {
      service.close();
    }
    expect(first.stderr).to.contain(`warning: a service is running on ${source.dir}`);
    expect(first.stderr).to.match(/5 events copied from the beginning/);
    expect(first.stderr).to.match(/run again to continue/);
    const second = await run(process.execPath, ['--import', 'tsx', script, '--from', source.dir, '--to', targetDir]);
    expect(second.stderr).to.not.contain('warning');
    expect(second.stderr).to.match(/5 events copied resumed after/);
    expect(second.stderr).to.match(/up to date/);
    const copy = openLog(targetDir);
    try {
      expect(comparable(await everything(copy.store))).to.deep.equal(comparable(await everything(source.store)));
    } finally {
      closeLog(copy);
    }
  });

  it('refuses to start without a source database, with a usage error for missing flags', async function () {
    const script = path.resolve('scripts/migrate-events.ts');
    const missing = path.join(os.tmpdir(), `referrals-missing-${randomUUID()}`);
    const usage = await run(process.execPath, ['--import', 'tsx', script, '--from', source.dir]).catch((error: { code: number; stderr: string }) => error);
    expect(usage).to.deep.include({ code: 2 });
    expect(usage.stderr).to.contain('--from and --to are both required');
    const noSource = await run(process.execPath, ['--import', 'tsx', script, '--from', missing, '--to', target.dir]).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(noSource).to.deep.include({ code: 66 });
    expect(noSource.stderr).to.contain(`no database at ${path.join(missing, 'referrals.db')}`);
    expect(fs.existsSync(missing)).to.equal(false);
    // A connection string of another kind is not taken for a directory (and created as one).
    const mongo = await run(process.execPath, ['--import', 'tsx', script, '--from', source.dir, '--to', 'mongodb://x']).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(mongo).to.deep.include({ code: 2 });
    expect(mongo.stderr).to.contain('--to mongodb://x: not an esdb:// or kurrentdb:// connection string');
    expect(fs.existsSync('mongodb:')).to.equal(false);
  });

  it('refuses a page size or event budget of 0, and a source that is its target, as usage errors (exit 2) copying nothing', async function () {
    const script = path.resolve('scripts/migrate-events.ts');
    const refusals: [string[], string][] = [
      [['--to', target.dir, '--page-size', '0'], '--page-size must be a positive integer, got 0'],
      [['--to', target.dir, '--max-events', '0'], '--max-events must be a positive integer, got 0'],
      [['--to', source.dir], '--from and --to are the same'],
    ];
    for (const [args, message] of refusals) {
      const refused = await run(process.execPath, ['--import', 'tsx', script, '--from', source.dir, ...args]).catch(
        (error: { code: number; stderr: string }) => error,
      );
      expect(refused, args.join(' ')).to.deep.include({ code: 2 });
      expect(refused.stderr, args.join(' ')).to.contain(message);
    }
    expect(await everything(target.store)).to.deep.equal([]);
  });

  it('on a target holding another log, says so without asking to run again (exit 1)', async function () {
    await target.store.append('user-zed', [event('UserRegistered', { app_user_id: 'zed' })], 'no_stream');
    const script = path.resolve('scripts/migrate-events.ts');
    const refused = await run(process.execPath, ['--import', 'tsx', script, '--from', source.dir, '--to', target.dir]).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(refused).to.deep.include({ code: 1 });
    expect(refused.stderr).to.contain('migrate-events failed');
    expect(refused.stderr).to.not.contain('Run again');
  });
});

describe('npm run migrate-events: personal fields (SPEC §13)', function () {
  this.timeout(60_000);

  const registered = (id: string, metadata: Record<string, unknown> | null, customer: string | null): NewEvent => ({
    ...event('UserRegistered', {
      app_user_id: id,
      registered_at: '2026-11-01T00:00:00.000Z',
      is_trial: null,
      is_premium: null,
      first_seen_at: null,
      metadata,
      payment_customer_id: customer,
    }),
  });

  it('re-encrypts plain values written before encryption, carries encrypted ones over to the new keys, keeps erased ones erased', async () => {
    const sourceDir = tempDir('referrals-migrate-pd');
    const targetDir = tempDir('referrals-migrate-pd');
    // Before encryption: plain values straight into the log.
    const legacy = openLog(sourceDir);
    await legacy.store.append('user-old', [registered('old', { email: 'old.plain@example.org' }, 'cus_OldPlain')], 'no_stream');
    closeLog(legacy);
    // With encryption: one user kept, one erased.
    const backend = openEmbeddedBackend(sourceDir);
    await backend.eventStore.append('user-kept', [registered('kept', { email: 'kept@example.org' }, 'cus_Kept')], 'no_stream');
    await backend.eventStore.append('user-gone', [registered('gone', { email: 'gone@example.org' }, null)], 'no_stream');
    await backend.keyStore.destroy(userSubject('gone'));
    await backend.close();

    const script = path.resolve('scripts/migrate-events.ts');
    const result = await run(process.execPath, ['--import', 'tsx', script, '--from', sourceDir, '--to', targetDir]);
    expect(result.stderr).to.match(/3 events copied from the beginning/);

    const raw = openLog(targetDir);
    const stored = JSON.stringify((await everything(raw.store)).map((recorded) => recorded.data));
    closeLog(raw);
    for (const plain of ['old.plain@example.org', 'cus_OldPlain', 'kept@example.org', 'cus_Kept']) expect(stored).to.not.contain(plain);
    const migrated = openEmbeddedBackend(targetDir);
    try {
      const [old] = await migrated.eventStore.readStream('user-old');
      expect(old!.data).to.deep.include({ metadata: { email: 'old.plain@example.org' }, payment_customer_id: 'cus_OldPlain' });
      const [kept] = await migrated.eventStore.readStream('user-kept');
      expect(kept!.data).to.deep.include({ metadata: { email: 'kept@example.org' }, payment_customer_id: 'cus_Kept' });
      const [gone] = await migrated.eventStore.readStream('user-gone');
      expect(gone!.data.metadata).to.equal(null);
      expect(gone!.erased).to.deep.equal(['metadata']);
      // Its own keys: the source's key file could be deleted and the target still reads.
      expect((await migrated.keyStore.existingKey(userSubject('old')))?.key).to.have.length(32);
    } finally {
      await migrated.close();
    }
  });
});

describe('npm run migrate-events: the payment-customer digest key (fraud rules)', function () {
  this.timeout(60_000);
  const script = path.resolve('scripts/migrate-events.ts');

  it("carries the source's key, from a read store of before 2026-11-25 too, and refuses a target with a key of its own", async () => {
    const sourceDir = tempDir('referrals-migrate-digest');
    const legacy = Buffer.alloc(32, 5);
    const source = openEmbeddedBackend(sourceDir);
    await source.readStore.putAux('fraud_keys', 'payment-customer-digest', { key: legacy.toString('base64') });
    await source.eventStore.append('payment-customer-abc', [event('PaymentCustomerClaimCounted', { claimers: 1 })], 'no_stream');
    await source.close();

    const targetDir = tempDir('referrals-migrate-digest');
    const copied = await run(process.execPath, ['--import', 'tsx', script, '--from', sourceDir, '--to', targetDir]);
    expect(copied.stderr).to.contain('digest key is the source');
    const target = openEmbeddedBackend(targetDir);
    try {
      expect((await target.keyStore.existingKey(PAYMENT_CUSTOMER_DIGEST_SUBJECT))?.key.equals(legacy)).to.equal(true);
    } finally {
      await target.close();
    }

    const ownDir = tempDir('referrals-migrate-digest');
    const own = openEmbeddedBackend(ownDir);
    await own.keyStore.keyFor(PAYMENT_CUSTOMER_DIGEST_SUBJECT);
    await own.close();
    const refused = await run(process.execPath, ['--import', 'tsx', script, '--from', sourceDir, '--to', ownDir]).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(refused).to.deep.include({ code: 1 });
    expect(refused.stderr).to.contain('already has a payment-customer digest key of its own');
    const untouched = openLog(ownDir);
    try {
      expect(await everything(untouched.store)).to.deep.equal([]);
    } finally {
      closeLog(untouched);
    }
  });

  it("prefers the source key store's key, carries nothing when the source has none, and refuses a target whose own key differs", async () => {
    const source = { keys: new MemoryKeyStore(), legacy: null as Buffer | null };
    const target = { keys: new MemoryKeyStore(), legacy: null as Buffer | null };
    expect(await digestKeyToCarry(source, target)).to.equal(null);
    const current = await source.keys.keyFor(PAYMENT_CUSTOMER_DIGEST_SUBJECT);
    const material = await digestKeyToCarry({ ...source, legacy: Buffer.alloc(32, 1) }, target);
    expect(material?.equals(current.key)).to.equal(true);
    await carryDigestKey(target.keys, material!);
    expect((await target.keys.existingKey(PAYMENT_CUSTOMER_DIGEST_SUBJECT))?.key.equals(current.key)).to.equal(true);
    // Run again (a resumed migration): the same key, no conflict.
    expect((await digestKeyToCarry(source, target))?.equals(current.key)).to.equal(true);
    // A target with its own key, in its key store or (before 2026-11-25) in its read store.
    await expectRejected(digestKeyToCarry({ keys: new MemoryKeyStore(), legacy: Buffer.alloc(32, 2) }, target), MigrationConflictError);
    await expectRejected(digestKeyToCarry(source, { keys: new MemoryKeyStore(), legacy: Buffer.alloc(32, 3) }), MigrationConflictError);
    await expectRejected(carryDigestKey(target.keys, Buffer.alloc(32, 4)), MigrationConflictError);
  });
});

async function expectRejected(promise: Promise<unknown>, type: new (...args: never[]) => Error): Promise<void> {
  const outcome = await promise.then(
    () => null,
    (error: unknown) => error,
  );
  expect(outcome).to.be.instanceOf(type);
}
