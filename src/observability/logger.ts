import { pino } from 'pino';
import sonicBoom from 'sonic-boom';
import type { Logger } from '../ports/logger.js';

/** Lines waiting for a stdout nobody reads, at most: past this, new lines are dropped (and counted). */
const MAX_UNWRITTEN_BYTES = 8 * 1024 * 1024;
/** How long the exit waits for a stdout that does not take the last lines. */
const EXIT_FLUSH_MS = 2000;

/**
 * Structured JSON logs on stdout, written off the request path. A stdout that is not read (or
 * read too slowly) never stops the service: unwritten lines wait in memory up to
 * MAX_UNWRITTEN_BYTES, then new ones are dropped and a warning counts them once writing resumes;
 * the exit gives the last lines EXIT_FLUSH_MS, then leaves without them. A closed stdout (EPIPE)
 * ends logging.
 */
export function createLogger(level: string): Logger & pino.Logger {
  let exitDeadline = Number.POSITIVE_INFINITY;
  const stream = new sonicBoom.SonicBoom({
    // Node opens a pipe or socket stdout non-blocking (libuv): a write the reader does not take
    // fails with EAGAIN and waits for a retry instead of blocking the event loop or the exit.
    fd: process.stdout.fd,
    sync: false,
    maxLength: MAX_UNWRITTEN_BYTES,
    retryEAGAIN: () => Date.now() < exitDeadline,
  });
  const logger = pino({ level, base: { service: 'referral-rewards' }, timestamp: pino.stdTimeFunctions.isoTime }, stream);
  let dropped = 0;
  stream.on('drop', () => (dropped += 1));
  // 'write' is emitted before the written bytes leave the buffer: the warning waits for that.
  stream.on('write', () =>
    queueMicrotask(() => {
      if (dropped === 0) return;
      const count = dropped;
      dropped = 0;
      logger.warn({ dropped: count }, `${count} log lines dropped: stdout was not read`);
    }),
  );
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') stream.write = () => true;
  });
  process.on('exit', () => {
    exitDeadline = Date.now() + EXIT_FLUSH_MS;
    try {
      stream.flushSync();
    } catch {
      // stdout did not take the last lines in time, or is closed: they are lost, the exit is not.
    }
  });
  return logger;
}
