import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { PassThrough, Writable } from 'node:stream';
import { MemoryEventStore } from '../../../src/adapters/memory/memory-event-store.js';
import { type ExportOptions, formatEvent } from '../../../src/application/export/event-export-format.js';
import { exportEvents, OutputClosedError } from '../../../src/application/export/export-events.js';
import type { ReadAllOptions } from '../../../src/ports/event-store.js';

const OLD = new Date('2026-01-01T00:00:00.000Z');
const NEW = new Date('2026-06-01T00:00:00.000Z');

function options(overrides: Partial<ExportOptions> = {}): ExportOptions {
  return { after: null, streamPrefix: null, types: [], since: null, format: 'ndjson', out: null, ...overrides };
}

/** `old` events recorded on OLD, then `recent` on NEW, in one stream each of a few users. */
async function storeWith(old: number, recent: number): Promise<MemoryEventStore> {
  const store = new MemoryEventStore();
  for (let index = 0; index < old + recent; index += 1) {
    await store.append(
      `user-u${index % 7}`,
      [
        {
          id: randomUUID(),
          type: 'UserProfileUpdated',
          data: { changes: { note: `Zoë ✓ ${index}` } },
          metadata: { correlation_id: 'req', causation_id: 'req', actor: 'test', schema_version: 1 },
          recordedAt: index < old ? OLD : NEW,
        },
      ],
      'any',
    );
  }
  return store;
}

async function collect(run: (output: Writable) => Promise<unknown>): Promise<Buffer> {
  const output = new PassThrough();
  const chunks: Buffer[] = [];
  output.on('data', (chunk: Buffer) => chunks.push(chunk));
  await run(output);
  return Buffer.concat(chunks);
}

describe('export: exportEvents', () => {
  it('writes every event in log order, byte for byte as each event formats, over several pages', async () => {
    const store = await storeWith(0, 4_500);
    for (const format of ['ndjson', 'csv'] as const) {
      const bytes = await collect((output) => exportEvents(store, options({ format }), output));
      const events = await store.readAll({ after: null, limit: 10_000 });
      const expected =
        (format === 'csv' ? 'position,stream,revision,id,type,data,metadata,recorded_at\r\n' : '') + events.map((event) => formatEvent(event, format)).join('');
      expect(bytes.equals(Buffer.from(expected, 'utf8'))).to.equal(true);
    }
  });

  it('finds a failed output on a page the --since filter emptied, and reads no further', async () => {
    const store = await storeWith(6_000, 10);
    const output = new Writable({ write: (_chunk, _encoding, done) => done() });
    const reads: ReadAllOptions[] = [];
    const readAllJson = store.readAllJson.bind(store);
    store.readAllJson = (read) => {
      reads.push(read);
      // The reader goes away while the first page is read (as `| head` does).
      output.destroy();
      return readAllJson(read);
    };
    const failure = await exportEvents(store, options({ since: NEW }), output).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).to.be.instanceOf(OutputClosedError);
    // The first page (2,000 events, none since NEW) wrote nothing, and the failure was found after it.
    expect(reads).to.have.length(1);
  });
});
