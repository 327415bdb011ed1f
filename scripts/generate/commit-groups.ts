import type { SqliteConnection } from '../../src/adapters/sqlite/sqlite-database.js';

/**
 * Commit groups on the embedded backend. Each append is still its own (nested) transaction
 * with its exact expected revision, but many of them share one SQLite commit, so the
 * generator does not wait for one fsync per append (`synchronous=FULL`). A crash loses the
 * open group only; the log stays consistent.
 *
 * A group spans every connection given (the log's and the data keys' files), committed in
 * their order: the data keys first, so no committed event is sealed under a key a crash lost
 * (a key committed without its events is only never used).
 */
export class CommitGroups {
  private open = false;
  private openedAt = 0;

  constructor(
    private readonly connections: readonly SqliteConnection[],
    private readonly maxMs = 250,
  ) {}

  /** Before an action: opens a group when none is open. */
  begin(): void {
    if (this.connections.length === 0 || this.open) return;
    for (const db of this.connections) db.exec('BEGIN IMMEDIATE');
    this.open = true;
    this.openedAt = Date.now();
  }

  /** After an action: commits the group once it is old enough. */
  maybeCommit(): void {
    if (this.open && Date.now() - this.openedAt >= this.maxMs) this.commit();
  }

  commit(): void {
    if (!this.open) return;
    for (const db of this.connections) db.exec('COMMIT');
    this.open = false;
  }

  rollback(): void {
    if (!this.open) return;
    for (const db of this.connections) if (db.inTransaction) db.exec('ROLLBACK');
    this.open = false;
  }
}
