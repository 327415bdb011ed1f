import fs from 'node:fs';
import { pino } from 'pino';
import type { Logger } from '../ports/logger.js';

/** Lines waiting for a stdout that does not take them, at most: past this, new lines are dropped (and counted). */
const MAX_UNWRITTEN_BYTES = 8 * 1024 * 1024;
/** How long the exit waits for a stdout that does not take the last lines. */
const EXIT_FLUSH_MS = 2000;
/** How long a stdout that took nothing is left before it is offered the waiting lines again. */
const RETRY_MS = 20;
/** Lines handed to one write system call, at most. */
const LINES_PER_WRITE = 256;

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Log lines on a descriptor that may not take them: each is written at once when it can be
 * (`writev` on the main thread, never waiting), else queued and offered again every RETRY_MS.
 * Node opens a pipe or socket stdout non-blocking, so a reader that stops reading costs the
 * service no wait: lines queue up to MAX_UNWRITTEN_BYTES, later ones are dropped and counted
 * (`dropped` reports them once lines go out again), and the exit offers the rest for
 * EXIT_FLUSH_MS, then leaves without them. Everything is written synchronously: a line is either
 * written or still queued, never half-way in a write the exit cannot see.
 */
class StdoutLines {
  private readonly queue: Buffer[] = [];
  private queuedBytes = 0;
  private droppedLines = 0;
  private retry: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly fd: number,
    private readonly dropped: (count: number) => void,
  ) {}

  write(line: string): boolean {
    if (this.closed) return true;
    const bytes = Buffer.from(line);
    if (this.queuedBytes + bytes.length > MAX_UNWRITTEN_BYTES) {
      this.droppedLines += 1;
      return true;
    }
    this.queue.push(bytes);
    this.queuedBytes += bytes.length;
    if (this.retry === null) this.offer();
    return true;
  }

  /** Writes what the descriptor takes now; true when nothing is left waiting. */
  private writeWhatFits(): boolean {
    while (this.queue.length > 0 && !this.closed) {
      let written: number;
      try {
        written = fs.writevSync(this.fd, this.queue.slice(0, LINES_PER_WRITE));
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EAGAIN' || code === 'EWOULDBLOCK') return false;
        // EPIPE (the reader is gone) or worse: logging ends, the service does not.
        this.closed = true;
        this.queue.length = 0;
        this.queuedBytes = 0;
        return true;
      }
      this.queuedBytes -= written;
      while (written > 0) {
        const first = this.queue[0]!;
        if (written >= first.length) {
          this.queue.shift();
          written -= first.length;
        } else {
          this.queue[0] = first.subarray(written);
          written = 0;
        }
      }
    }
    return true;
  }

  private offer(): void {
    this.retry = null;
    if (!this.writeWhatFits()) {
      this.retry = setTimeout(() => this.offer(), RETRY_MS).unref();
      return;
    }
    this.reportDropped();
  }

  private reportDropped(): void {
    if (this.droppedLines === 0) return;
    const count = this.droppedLines;
    this.droppedLines = 0;
    this.dropped(count);
  }

  /** At exit: offers the waiting lines (and the count of those dropped) until written or EXIT_FLUSH_MS has passed. */
  flushBeforeExit(): void {
    const deadline = Date.now() + EXIT_FLUSH_MS;
    const written = () => {
      while (!this.writeWhatFits()) {
        if (Date.now() >= deadline) return false;
        Atomics.wait(pause, 0, 0, 5);
      }
      return true;
    };
    if (!written()) return;
    this.reportDropped();
    written();
  }
}

/**
 * Structured JSON logs on stdout. A stdout that is not read, or read too slowly (a supervisor or
 * a script that keeps the pipe and stops reading it), never stops the service or its exit
 * (StdoutLines). A `warn` line says how many lines were dropped, once lines go out again.
 */
export function createLogger(level: string): Logger & pino.Logger {
  let logger: pino.Logger | null = null;
  const stdout = new StdoutLines(process.stdout.fd, (count) => logger?.warn({ dropped: count }, `${count} log lines dropped: stdout was not read`));
  logger = pino({ level, base: { service: 'referral-rewards' }, timestamp: pino.stdTimeFunctions.isoTime }, stdout);
  process.on('exit', () => stdout.flushBeforeExit());
  return logger;
}
