import { setImmediate } from 'node:timers/promises';
import type { Writable } from 'node:stream';
import type { EventStore, ReadAllOptions } from '../../ports/event-store.js';
import { type ExportOptions, formatEvent, formatEventFromJson, logFilterOf, preamble, recordedSince } from './event-export-format.js';
import { Utf8Chunks } from './utf8-chunks.js';

const PAGE_SIZE = 2_000;

/** Raised when the output goes away (a closed pipe, a full disk). */
export class OutputClosedError extends Error {
  constructor(override readonly cause: Error) {
    super(`output failed: ${cause.message}`);
  }
}

/**
 * Writes the chunks in order, waiting for 'drain' whenever the stream's buffer is full. A failed
 * or closed output is found before the first chunk and after each wait, also when there is
 * nothing to write (a page the filters emptied), so an export never reads on after it.
 */
async function write(output: Writable, chunks: readonly (string | Buffer)[], failure: () => Error | null): Promise<void> {
  const check = () => {
    const failed = failure() ?? (output.destroyed ? new Error('output closed') : null);
    if (failed) throw new OutputClosedError(failed);
  };
  check();
  for (const chunk of chunks) {
    if (chunk.length === 0 || output.write(chunk)) continue;
    await new Promise<void>((resolve) => {
      const done = () => {
        output.off('drain', done).off('close', done).off('error', done);
        resolve();
      };
      output.on('drain', done).on('close', done).on('error', done);
    });
    check();
  }
}

export interface ExportProgress {
  written: number;
  /**
   * Where a later export continues (`--after`): every event up to it was written or filtered
   * out. At the end, the log's head as it was when the last (empty) page was asked for, so a
   * filtered export does not name the last event it matched and make the next one scan the rest again.
   */
  position: bigint | null;
}

/** One page of the log as export bytes: the events read, how many matched, and their text in UTF-8. */
async function readPage(store: EventStore, options: ExportOptions, read: ReadAllOptions) {
  let written = 0;
  const text = new Utf8Chunks();
  if (store.readAllJson) {
    // Stored JSON text goes out as it is: no parse, no re-serialisation.
    const page = await store.readAllJson(read);
    for (const event of page) {
      if (!recordedSince(event, options.since)) continue;
      text.add(formatEventFromJson(event, options.format));
      written += 1;
    }
    return { last: page[page.length - 1]?.position ?? null, written, chunks: text.take() };
  }
  const page = await store.readAll(read);
  for (const event of page) {
    if (!recordedSince(event, options.since)) continue;
    text.add(formatEvent(event, options.format));
    written += 1;
  }
  return { last: page[page.length - 1]?.position ?? null, written, chunks: text.take() };
}

/**
 * Streams the log, in commit order, to `output` as NDJSON or CSV (`npm run export-events`).
 * Each page is written before the next is read, waiting whenever the output asks to
 * (backpressure), so memory stays flat however long the log is.
 */
export async function exportEvents(
  store: EventStore,
  options: ExportOptions,
  output: Writable,
  onPage: (progress: ExportProgress) => void = () => {},
): Promise<ExportProgress> {
  let failure: Error | null = null;
  const onError = (error: Error) => {
    failure ??= error;
  };
  output.on('error', onError);
  try {
    const progress: ExportProgress = { written: 0, position: options.after };
    await write(output, [preamble(options.format)], () => failure);
    const filter = logFilterOf(options);
    for (;;) {
      // Read before the page: every event at or before it is committed, so an empty page means
      // none of them matched.
      const head = await store.headPosition();
      const page = await readPage(store, options, { after: progress.position, limit: PAGE_SIZE, filter });
      if (page.last === null) {
        if (head !== null && (progress.position === null || head > progress.position)) progress.position = head;
        return progress;
      }
      progress.written += page.written;
      progress.position = page.last;
      await write(output, page.chunks, () => failure);
      onPage(progress);
      // Let I/O callbacks run (an output error, a signal) even when every write succeeds at once.
      await setImmediate();
    }
  } finally {
    output.off('error', onError);
  }
}
