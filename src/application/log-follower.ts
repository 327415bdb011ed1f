import type { EventStore } from '../ports/event-store.js';
import type { Logger } from '../ports/logger.js';

const IDLE_POLL_MS = 250;
const MAX_BACKOFF_MS = 30_000;

/**
 * Follows the global log forever: processes a page, sleeps until the store hints at new
 * events (or a poll interval passes), and backs off on failures without ever giving up.
 */
export abstract class LogFollower {
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  /** A hint that came while a page was being processed: the next sleep is skipped. */
  private hinted = false;
  private unwatch: (() => void) | null = null;
  private backoffMs = 0;

  protected constructor(
    protected readonly store: EventStore,
    protected readonly logger: Logger,
  ) {}

  /** Processes the next page; returns whether more is waiting now (LogPage#more). */
  protected abstract processPage(): Promise<boolean>;

  /** Whether to slow down (something is held at a failing event). */
  protected holding(): boolean {
    return false;
  }

  /** Whether it follows the log now (started, not stopped). */
  get following(): boolean {
    return this.running;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.unwatch = this.store.watch(() => this.nudge());
    this.loop = this.run();
  }

  /** Stops after the page in progress. */
  async stop(): Promise<void> {
    this.running = false;
    this.unwatch?.();
    this.wake?.();
    await this.loop;
  }

  /** Wakes the follower now, or, while it processes a page, makes it look again right after. */
  protected nudge(): void {
    if (this.wake) this.wake();
    else this.hinted = true;
  }

  private async run(): Promise<void> {
    while (this.running) {
      let more = false;
      try {
        more = await this.processPage();
        this.backoffMs = 0;
      } catch (error) {
        this.backoffMs = Math.min(MAX_BACKOFF_MS, Math.max(100, this.backoffMs * 2));
        this.logger.error({ err: error, follower: this.constructor.name, retryInMs: this.backoffMs }, 'log follower failed; retrying');
      }
      if (!this.running) break;
      const holding = this.holding();
      if (more && !holding && this.backoffMs === 0) {
        // More is waiting; but the embedded store answers synchronously, so without a turn of
        // the event loop here a long catch-up would starve HTTP requests and timers.
        await new Promise((resolve) => setImmediate(resolve));
        continue;
      }
      await this.sleep(this.backoffMs || (holding ? 1_000 : IDLE_POLL_MS));
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.hinted && !this.holding() && this.backoffMs === 0) {
      // New events may have come while the page was processed: look again after one turn.
      this.hinted = false;
      return new Promise((resolve) => setImmediate(resolve));
    }
    this.hinted = false;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }
}
