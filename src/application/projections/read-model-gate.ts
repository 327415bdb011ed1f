/**
 * Lets an answer built from several read-model reads see them at one moment, against this
 * process's projector.
 *
 * A user's view reads the user document, then its entries, its recently expired entries, its
 * program and rewards, each its own read. The projector commits a page between two of them
 * when both run in the same turn of the event loop, which is the usual case under load: a
 * commit releases the requests that waited for it, and the runner goes on to its next page
 * while they read. An expiry that sets an entry's `expired` and adds its kind to
 * `expired_kinds` could then leave the entry out of both lists of one answer.
 *
 * Reads run together; a commit waits until the reads under way have ended, and reads asked for
 * while a commit waits go after it (so a steady flow of reads cannot hold the projector back).
 * Reads of the embedded store take microseconds, so a commit waits that long at most.
 * A projector in another process (split deployments, MongoDB) is not held: there an answer can
 * still pair documents of two moments, as every multi-document read without a snapshot can.
 */
export class ReadModelGate {
  private reading = 0;
  /** Settles when the commit waiting or running ends; null when none does. */
  private committing: Promise<void> | null = null;
  /** Tells the waiting commit that the last read ended. */
  private readsEnded: (() => void) | null = null;

  async read<T>(read: () => Promise<T>): Promise<T> {
    while (this.committing) await this.committing;
    this.reading += 1;
    try {
      return await read();
    } finally {
      this.reading -= 1;
      if (this.reading === 0) this.readsEnded?.();
    }
  }

  async commit<T>(commit: () => Promise<T>): Promise<T> {
    while (this.committing) await this.committing;
    let ended!: () => void;
    this.committing = new Promise<void>((resolve) => (ended = resolve));
    try {
      if (this.reading > 0) await new Promise<void>((resolve) => (this.readsEnded = resolve));
      this.readsEnded = null;
      return await commit();
    } finally {
      this.committing = null;
      ended();
    }
  }
}
