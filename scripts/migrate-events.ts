/**
 * Copies the event log from one backend to another, in commit order, keeping every event's id,
 * type, data and metadata, and every stream's revisions (each append names the exact expected
 * revision the source had). Resumable: it finds the last event the target holds, locates that
 * same event in the source and carries on after it, so an interrupted run is simply run again.
 *
 *   npm run migrate-events -- --from ./data --to "esdb://localhost:2113?tls=false"
 *
 * `--from` / `--to`: an `esdb://` or `kurrentdb://` connection string, or an embedded data
 * directory. Read models are not copied: projectors rebuild them from the migrated log.
 * Progress goes to stderr.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { EventStoreDbEventStore } from '../src/adapters/eventstoredb/eventstoredb-event-store.js';
import { openSqlite } from '../src/adapters/sqlite/sqlite-database.js';
import { SqliteEventStore } from '../src/adapters/sqlite/sqlite-event-store.js';
import type { EventStore, ExpectedRevision, NewEvent, RecordedEvent } from '../src/ports/event-store.js';

export interface MigrationOptions {
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

function toNewEvent(event: RecordedEvent): NewEvent {
  return { id: event.id, type: event.type, data: event.data, metadata: event.metadata };
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
      const result = await target.append(first.stream, group.map(toNewEvent), expectedBefore(first));
      if (result.nextExpectedRevision !== last.revision) {
        throw new MigrationConflictError(
          `Stream ${first.stream}: the target reached revision ${result.nextExpectedRevision}, the source has ${last.revision}`,
        );
      }
      copied += group.length;
      cursor = last.position;
      options.onProgress?.({ copied, position: last.position });
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Command line

interface OpenedStore {
  store: EventStore;
  close(): Promise<void>;
}

function isConnectionString(location: string): boolean {
  return /^(esdb|esdb\+discover|kurrentdb|kurrentdb\+discover|kdb):\/\//.test(location);
}

function openStore(location: string, role: 'source' | 'target'): OpenedStore {
  if (isConnectionString(location)) {
    const store = EventStoreDbEventStore.connect(location);
    return { store, close: () => store.close() };
  }
  if (role === 'source' && !fs.existsSync(path.join(location, 'referrals.db'))) {
    throw new Error(`No embedded database at ${path.resolve(location)} (expected referrals.db there)`);
  }
  const db = openSqlite(location);
  const store = new SqliteEventStore(db);
  return {
    store,
    async close() {
      await store.close();
      db.close();
    },
  };
}

function parseArguments(argv: string[]): { from: string; to: string; pageSize?: number; maxEvents?: number } {
  const values = new Map<string, string>();
  for (let index = 0; index < argv.length; index += 1) {
    const flag = argv[index]!;
    const value = argv[index + 1];
    if (!flag.startsWith('--') || value === undefined) throw new Error(`Unexpected argument ${flag}`);
    values.set(flag.slice(2), value);
    index += 1;
  }
  const from = values.get('from');
  const to = values.get('to');
  if (!from || !to) throw new Error('Usage: migrate-events --from <esdb://…|data dir> --to <esdb://…|data dir> [--page-size N] [--max-events N]');
  if (from === to) throw new Error('--from and --to are the same');
  const number = (name: string) => {
    const raw = values.get(name);
    if (raw === undefined) return undefined;
    const parsed = Number(raw);
    if (!Number.isInteger(parsed) || parsed <= 0) throw new Error(`--${name} must be a positive integer`);
    return parsed;
  };
  return { from, to, pageSize: number('page-size'), maxEvents: number('max-events') };
}

async function main(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseArguments(argv);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return 64;
  }
  const source = openStore(args.from, 'source');
  const target = openStore(args.to, 'target');
  const started = Date.now();
  let lastReport = 0;
  try {
    const result = await migrateEvents(source.store, target.store, {
      pageSize: args.pageSize,
      maxEvents: args.maxEvents,
      onProgress: ({ copied, position }) => {
        if (Date.now() - lastReport < 1_000) return;
        lastReport = Date.now();
        process.stderr.write(`migrate-events: ${copied} events copied (source position ${position})\n`);
      },
    });
    const from = result.resumedAfter ? `resumed after ${result.resumedAfter.stream}@${result.resumedAfter.revision}` : 'from the beginning';
    process.stderr.write(
      `migrate-events: ${result.copied} events copied ${from} in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
        `${result.complete ? 'the target is up to date' : 'more to copy: run again to continue'}\n`,
    );
    return 0;
  } catch (error) {
    process.stderr.write(`migrate-events failed: ${error instanceof Error ? error.message : String(error)}\nRun again to resume.\n`);
    return 1;
  } finally {
    await source.close();
    await target.close();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`migrate-events failed: ${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );
}
