import { expect } from 'chai';
import {
  csvHeader,
  csvLine,
  csvLineFromJson,
  EXPORT_COLUMNS,
  ExportUsageError,
  exportedEvent,
  formatEvent,
  logFilterOf,
  ndjsonLine,
  ndjsonLineFromJson,
  parseExportOptions,
  parseSince,
  preamble,
  recordedSince,
} from '../../../src/application/export/event-export-format.js';
import type { RecordedEvent, RecordedEventJson } from '../../../src/ports/event-store.js';
import { fromCsvRecord, parseCsv } from '../../support/csv-reader.js';

function recorded(overrides: Partial<RecordedEvent> = {}): RecordedEvent {
  return {
    position: 12_345_678_901_234_567_890n,
    stream: 'user-a,b "c"',
    revision: 3,
    id: '0b6a3c1e-5f1d-4c5e-9a55-1f2e3d4c5b6a',
    type: 'UserProfileUpdated',
    data: { changes: { metadata: { note: 'comma, "quote"\nnew line', emoji: '✓', nested: [1, null, true] } } },
    metadata: { correlation_id: 'req-1', causation_id: 'req-1', actor: 'client:abc', schema_version: 1, operation_id: 'op,1' },
    recordedAt: new Date('2026-03-04T05:06:07.089Z'),
    ...overrides,
  };
}

function args(entries: Record<string, string | true>): Map<string, string | true> {
  return new Map(Object.entries(entries));
}

describe('export: event formats', () => {
  it('an exported event has the fields of GET /admin/events, the position as a string', () => {
    expect(exportedEvent(recorded())).to.deep.equal({
      position: '12345678901234567890',
      stream: 'user-a,b "c"',
      revision: 3,
      id: '0b6a3c1e-5f1d-4c5e-9a55-1f2e3d4c5b6a',
      type: 'UserProfileUpdated',
      data: recorded().data,
      metadata: recorded().metadata,
      recorded_at: '2026-03-04T05:06:07.089Z',
    });
    expect(Object.keys(exportedEvent(recorded()))).to.deep.equal([...EXPORT_COLUMNS]);
  });

  it('NDJSON: exactly one line per event that parses back to the exported event', () => {
    const line = ndjsonLine(recorded());
    expect(line.endsWith('\n')).to.equal(true);
    expect(line.slice(0, -1)).to.not.include('\n');
    expect(JSON.parse(line)).to.deep.equal(exportedEvent(recorded()));
    expect(formatEvent(recorded(), 'ndjson')).to.equal(line);
    expect(preamble('ndjson')).to.equal('');
  });

  it('CSV: a header, then one record per event whose fields parse back (data and metadata as JSON)', () => {
    const events = [
      recorded(),
      recorded({
        position: 7n,
        stream: 'code-ABC',
        revision: 0,
        data: {},
        metadata: { correlation_id: 'x', causation_id: 'y', actor: 'z', schema_version: 1 },
      }),
    ];
    const text = preamble('csv') + events.map((event) => formatEvent(event, 'csv')).join('');
    const [header, ...rows] = parseCsv(text);
    expect(header).to.deep.equal([...EXPORT_COLUMNS]);
    expect(csvHeader()).to.equal(`${EXPORT_COLUMNS.join(',')}\r\n`);
    expect(rows.map(fromCsvRecord)).to.deep.equal(events.map(exportedEvent));
    expect(csvLine(recorded())).to.include('"user-a,b ""c"""');
  });

  describe('flags', () => {
    it('defaults: everything, as NDJSON, to stdout', () => {
      expect(parseExportOptions(args({}))).to.deep.equal({ after: null, streamPrefix: null, types: [], since: null, format: 'ndjson', out: null });
    });

    it('reads every flag', () => {
      const options = parseExportOptions(
        args({ after: '42', 'stream-prefix': 'user-', type: 'CodeClaimed, RewardGranted', since: '2026-01-31', format: 'csv', out: 'x.txt' }),
      );
      expect(options).to.deep.equal({
        after: 42n,
        streamPrefix: 'user-',
        types: ['CodeClaimed', 'RewardGranted'],
        since: new Date('2026-01-31T00:00:00.000Z'),
        format: 'csv',
        out: 'x.txt',
      });
      expect(logFilterOf(options)).to.deep.equal({ streamPrefixes: ['user-'], types: ['CodeClaimed', 'RewardGranted'] });
      expect(logFilterOf(parseExportOptions(args({})))).to.deep.equal({});
    });

    it('a .csv output file means CSV unless --format says otherwise', () => {
      expect(parseExportOptions(args({ out: 'events.CSV' })).format).to.equal('csv');
      expect(parseExportOptions(args({ out: 'events.csv', format: 'ndjson' })).format).to.equal('ndjson');
    });

    it('rejects unknown flags, missing values and bad values', () => {
      const bad: Record<string, string | true>[] = [
        { nope: '1' },
        { after: '-1' },
        { after: 'abc' },
        { after: true },
        { format: 'xml' },
        { type: true },
        // A list with an empty item would export every type; a typo, none.
        { type: ',' },
        { type: 'CodeClaimed,' },
        { type: 'Bogus' },
        { type: 'CodeClaimed,codeclaimed' },
        { since: 'yesterday' },
      ];
      for (const flags of bad) {
        expect(() => parseExportOptions(args(flags)), JSON.stringify(flags)).to.throw(ExportUsageError);
      }
    });
  });

  describe('--since', () => {
    it('takes a date (midnight UTC) or a date-time; no offset means UTC', () => {
      expect(parseSince('2026-01-31').toISOString()).to.equal('2026-01-31T00:00:00.000Z');
      expect(parseSince('2026-01-31T12:30:00Z').toISOString()).to.equal('2026-01-31T12:30:00.000Z');
      expect(parseSince('2026-01-31T12:30').toISOString()).to.equal('2026-01-31T12:30:00.000Z');
      expect(parseSince('2026-01-31 12:30:15.5').toISOString()).to.equal('2026-01-31T12:30:15.500Z');
      expect(parseSince('2026-01-31T12:30:00+02:00').toISOString()).to.equal('2026-01-31T10:30:00.000Z');
    });

    it('rejects impossible dates and other text', () => {
      for (const bad of ['2026-02-30', '2026-13-01', '2026-01-31T24:00', '31/01/2026', '1700000000', '']) {
        expect(() => parseSince(bad), bad).to.throw(ExportUsageError);
      }
    });

    it('keeps events recorded at or after the instant', () => {
      const at = new Date('2026-03-04T05:06:07.089Z');
      expect(recordedSince(recorded(), null)).to.equal(true);
      expect(recordedSince(recorded(), at)).to.equal(true);
      expect(recordedSince(recorded(), new Date(at.getTime() + 1))).to.equal(false);
    });
  });

  describe('from the stored JSON text (no parse, no re-serialisation)', () => {
    const asStored = (event: RecordedEvent): RecordedEventJson => {
      const { data, metadata, recordedAt, ...rest } = event;
      return { ...rest, dataJson: JSON.stringify(data), metadataJson: JSON.stringify(metadata), recordedAtIso: recordedAt.toISOString() };
    };

    it('writes byte for byte the NDJSON line and the CSV record of the parsed event', () => {
      for (const event of [recorded(), recorded({ stream: 'user-\u2028\u0000"x"', data: { ['__proto__']: { a: 1 }, n: -0.5, s: '\ud83d\ude00' } })]) {
        expect(ndjsonLineFromJson(asStored(event))).to.equal(ndjsonLine(event));
        expect(csvLineFromJson(asStored(event))).to.equal(csvLine(event));
      }
    });

    it('filters --since on the stored time', () => {
      const event = asStored(recorded());
      expect(recordedSince(event, new Date('2026-03-04T05:06:07.089Z'))).to.equal(true);
      expect(recordedSince(event, new Date('2026-03-04T05:06:07.090Z'))).to.equal(false);
    });
  });
});
