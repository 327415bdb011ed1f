import { EventEmitter } from 'node:events';
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
  type RecordedEventJson,
  revisionMatches,
  WrongExpectedRevisionError,
} from '../../ports/event-store.js';
import { guardSqlite, STABLE_PARAM, type SqliteConnection, StatementCache, writeTransaction } from './sqlite-database.js';
import { type LogSyncer, SharedSyncs, walSyncer } from './wal-sync.js';

interface EventRow {
  position: number;
  id: string;
  stream: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
  recorded_at: string;
}

function toRecorded(row: EventRow): RecordedEvent {
  return {
    position: BigInt(row.position),
    id: row.id,
    stream: row.stream,
    revision: row.revision,
    type: row.type,
    data: JSON.parse(row.data) as Record<string, unknown>,
    metadata: JSON.parse(row.metadata) as RecordedEvent['metadata'],
    recordedAt: new Date(row.recorded_at),
  };
}

interface PendingAppend {
  stream: string;
  events: NewEvent[];
  expected: ExpectedRevision;
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
}

/**
 * Positions a follower's page reads at most: about 5 MB of rows, a few milliseconds. Pages stop
 * there even when they found fewer events than asked for.
 */
const SCAN_WINDOW = 10_000;

/**
 * A stream prefix or a set of types with fewer events than this is read through its index
 * (readAll): at most this many index entries, whatever the log's length. One with more is
 * scanned for in position order, where it is dense enough that a page fills quickly.
 */
const SPARSE_FILTER_EVENTS = 10_000;

/**
 * The least string above every string that starts with `prefix` (its last code point raised by
 * one; SQLite compares text in code point order), or null when there is none (a prefix of
 * U+10FFFF only).
 */
export function prefixUpperBound(prefix: string): string | null {
  const points = Array.from(prefix, (char) => char.codePointAt(0)!);
  while (points.length > 0) {
    const last = points.pop()!;
    if (last < 0x10ffff) return String.fromCodePoint(...points, last + 1 === 0xd800 ? 0xe000 : last + 1);
  }
  return null;
}

export interface SqliteEventStoreOptions {
  /** Positions one follower's page reads at most (readPage). */
  scanWindow?: number;
  /** Events under which a stream prefix or a set of types is read through its index (readAll). */
  sparseFilterEvents?: number;
  /** How commits are made durable (tests inject failures and delays); the WAL's fdatasync by default. */
  syncer?: LogSyncer;
}

/** How often a watched store looks for commits another process made to the file. */
const FOREIGN_COMMITS_POLL_MS = 10;

export class SqliteEventStore implements EventStore {
  private readonly appended = new EventEmitter().setMaxListeners(0);
  /** While anyone watches: the timer looking for other processes' commits (`watch`). */
  private foreignCommits: NodeJS.Timeout | null = null;
  private readonly pending: PendingAppend[] = [];
  private readonly statements;
  private readonly cache: StatementCache;
  private readonly scanWindow: number;
  private readonly sparseFilterEvents: number;
  private readonly syncs: SharedSyncs;
  /**
   * Durable: every position up to it was in the file before a sync of the WAL that has
   * completed started (whoever wrote it: this process or another on the same file).
   * `syncingThrough`: the head a sync under way will make durable.
   */
  private durableThrough = 0;
  private syncingThrough = 0;

  constructor(
    private readonly db: SqliteConnection,
    options: SqliteEventStoreOptions = {},
  ) {
    this.scanWindow = options.scanWindow ?? SCAN_WINDOW;
    this.sparseFilterEvents = options.sparseFilterEvents ?? SPARSE_FILTER_EVENTS;
    this.syncs = new SharedSyncs(options.syncer ?? walSyncer(db), 'the event log');
    this.cache = new StatementCache(db);
    this.statements = {
      currentRevision: db.prepare<[string], { revision: number | null }>(`SELECT MAX(revision) AS revision FROM events WHERE stream = ${STABLE_PARAM}`),
      byId: db.prepare<[string], EventRow>('SELECT * FROM events WHERE id = ?'),
      insert: db.prepare('INSERT INTO events (id, stream, revision, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)'),
      head: db.prepare<[], { position: number | null }>('SELECT MAX(position) AS position FROM events'),
      dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
    };
  }

  /**
   * Appends queue for one turn of the event loop and are written together in one transaction
   * (group commit). Each append runs in its own savepoint, so a conflict or a repeat concerns
   * that append alone, exactly as if they ran one by one. The commit does not wait for the disk:
   * its appends are answered once a sync of the WAL that started after it is done, and commits
   * made while a sync runs share the next one (`syncThrough`). Followers see the events only then
   * (`readPage`), so no read model, reaction or webhook acts on an event a power cut could take
   * back.
   */
  append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (events.length === 0) return Promise.reject(new Error('append needs at least one event'));
    return new Promise((resolve, reject) => {
      this.pending.push({ stream, events, expected, resolve, reject });
      if (this.pending.length === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const group = this.pending.splice(0);
    const failure = this.syncs.failure;
    if (failure) {
      for (const append of group) append.reject(failure);
      return;
    }
    let outcomes: ({ ok: true; result: AppendResult } | { ok: false; error: unknown })[];
    try {
      outcomes = writeTransaction(this.db, () =>
        group.map((append) => {
          try {
            return { ok: true as const, ...guardSqlite(() => this.appendOne(append.stream, append.events, append.expected)) };
          } catch (error) {
            return { ok: false as const, error };
          }
        }),
      );
    } catch (error) {
      for (const append of group) append.reject(error);
      return;
    }
    const answer = () => {
      for (const [index, outcome] of outcomes.entries()) {
        if (outcome.ok) group[index]!.resolve(outcome.result);
        else group[index]!.reject(outcome.error);
      }
    };
    const written = outcomes.reduce((head, outcome) => (outcome.ok ? Math.max(head, Number(outcome.result.position)) : head), 0);
    // A repeat answers with events that may not be synced yet either.
    if (written <= this.durableThrough) {
      answer();
      return;
    }
    this.syncThrough(written).then(answer, (error: unknown) => {
      for (const append of group) append.reject(error);
    });
  }

  /**
   * Resolves once every position up to `head` is durable: after a sync that starts now. The
   * followers are told then; until then `readPage` does not show what is beyond the durable head.
   */
  private syncThrough(head: number): Promise<void> {
    this.syncingThrough = Math.max(this.syncingThrough, head);
    return this.syncs.afterCommit().then(() => {
      if (head > this.durableThrough) {
        this.durableThrough = head;
        this.appended.emit('appended');
      }
    });
  }

  /**
   * One append inside the group's transaction. The expected revision says where the events go;
   * the table's UNIQUE (stream, revision) and UNIQUE id catch a stream that moved meanwhile and
   * a repeat of written events, which are then told apart (`repeatOrConflict`). So the common
   * append reads nothing first for `no_stream` and only the stream's last revision otherwise.
   * One event needs no savepoint: a failed INSERT undoes itself (SQLite rolls back the statement,
   * not the group). Several run in a savepoint, so a failure part-way leaves none of them.
   */
  private appendOne(stream: string, events: NewEvent[], expected: ExpectedRevision): { result: AppendResult } {
    const current = expected === 'no_stream' ? -1 : (this.statements.currentRevision.get(stream)?.revision ?? -1);
    if (!revisionMatches(expected, current)) return this.repeatOrConflict(stream, events, expected);
    try {
      const position = events.length === 1 ? this.insertFrom(stream, events, current) : this.db.transaction(() => this.insertFrom(stream, events, current))();
      return { result: { nextExpectedRevision: current + events.length, position } };
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_CONSTRAINT_UNIQUE') throw error;
      return this.repeatOrConflict(stream, events, expected);
    }
  }

  /** Inserts the events after revision `current`; the last one's position. */
  private insertFrom(stream: string, events: NewEvent[], current: number): bigint {
    const recordedAt = new Date().toISOString();
    let position = 0n;
    for (const [index, event] of events.entries()) {
      const info = this.statements.insert.run(
        event.id,
        stream,
        current + 1 + index,
        event.type,
        JSON.stringify(event.data),
        JSON.stringify(event.metadata),
        event.recordedAt?.toISOString() ?? recordedAt,
      );
      position = BigInt(info.lastInsertRowid);
    }
    return position;
  }

  /** The append did not fit where it expected: the original result when it repeats written events, else a conflict. */
  private repeatOrConflict(stream: string, events: NewEvent[], expected: ExpectedRevision): { result: AppendResult } {
    const repeated = this.findRepeat(stream, events, expected);
    if (repeated) return { result: repeated };
    throw new WrongExpectedRevisionError(stream, expected, this.statements.currentRevision.get(stream)?.revision ?? -1);
  }

  /**
   * Idempotent re-append: when the same event ids were already written to this stream
   * right after the expected revision, answer with the original result and write nothing.
   */
  private findRepeat(stream: string, events: NewEvent[], expected: ExpectedRevision): AppendResult | null {
    const first = this.statements.byId.get(events[0]!.id);
    if (!first) return null;
    const rows = events.map((event) => this.statements.byId.get(event.id));
    const consecutive = rows.every((row, index) => row !== undefined && row.stream === stream && row.revision === first.revision + index);
    const startsWhereExpected = revisionMatches(expected, first.revision - 1);
    if (!consecutive || !startsWhereExpected) {
      const current = this.statements.currentRevision.get(stream)?.revision ?? -1;
      throw new WrongExpectedRevisionError(stream, expected, current);
    }
    const last = rows[rows.length - 1]!;
    const byAnother = rows.some((row, index) => row!.metadata !== JSON.stringify(events[index]!.metadata));
    return { nextExpectedRevision: last.revision, position: BigInt(last.position), ...(byAnother ? { writtenByAnother: true as const } : {}) };
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const backwards = options.direction === 'backwards';
    const limit = options.maxCount ?? -1;
    const from = options.fromRevision ?? (backwards ? Number.MAX_SAFE_INTEGER : 0);
    const past = backwards ? options.beforePosition : options.afterPosition;
    if (past !== undefined) return this.readStreamPast(stream, past, backwards, from, limit);
    const rows = guardSqlite(() => this.cache.get<[string, number, number], EventRow>(streamSql(backwards, false)).all(stream, from, limit));
    return rows.map(toRecorded);
  }

  /**
   * The stream's events past a log position: after it going forwards, before it going backwards.
   * Past one of its own events (the usual cursor, a page's `next_after`) the next revision is
   * found by the primary key, so a page costs the same deep in a long stream as at its start;
   * past another position, the stream's index is scanned for it.
   */
  private readStreamPast(stream: string, past: bigint, backwards: boolean, fromRevision: number, limit: number): RecordedEvent[] {
    return guardSqlite(() => {
      const own = this.cache
        .get<[bigint, string], { revision: number }>(`SELECT revision FROM events WHERE position = ${STABLE_PARAM} AND stream = ${STABLE_PARAM}`)
        .get(past, stream);
      const rows = own
        ? this.cache
            .get<[string, number, number], EventRow>(streamSql(backwards, false))
            .all(stream, backwards ? Math.min(fromRevision, own.revision - 1) : Math.max(fromRevision, own.revision + 1), limit)
        : this.cache.get<[string, number, bigint, number], EventRow>(streamSql(backwards, true)).all(stream, fromRevision, past, limit);
      return rows.map(toRecorded);
    });
  }

  async readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.readAllRows(options).map(toRecorded);
  }

  async readAllJson(options: ReadAllOptions): Promise<RecordedEventJson[]> {
    // Rows as arrays (no object per row), columns in this order.
    const rows = this.readAllRows(options, true) as unknown as [number, string, string, number, string, string, string, string][];
    return rows.map(([position, id, stream, revision, type, data, metadata, recordedAt]) => ({
      position: BigInt(position),
      id,
      stream,
      revision,
      type,
      dataJson: data,
      metadataJson: metadata,
      recordedAtIso: recordedAt,
    }));
  }

  /**
   * A page of the log in position order. A filter that holds few events in all (one affiliate's
   * streams, two rare types) is read through the index that finds them, and its events sorted:
   * the page costs what the filter holds, not what the log holds after `after`. Otherwise the log
   * is read in position order and the other events skipped, which ends as soon as the page is
   * full: one type through events_by_type, a prefix (`user-`) or several types by a scan. Which
   * one, the index says (a count it stops at `sparseFilterEvents`).
   */
  private readAllRows({ after, limit, filter }: ReadAllOptions, raw = false): EventRow[] {
    const prefixes = filter?.streamPrefixes ?? [];
    const types = filter?.types ?? [];
    const sparse = this.sparseFilter(prefixes, types);
    // Through the sparse filter's index: `+position` keeps the planner off the position order.
    const clauses = [sparse === null ? 'position > ?' : '+position > ?'];
    const params: (string | number)[] = [after === null ? 0 : Number(after)];
    if (sparse !== null) {
      clauses.push(sparse.where);
      params.push(...sparse.params);
    }
    if (prefixes.length > 0 && sparse?.by !== 'stream') {
      clauses.push(`(${prefixes.map(() => 'substr(stream, 1, ?) = ?').join(' OR ')})`);
      // substr counts characters (code points), not UTF-16 units: an emoji is one.
      for (const prefix of prefixes) params.push(Array.from(prefix).length, prefix);
    }
    if (types.length === 1 && sparse === null) {
      // One type (an analyst's query, a rare type): events_by_type holds it in position order.
      clauses.push(`type = ${STABLE_PARAM}`);
      params.push(types[0]!);
    } else if (types.length > 0 && sparse?.by !== 'type') {
      // Checked row by row (`+type` keeps the planner off events_by_type, which would gather every
      // event of these types after `after` and sort them, so a page would cost as much as the rest of the log).
      clauses.push(`+type IN (${types.map(() => '?').join(', ')})`);
      params.push(...types);
    }
    params.push(limit);
    const columns = raw ? 'position, id, stream, revision, type, data, metadata, recorded_at' : '*';
    const sql = `SELECT ${columns} FROM events WHERE ${clauses.join(' AND ')} ORDER BY position ASC LIMIT ${STABLE_PARAM}`;
    return guardSqlite(() => {
      const statement = this.cache.get<(string | number)[], EventRow>(sql);
      // A statement of its own (its SQL differs), so raw mode never leaks to other readers.
      if (raw) statement.raw(true);
      return statement.all(...params);
    });
  }

  /**
   * The condition of an index that finds every event of the filter, when they are fewer than
   * `sparseFilterEvents`: the (stream, revision) index for one prefix, events_by_type for several
   * types. Null when the filter has no such part or it holds more.
   */
  private sparseFilter(prefixes: string[], types: string[]): { by: 'stream' | 'type'; where: string; params: string[] } | null {
    const candidates: { by: 'stream' | 'type'; where: string; params: string[] }[] = [];
    if (prefixes.length === 1) {
      const upper = prefixUpperBound(prefixes[0]!);
      candidates.push(
        upper === null
          ? { by: 'stream', where: 'stream >= ?', params: [prefixes[0]!] }
          : { by: 'stream', where: 'stream >= ? AND stream < ?', params: [prefixes[0]!, upper] },
      );
    }
    if (types.length > 1) candidates.push({ by: 'type', where: `type IN (${types.map(() => '?').join(', ')})`, params: types });
    return (
      candidates.find((candidate) =>
        guardSqlite(() => {
          const counted = this.cache
            .get<(string | number)[], { n: number }>(`SELECT count(*) AS n FROM (SELECT 1 FROM events WHERE ${candidate.where} LIMIT ?)`)
            .get(...candidate.params, this.sparseFilterEvents);
          return counted!.n < this.sparseFilterEvents;
        }),
      ) ?? null
    );
  }

  /**
   * Reads at most `scanWindow` positions past `after`. A follower's types are looked for in
   * position order, as `readAll` does for several types, so without a bound, a follower far
   * behind whose types are rare would read the rest of the log in one statement, the event loop
   * held meanwhile. Positions are consecutive here (AUTOINCREMENT, events are never deleted), so the
   * window bounds the rows read. The head is read first: every event up to it is visible to the
   * scan that follows, and none after it is returned.
   */
  async readPage({ after, limit, types }: PageOptions): Promise<LogPage> {
    return guardSqlite(() => {
      // Events not known durable yet are not shown, whoever wrote them (another process on the
      // file, or an earlier run that crashed before its sync): a sync is started for them, and
      // the followers are told when it is done.
      const committed = this.statements.head.get()?.position ?? null;
      if (committed !== null && committed > this.syncingThrough) void this.syncThrough(committed).catch(() => {});
      const head = committed === null ? null : Math.min(committed, this.durableThrough) || null;
      const from = after === null ? 0 : Number(after);
      if (head === null || head <= from) return { events: [], through: after ?? (head === null ? null : BigInt(head)), more: false };
      if (types.length === 0) return { events: [], through: BigInt(head), more: false };
      const upTo = Math.min(head, from + this.scanWindow);
      const rows = this.cache
        .get<(string | number)[], EventRow>(
          `SELECT * FROM events WHERE position > ? AND position <= ? AND +type IN (${types.map(() => '?').join(', ')}) ORDER BY position ASC LIMIT ${STABLE_PARAM}`,
        )
        .all(from, upTo, ...types, limit);
      const events = rows.map(toRecorded);
      if (rows.length === limit) return { events, through: events[events.length - 1]!.position, more: true };
      return { events, through: BigInt(upTo), more: upTo < head };
    });
  }

  /** Why no write can be made durable any more (a failed sync, the file replaced), until a restart; null while writes work. */
  writeFailure(): Error | null {
    return this.syncs.failure;
  }

  async headPosition(): Promise<bigint | null> {
    const row = guardSqlite(() => this.statements.head.get());
    return row?.position == null ? null : BigInt(row.position);
  }

  /**
   * Tells `listener` of this process's appends once they are durable, and of commits another
   * process made to the file (an API instance appending next to a projector process): while
   * anyone watches, SQLite's `data_version`, which moves when another connection commits, is
   * looked at every 10 ms (a statement that reads no page). Either is a hint: the follower reads
   * the log, which syncs what another process wrote before showing it (`readPage`).
   */
  watch(listener: () => void): () => void {
    this.appended.on('appended', listener);
    this.watchForeignCommits();
    return () => {
      this.appended.off('appended', listener);
      if (this.appended.listenerCount('appended') === 0) this.stopWatchingForeignCommits();
    };
  }

  private watchForeignCommits(): void {
    if (this.foreignCommits !== null) return;
    let seen: number | null = null;
    const look = () => {
      try {
        const version = this.statements.dataVersion.get()!;
        if (seen !== null && version !== seen) this.appended.emit('appended');
        seen = version;
      } catch {
        // A hint only: the followers' own reads report a store that went away. A closed
        // connection stays closed: stop looking.
        if (!this.db.open) this.stopWatchingForeignCommits();
      }
    };
    look();
    this.foreignCommits = setInterval(look, FOREIGN_COMMITS_POLL_MS).unref();
  }

  private stopWatchingForeignCommits(): void {
    if (this.foreignCommits !== null) clearInterval(this.foreignCommits);
    this.foreignCommits = null;
  }

  async close(): Promise<void> {
    this.stopWatchingForeignCommits();
    await this.syncs.close();
    this.appended.removeAllListeners();
  }
}

/** One stream's events from a revision (at most LIMIT), forwards or backwards, and past a log position when `pastPosition`. */
function streamSql(backwards: boolean, pastPosition: boolean): string {
  const [fromRevision, pastIt, order] = backwards ? ['revision <= ?', 'position < ?', 'DESC'] : ['revision >= ?', 'position > ?', 'ASC'];
  return `SELECT * FROM events WHERE stream = ${STABLE_PARAM} AND ${fromRevision}${pastPosition ? ` AND ${pastIt}` : ''} ORDER BY revision ${order} LIMIT ${STABLE_PARAM}`;
}
