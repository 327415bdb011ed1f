/**
 * Copies the event log from one backend to another, in commit order, keeping every event's id,
 * type, data and metadata, and every stream's revisions (each append names the exact expected
 * revision the source had). Resumable: it finds the last event the target holds, locates that
 * same event in the source and carries on after it, so an interrupted run is simply run again.
 *
 *   MONGODB_URL="mongodb://localhost:27017/?directConnection=true" npm run migrate-events -- --from ./data --to "esdb://localhost:2113?tls=false"
 *
 * `--from` / `--to`: an `esdb://` or `kurrentdb://` connection string, or an embedded data
 * directory. Read models are not copied: projectors rebuild them from the migrated log.
 * Personal fields (SPEC §13) are re-encrypted on the way with the target's data keys (a
 * DATA_DIR's data-keys.db; for a connection string, the MongoDB of MONGODB_URL): plain values
 * written before encryption existed are encrypted, erased ones stay erased. Progress goes to stderr.
 */
import '../src/supported-node.js';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { EventStoreDbEventStore } from '../src/adapters/eventstoredb/eventstoredb-event-store.js';
import { projectorRunsOn } from '../src/adapters/sqlite/projector-lock.js';
import { databasePath } from '../src/adapters/sqlite/sqlite-database.js';
import { SqliteEventStore } from '../src/adapters/sqlite/sqlite-event-store.js';
import { SqliteKeyStore } from '../src/adapters/sqlite/sqlite-key-store.js';
import { MongoKeyStore } from '../src/adapters/mongodb/mongo-key-store.js';
import { MongoReadStore } from '../src/adapters/mongodb/mongo-read-store.js';
import { peekDocument } from '../src/adapters/sqlite/sqlite-read-store.js';
import { legacyDigestKey } from '../src/application/fraud/legacy-digest-key.js';
import { PAYMENT_CUSTOMER_DIGEST_SUBJECT, PersonalDataCipher } from '../src/application/privacy/personal-data-cipher.js';
import type { KeyStore } from '../src/ports/key-store.js';
import { openKeyConnection, openLogBesideItsKeys } from '../src/backends/embedded.js';
import { MongoClient } from 'mongodb';
import { isEventStoreUrl } from '../src/config.js';
import type { EventStore, ExpectedRevision, NewEvent, RecordedEvent } from '../src/ports/event-store.js';
import { defineCommand, EXIT, runScript } from './cli/command-line.js';

const command = defineCommand({
  name: 'migrate-events',
  summary:
    "Copies the event log from one backend to another, in commit order, keeping every event's id, type, data and metadata and every " +
    "stream's revisions. Resumable: an interrupted run is simply run again (it carries on after the last event the target holds). " +
    'Read models are not copied: projectors rebuild them from the migrated log. Personal fields are re-encrypted with the ' +
    "target's data keys (plain ones written before encryption existed are encrypted; erased ones stay erased).",
  options: {
    from: {
      type: 'string',
      value: 'SOURCE',
      description: 'Where to read: an esdb:// or kurrentdb:// connection string, or an embedded DATA_DIR (must hold referrals.db)',
    },
    to: { type: 'string', value: 'TARGET', description: 'Where to write: a connection string, or a DATA_DIR (created when missing)' },
    'page-size': { type: 'string', value: 'N', description: 'Events read from the source per page', default: '500' },
    'max-events': { type: 'string', value: 'N', description: 'Stop after copying N events (run again to go on)' },
  },
  notes: [
    "Data keys: a DATA_DIR's data-keys.db; for an esdb:// or kurrentdb:// side, the MongoDB of MONGODB_URL (and MONGODB_DATABASE).",
    'Exit codes: 0 done (or stopped at --max-events); 1 failed (run again to resume); 2 usage error; 66 no database at --from.',
  ],
  examples: [
    'MONGODB_URL="mongodb://localhost:27017/?directConnection=true" npm run migrate-events -- --from ./data --to "esdb://localhost:2113?tls=false"',
    'npm run migrate-events -- --from ./data --to /backup/data --max-events 100000',
    'node dist/scripts/migrate-events.js --from /app/data --to "esdb://eventstore:2113?tls=false"     # in the container image',
  ],
});

/** The key stores of source and target: personal fields are re-encrypted on the way (SPEC §13). */
export interface MigrationCiphers {
  source: PersonalDataCipher;
  target: PersonalDataCipher;
}

export interface MigrationOptions {
  /**
   * Re-encrypt personal fields with the target's keys: values the source encrypted are
   * decrypted with its keys, plain ones (written before encryption) encrypted, erased ones
   * copied as they are. Without it, data is copied byte for byte.
   */
  personalData?: MigrationCiphers;
  /** Events read from the source per page. */
  pageSize?: number;
  /** Stop after copying this many events (a partial run; run again to go on). */
  maxEvents?: number;
  /** Called after each append with the running totals. */
  onProgress?: (progress: MigrationProgress) => void;
}

export interface MigrationProgress {
  copied: number;
  /** Source position of the last event copied. */
  position: bigint;
}

export interface MigrationResult {
  copied: number;
  /** The event the run continued after (the target's last event), null when it started from scratch. */
  resumedAfter: Pick<RecordedEvent, 'id' | 'stream' | 'revision'> | null;
  /** True when the source has nothing more to copy. */
  complete: boolean;
}

/** Largest group of one stream's consecutive events appended at once (EventStoreDB allows 1 MiB per append). */
const MAX_GROUP_EVENTS = 100;
const MAX_GROUP_BYTES = 512 * 1024;

export class MigrationConflictError extends Error {
  override name = 'MigrationConflictError';
}

async function lastEventOf(store: EventStore): Promise<RecordedEvent | null> {
  let last: RecordedEvent | null = null;
  let after: bigint | null = null;
  for (;;) {
    const page = await store.readAll({ after, limit: 1000 });
    if (page.length === 0) return last;
    last = page[page.length - 1]!;
    after = last.position;
  }
}

/** Where the source must be read from: after the event the target ended with (null: from the start). */
async function resumePoint(source: EventStore, target: EventStore): Promise<{ after: bigint | null; resumedAfter: RecordedEvent | null }> {
  const last = await lastEventOf(target);
  if (last === null) return { after: null, resumedAfter: null };
  const [same] = await source.readStream(last.stream, { fromRevision: last.revision, maxCount: 1 });
  if (same === undefined || same.id !== last.id) {
    throw new MigrationConflictError(
      `The target's last event (${last.id} at ${last.stream}@${last.revision}) is not in the source at the same place: ` +
        'the target holds events that did not come from this source. Refusing to mix two logs.',
    );
  }
  return { after: same.position, resumedAfter: last };
}

/** The copy keeps the time the event was first recorded (the credit ledger's `at`, exports' `recorded_at`, `--since`). */
function toNewEvent(event: RecordedEvent): NewEvent {
  return { id: event.id, type: event.type, data: event.data, metadata: event.metadata, recordedAt: event.recordedAt };
}

/** Consecutive events of one stream, bounded in count and size, to append in one call. */
function groupsOf(events: RecordedEvent[]): RecordedEvent[][] {
  const groups: RecordedEvent[][] = [];
  let current: RecordedEvent[] = [];
  let bytes = 0;
  for (const event of events) {
    const size = JSON.stringify(event.data).length + JSON.stringify(event.metadata).length;
    const previous = current[current.length - 1];
    const fits =
      previous !== undefined &&
      previous.stream === event.stream &&
      event.revision === previous.revision + 1 &&
      current.length < MAX_GROUP_EVENTS &&
      bytes + size <= MAX_GROUP_BYTES;
    if (!fits && current.length > 0) {
      groups.push(current);
      current = [];
      bytes = 0;
    }
    current.push(event);
    bytes += size;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

function expectedBefore(event: RecordedEvent): ExpectedRevision {
  return event.revision === 0 ? 'no_stream' : event.revision - 1;
}

export async function migrateEvents(source: EventStore, target: EventStore, options: MigrationOptions = {}): Promise<MigrationResult> {
  const pageSize = options.pageSize ?? 500;
  const maxEvents = options.maxEvents ?? Number.POSITIVE_INFINITY;
  const { after, resumedAfter } = await resumePoint(source, target);
  let cursor = after;
  let copied = 0;
  for (;;) {
    if (copied >= maxEvents) {
      const rest = await source.readAll({ after: cursor, limit: 1 });
      return { copied, resumedAfter, complete: rest.length === 0 };
    }
    const page = await source.readAll({ after: cursor, limit: pageSize });
    if (page.length === 0) return { copied, resumedAfter, complete: true };
    for (const whole of groupsOf(page)) {
      const group = whole.slice(0, Math.max(0, maxEvents - copied));
      if (group.length === 0) break;
      const first = group[0]!;
      const last = group[group.length - 1]!;
      const copies = options.personalData ? await options.personalData.source.reencrypt(group, options.personalData.target) : group;
      const result = await target.append(first.stream, copies.map(toNewEvent), expectedBefore(first));
      if (result.nextExpectedRevision !== last.revision) {
        throw new MigrationConflictError(`Stream ${first.stream}: the target reached revision ${result.nextExpectedRevision}, the source has ${last.revision}`);
      }
      copied += group.length;
      cursor = last.position;
      options.onProgress?.({ copied, position: last.position });
    }
  }
}

/** A side's payment-customer digest key: its key store's, or the read store's of a deployment from before 2026-11-25. */
export interface DigestKeySide {
  keys: KeyStore;
  legacy: Buffer | null;
}

async function digestKeyOf(side: DigestKeySide): Promise<Buffer | null> {
  return (await side.keys.existingKey(PAYMENT_CUSTOMER_DIGEST_SUBJECT))?.key ?? side.legacy;
}

function digestKeyConflict(): MigrationConflictError {
  return new MigrationConflictError(
    "The target already has a payment-customer digest key of its own (a service ran on it with fraud rules): its counters and the source's would not add up. Refusing to mix two logs.",
  );
}

/**
 * The payment-customer digest key (`payment_customer_claimers`, docs/fraud-rules.md) must go to
 * the target as it is: the copied counter streams are named by it, and with another key the
 * target would count every payment customer from zero again. The source's key to carry (null
 * when it has none); refuses a target that has a different one. Writes nothing.
 */
export async function digestKeyToCarry(source: DigestKeySide, target: DigestKeySide): Promise<Buffer | null> {
  const material = await digestKeyOf(source);
  if (material === null) return null;
  const own = await digestKeyOf(target);
  if (own !== null && !own.equals(material)) throw digestKeyConflict();
  return material;
}

/** Gives the target the source's digest key (`digestKeyToCarry`). */
export async function carryDigestKey(target: KeyStore, material: Buffer): Promise<void> {
  const kept = await target.keyFor(PAYMENT_CUSTOMER_DIGEST_SUBJECT, material);
  if (!kept.key.equals(material)) throw digestKeyConflict();
}

// ---------------------------------------------------------------------------------------------
// Command line

interface OpenedStore {
  /** The log as stored (personal fields as the store holds them). */
  store: EventStore;
  /** The store's data keys (the DATA_DIR's key file; MONGODB_URL's collection beside EventStoreDB). */
  keys: KeyStore;
  cipher: PersonalDataCipher;
  /** The digest key a deployment from before 2026-11-25 kept in its read store. */
  legacyDigestKey(): Promise<Buffer | null>;
  close(): Promise<void>;
}

async function openStore(location: string): Promise<OpenedStore> {
  if (isEventStoreUrl(location)) {
    const mongoUrl = process.env.MONGODB_URL;
    if (!mongoUrl) return command.fail(`MONGODB_URL must name the MongoDB that holds the data keys of ${location}`);
    const client = await MongoClient.connect(mongoUrl);
    const database = process.env.MONGODB_DATABASE || 'referrals';
    const store = EventStoreDbEventStore.connect(location);
    const keys = new MongoKeyStore(client.db(database));
    return {
      store,
      keys,
      cipher: new PersonalDataCipher(keys),
      async legacyDigestKey() {
        const readStore = await MongoReadStore.connect(mongoUrl, database);
        try {
          return await legacyDigestKey(readStore);
        } finally {
          await readStore.close();
        }
      },
      async close() {
        await store.close();
        await client.close();
      },
    };
  }
  const db = openLogBesideItsKeys(location);
  const keysDb = openKeyConnection(location);
  const store = new SqliteEventStore(db);
  const keys = new SqliteKeyStore(keysDb);
  return {
    store,
    keys,
    cipher: new PersonalDataCipher(keys),
    legacyDigestKey: () =>
      legacyDigestKey({ get: async <T extends Record<string, unknown>>(collection: string, id: string) => peekDocument<T>(db, collection, id) }),
    async close() {
      await store.close();
      keysDb.close();
      db.close();
    },
  };
}

function positiveInteger(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const parsed = Number(raw);
  if (!Number.isInteger(parsed) || parsed <= 0) return command.fail(`--${name} must be a positive integer, got ${raw}`);
  return parsed;
}

function parseArguments(argv: string[]): { from: string; to: string; pageSize?: number; maxEvents?: number } {
  const options = command.parse(argv);
  const { from, to } = options;
  if (from === undefined || to === undefined) return command.fail('--from and --to are both required');
  if (from === to) return command.fail('--from and --to are the same');
  for (const [name, location] of [
    ['from', from],
    ['to', to],
  ] as const) {
    // Any other scheme (mongodb://, https://) would be taken for a directory and created as one.
    if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(location) && !isEventStoreUrl(location))
      return command.fail(
        `--${name} ${location}: not an esdb:// or kurrentdb:// connection string (the other side of a migration is an embedded data directory)`,
      );
  }
  return { from, to, pageSize: positiveInteger('page-size', options['page-size']), maxEvents: positiveInteger('max-events', options['max-events']) };
}

async function main(argv: string[]): Promise<number> {
  const args = parseArguments(argv);
  if (!isEventStoreUrl(args.from) && !fs.existsSync(databasePath(args.from))) {
    process.stderr.write(`migrate-events: no database at ${databasePath(args.from)} (--from ${args.from}); nothing was created.\n`);
    return EXIT.NO_INPUT;
  }
  if (!isEventStoreUrl(args.from) && projectorRunsOn(args.from)) {
    process.stderr.write(
      `migrate-events: warning: a service is running on ${args.from}; the events it appends meanwhile are left behind: stop it, then run this again to copy them too.\n`,
    );
  }
  const source = await openStore(args.from);
  const target = await openStore(args.to);
  const started = Date.now();
  let lastReport = 0;
  try {
    const sides = async (): Promise<[DigestKeySide, DigestKeySide]> => [
      { keys: source.keys, legacy: await source.legacyDigestKey() },
      { keys: target.keys, legacy: await target.legacyDigestKey() },
    ];
    // A target with a digest key of its own is refused before anything is copied.
    await digestKeyToCarry(...(await sides()));
    const result = await migrateEvents(source.store, target.store, {
      pageSize: args.pageSize,
      maxEvents: args.maxEvents,
      personalData: { source: source.cipher, target: target.cipher },
      onProgress: ({ copied, position }) => {
        if (Date.now() - lastReport < 1_000) return;
        lastReport = Date.now();
        process.stderr.write(`migrate-events: ${copied} event${copied === 1 ? '' : 's'} copied (source position ${position})\n`);
      },
    });
    // Carried after the copy (a target refused as another log's gets nothing), and read again:
    // a source still served may have made its key meanwhile.
    const digestKey = await digestKeyToCarry(...(await sides()));
    if (digestKey !== null) {
      await carryDigestKey(target.keys, digestKey);
      process.stderr.write("migrate-events: the payment-customer digest key is the source's on the target too\n");
    }
    const from = result.resumedAfter ? `resumed after ${result.resumedAfter.stream}@${result.resumedAfter.revision}` : 'from the beginning';
    process.stderr.write(
      `migrate-events: ${result.copied} event${result.copied === 1 ? '' : 's'} copied ${from} in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
        `${result.complete ? 'the target is up to date' : 'more to copy: run again to continue'}\n`,
    );
    return EXIT.OK;
  } catch (error) {
    // A refusal (the target holds another log) stays one however often it runs; anything else resumes.
    const next = error instanceof MigrationConflictError ? '' : 'Run again to resume.\n';
    process.stderr.write(`migrate-events failed: ${error instanceof Error ? error.message : String(error)}\n${next}`);
    return EXIT.FAILURE;
  } finally {
    await source.close();
    await target.close();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  runScript(command, () => main(process.argv.slice(2)));
}
