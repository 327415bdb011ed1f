/**
 * Progress on stderr for long-running scripts. On a terminal: a live bar (cli-progress). Not on
 * a terminal (a pipe, a log file, CI): a plain line now and then, only once there is progress
 * to tell (no "0%" lines), so logs stay short and meaningful.
 */
import cliProgress from 'cli-progress';

export interface Progress {
  /** `value` out of the total; `payload` fills the format's `{name}` tokens. */
  update(value: number, payload: Record<string, string | number>): void;
  /** Removes the bar (on a terminal); prints nothing else. */
  stop(): void;
}

export interface ProgressOptions {
  /** Script name, prefixed to the plain lines. */
  label: string;
  total: number;
  /** cli-progress format, e.g. `replay |{bar}| {percentage}% | {events} events`. */
  format: string;
  /** The plain line (without the label and percentage) for non-terminals. */
  line: (payload: Record<string, string | number>) => string;
  /** Minimum time between two plain lines. */
  intervalMs?: number;
  stream?: NodeJS.WriteStream;
}

export function createProgress(options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr;
  const total = Math.max(options.total, 1);
  if (stream.isTTY) {
    const bar = new cliProgress.SingleBar({ format: options.format, etaBuffer: 50, stream, noTTYOutput: false }, cliProgress.Presets.shades_classic);
    let started = false;
    return {
      update(value, payload) {
        if (!started) {
          bar.start(total, 0, payload);
          started = true;
        }
        bar.update(Math.min(value, total), payload);
      },
      stop() {
        if (started) bar.stop();
      },
    };
  }
  const intervalMs = options.intervalMs ?? 5_000;
  let last = Date.now();
  return {
    update(value, payload) {
      if (value <= 0 || Date.now() - last < intervalMs) return;
      last = Date.now();
      const percentage = Math.min(100, Math.floor((100 * value) / total));
      stream.write(`${options.label}: ${percentage}% | ${options.line(payload)}\n`);
    },
    stop() {},
  };
}
