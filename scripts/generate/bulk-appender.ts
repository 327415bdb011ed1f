import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { SqliteEventStore } from '../../src/adapters/sqlite/sqlite-event-store.js';
import type { SqliteConnection } from '../../src/adapters/sqlite/sqlite-database.js';
import {
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type LogPage,
  type NewEvent,
  type PageOptions,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  revisionMatches,
  WrongExpectedRevisionError,
} from '../../src/ports/event-store.js';
import type { GroupMember } from './commit-groups.js';
import type { EventRow, WorkerAnswer, WorkerMessage } from './event-insert-worker.js';

/** Rows sent to the writer thread in one message. */
const ROWS_PER_MESSAGE = 500;

/**
 * A module beside `moduleUrl`, with its extension: `npm run generate-events` runs the sources
 * (tsx, `.ts`), the container image `node dist/scripts/generate-events.js` (`.js`).
 */
export function besideThisFile(name: string, moduleUrl: string): URL {
  return new URL(`./${name}${path.extname(fileURLToPath(moduleUrl))}`, moduleUrl);
}

/**
 * The embedded event store for the generator alone: it is the only writer while it runs. An
 * append is checked against each stream's last revision kept in memory, given the next log
 * positions (counted here from the log's last one, as AUTOINCREMENT would give them) and
 * handed to a writer thread (event-insert-worker.ts), which inserts the rows while the
 * generator decides the next events; a commit group (CommitGroups) ends with the thread's
 * commit. Inserting is about a third of the generator's work on a long log, and this moves it to
 * the machine's other core.
 *
 * The rows are the ones SqliteEventStore writes (same columns, same JSON text, `recorded_at` per
 * append; test/scripts/generate-events.test.ts compares them), and the table's primary key,
 * UNIQUE (stream, revision) and UNIQUE id still guard every insert. A failed insert fails the
 * group's commit: the group is rolled back, and the appender refuses every later append (the
 * revisions and positions it counted are gone with the rows), which ends the run.
 *
 * Reads go to SqliteEventStore on the caller's connection, which sees only committed rows: a
 * stream's events of the open group are added from memory (the generator reads back the
 * position of a claim it has just appended), and a read of the whole log is refused while a
 * group is open. Outside a group (setting up the catalog), each append is committed at once.
 */
export class BulkAppender implements EventStore, GroupMember {
  private readonly reader: SqliteEventStore;
  private readonly revisions = new Map<string, number>();
  /**
   * The streams in the log when the first append came, listed once: a stream neither there nor
   * appended to since is new (this is the only writer), with no look-up. A look-up per new
   * stream (one per generated user) cost about 30 µs on a long log: the thread's commits empty
   * this connection's page cache.
   */
  private existingStreams: Set<string> | null = null;
  private readonly listStreams;
  private readonly currentRevision;
  private readonly lastPosition;
  private nextPosition: number | null = null;
  private readonly worker: Worker;
  private unsent: EventRow[] = [];
  /** Rows of the open group, by stream: the reader cannot see them until the thread commits. */
  private readonly uncommitted = new Map<string, EventRow[]>();
  private readonly waiting: { resolve: () => void; reject: (error: Error) => void }[] = [];
  private inGroup = false;
  private failure: Error | null = null;
  private exited = false;

  constructor(db: SqliteConnection) {
    this.reader = new SqliteEventStore(db);
    this.listStreams = db.prepare<[], string>('SELECT DISTINCT stream FROM events').pluck();
    this.currentRevision = db.prepare<[string], { revision: number | null }>('SELECT MAX(revision) AS revision FROM events WHERE stream = ?');
    this.lastPosition = db.prepare<[], { last: number }>(
      "SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0), COALESCE((SELECT MAX(position) FROM events), 0)) AS last",
    );
    this.worker = new Worker(besideThisFile('event-insert-worker', import.meta.url), {
      workerData: { dataDir: path.dirname(db.name), fileName: path.basename(db.name) },
    });
    this.worker.on('message', (answer: WorkerAnswer) => {
      const waiter = this.waiting.shift();
      if (answer.ok) waiter?.resolve();
      else waiter?.reject(new Error(`Writing the generated events failed: ${answer.error}`));
    });
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', () => {
      this.exited = true;
      this.fail(new Error('The event writer thread has stopped'));
    });
  }

  async append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (events.length === 0) throw new Error('append needs at least one event');
    const result = this.appendNow(stream, events, expected);
    if (!this.inGroup) await this.commit();
    return result;
  }

  private appendNow(stream: string, events: NewEvent[], expected: ExpectedRevision): AppendResult {
    if (this.failure !== null) throw this.failure;
    this.existingStreams ??= new Set(this.listStreams.all());
    let current = this.revisions.get(stream) ?? (this.existingStreams.has(stream) ? (this.currentRevision.get(stream)?.revision ?? -1) : -1);
    if (!revisionMatches(expected, current)) throw new WrongExpectedRevisionError(stream, expected, current);
    let position = this.nextPosition ?? this.lastPosition.get()!.last + 1;
    const recordedAt = new Date().toISOString();
    const ofStream = this.uncommitted.get(stream) ?? [];
    this.uncommitted.set(stream, ofStream);
    for (const event of events) {
      current += 1;
      const row: EventRow = [
        position,
        event.id,
        stream,
        current,
        event.type,
        JSON.stringify(event.data),
        JSON.stringify(event.metadata),
        event.recordedAt?.toISOString() ?? recordedAt,
      ];
      this.unsent.push(row);
      ofStream.push(row);
      position += 1;
    }
    this.nextPosition = position;
    this.revisions.set(stream, current);
    if (this.unsent.length >= ROWS_PER_MESSAGE) this.send();
    return { nextExpectedRevision: current, position: BigInt(position - 1) };
  }

  begin(): void {
    this.inGroup = true;
  }

  /** Ends the group: the thread inserts what it has not yet and commits. */
  async commit(): Promise<void> {
    this.inGroup = false;
    if (this.failure !== null) throw this.failure;
    this.send();
    try {
      await this.ask({ kind: 'commit' });
    } catch (error) {
      this.fail(error as Error);
      throw error;
    }
    this.uncommitted.clear();
  }

  async rollback(): Promise<void> {
    this.inGroup = false;
    this.unsent = [];
    this.uncommitted.clear();
    this.fail(new Error('The generated events of a rolled back group are gone: start a new run'));
    await this.ask({ kind: 'rollback' }).catch(() => {});
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const rows = this.uncommitted.get(stream);
    if (rows === undefined || rows.length === 0) return this.reader.readStream(stream, options);
    if (options.afterPosition !== undefined || options.beforePosition !== undefined)
      throw new Error('BulkAppender reads a stream by position only between groups');
    // The group's rows are the stream's last ones (the only writer appends at its end); the
    // store answers for those before them.
    const firstUncommitted = rows[0]![3];
    const backwards = options.direction === 'backwards';
    const from = options.fromRevision ?? (backwards ? Number.MAX_SAFE_INTEGER : 0);
    const limit = options.maxCount ?? Number.POSITIVE_INFINITY;
    const inMemory = rows.filter(([, , , revision]) => (backwards ? revision <= from : revision >= from)).map(recordedOf);
    const stored = async (fromRevision: number) =>
      (await this.reader.readStream(stream, { ...options, fromRevision })).filter((event) => event.revision < firstUncommitted);
    const events = backwards
      ? [...inMemory.reverse(), ...(inMemory.length >= limit ? [] : await stored(Math.min(from, firstUncommitted - 1)))]
      : [...(from >= firstUncommitted ? [] : await stored(from)), ...inMemory];
    return events.slice(0, limit);
  }

  readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    this.refuseInGroup();
    return this.reader.readAll(options);
  }

  readPage(options: PageOptions): Promise<LogPage> {
    this.refuseInGroup();
    return this.reader.readPage(options);
  }

  headPosition(): Promise<bigint | null> {
    this.refuseInGroup();
    return this.reader.headPosition();
  }

  watch(listener: () => void): () => void {
    return this.reader.watch(listener);
  }

  /** Stops the writer thread (rolling back what it has not committed) and closes the reader. */
  async close(): Promise<void> {
    if (!this.exited) await this.ask({ kind: 'close' }).catch(() => {});
    await this.reader.close();
  }

  private refuseInGroup(): void {
    if (this.uncommitted.size > 0) throw new Error('BulkAppender reads the whole log only between groups');
  }

  private send(): void {
    if (this.unsent.length === 0) return;
    this.post({ kind: 'rows', rows: this.unsent });
    this.unsent = [];
  }

  private ask(message: WorkerMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.post(message);
    });
  }

  private post(message: WorkerMessage): void {
    this.worker.postMessage(message);
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiter of this.waiting.splice(0)) waiter.reject(error);
  }
}

function recordedOf([position, id, stream, revision, type, data, metadata, recordedAt]: EventRow): RecordedEvent {
  return { id, stream, revision, type, data: JSON.parse(data), metadata: JSON.parse(metadata), position: BigInt(position), recordedAt: new Date(recordedAt) };
}
