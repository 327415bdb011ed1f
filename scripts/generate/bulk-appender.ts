import { SqliteEventStore } from '../../src/adapters/sqlite/sqlite-event-store.js';
import { type SqliteConnection, writeTransaction } from '../../src/adapters/sqlite/sqlite-database.js';
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

/**
 * The embedded event store for the generator alone: it is the only writer while it runs
 * (CommitGroups holds the write lock), so an append is checked against each stream's last
 * revision kept in memory and inserted at once, synchronously, with no per-append savepoint,
 * queue turn or repeat look-up. The rows are the ones SqliteEventStore writes (same columns,
 * same JSON text, `recorded_at` per append; test/scripts/generate-events.test.ts compares
 * them), and the table's UNIQUE (stream, revision) and UNIQUE id still guard every insert.
 * Reads go to SqliteEventStore on the same connection. A failed group is rolled back and ends
 * the run, so the revisions kept in memory never outlive their rows.
 */
export class BulkAppender implements EventStore {
  private readonly reader: SqliteEventStore;
  private readonly revisions = new Map<string, number>();
  private readonly insert;
  private readonly currentRevision;

  constructor(private readonly db: SqliteConnection) {
    this.reader = new SqliteEventStore(db);
    this.insert = db.prepare('INSERT INTO events (id, stream, revision, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
    this.currentRevision = db.prepare<[string], { revision: number | null }>('SELECT MAX(revision) AS revision FROM events WHERE stream = ?');
  }

  async append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (events.length === 0) throw new Error('append needs at least one event');
    // Outside a commit group (setting up the catalog), each append is its own transaction.
    return this.db.inTransaction ? this.appendNow(stream, events, expected) : writeTransaction(this.db, () => this.appendNow(stream, events, expected));
  }

  private appendNow(stream: string, events: NewEvent[], expected: ExpectedRevision): AppendResult {
    let current = this.revisions.get(stream);
    if (current === undefined) current = this.currentRevision.get(stream)?.revision ?? -1;
    if (!revisionMatches(expected, current)) throw new WrongExpectedRevisionError(stream, expected, current);
    const recordedAt = new Date().toISOString();
    let position = 0n;
    for (const event of events) {
      current += 1;
      position = BigInt(
        this.insert.run(event.id, stream, current, event.type, JSON.stringify(event.data), JSON.stringify(event.metadata), recordedAt).lastInsertRowid,
      );
    }
    this.revisions.set(stream, current);
    return { nextExpectedRevision: current, position };
  }

  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.reader.readStream(stream, options);
  }

  readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.reader.readAll(options);
  }

  readPage(options: PageOptions): Promise<LogPage> {
    return this.reader.readPage(options);
  }

  headPosition(): Promise<bigint | null> {
    return this.reader.headPosition();
  }

  watch(listener: () => void): () => void {
    return this.reader.watch(listener);
  }

  close(): Promise<void> {
    return this.reader.close();
  }
}
