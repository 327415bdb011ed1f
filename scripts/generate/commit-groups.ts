import type { SqliteConnection } from '../../src/adapters/sqlite/sqlite-database.js';

/** One participant of a commit group: a connection (sqliteMember), or the event writer (BulkAppender). */
export interface GroupMember {
  begin(): void;
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

/** A SQLite connection as a group member: its own transaction, committed when the group is. */
export function sqliteMember(db: SqliteConnection): GroupMember {
  return {
    begin: () => db.exec('BEGIN IMMEDIATE'),
    commit: async () => {
      db.exec('COMMIT');
    },
    rollback: async () => {
      if (db.inTransaction) db.exec('ROLLBACK');
    },
  };
}

/** What a group spans: the new data keys, and the events sealed under them. */
export interface GroupWriters {
  dataKeys: GroupMember;
  events: GroupMember;
}

/**
 * Commit groups on the embedded backend. Each append is still checked against its exact
 * expected revision, but many of them share one SQLite commit, so the generator does not wait
 * for one commit per append. A crash loses the open group only; the log stays consistent.
 *
 * The data keys are committed first, and the events only once that has succeeded: no committed
 * event is sealed under a key a crash lost (a key committed without its events is only never
 * used). Without writers (another backend), groups do nothing.
 */
export class CommitGroups {
  private readonly members: readonly GroupMember[];
  private open = false;
  private openedAt = 0;

  constructor(
    writers: GroupWriters | null,
    private readonly maxMs = 250,
  ) {
    this.members = writers === null ? [] : [writers.dataKeys, writers.events];
  }

  /** Before an action: opens a group when none is open. */
  begin(): void {
    if (this.members.length === 0 || this.open) return;
    for (const member of this.members) member.begin();
    this.open = true;
    this.openedAt = Date.now();
  }

  /** After an action: commits the group once it is old enough. */
  async maybeCommit(): Promise<void> {
    if (this.open && Date.now() - this.openedAt >= this.maxMs) await this.commit();
  }

  /** Commits the data keys, then the events; when one fails, it and those after it are rolled back. */
  async commit(): Promise<void> {
    if (!this.open) return;
    this.open = false;
    for (const [index, member] of this.members.entries()) {
      try {
        await member.commit();
      } catch (error) {
        for (const rest of this.members.slice(index)) await rest.rollback().catch(() => {});
        throw error;
      }
    }
  }

  async rollback(): Promise<void> {
    if (!this.open) return;
    this.open = false;
    for (const member of this.members) await member.rollback();
  }
}
