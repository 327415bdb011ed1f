/**
 * Reading the CSV export back (RFC 4180), for the tests' round-trip checks: the service writes
 * CSV (src/application/export/csv.ts) and never reads it.
 */
import { EXPORT_COLUMNS, type ExportedEvent } from '../../src/application/export/event-export-format.js';

export class CsvParseError extends Error {
  override name = 'CsvParseError';
}

/**
 * Parses RFC 4180 text back into records (for round-trip checks). Accepts
 * CRLF or LF between records; line breaks inside quoted fields are kept as they are.
 */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let index = 0;
  let fieldStarted = false;
  const endField = () => {
    record.push(field);
    field = '';
    fieldStarted = false;
  };
  const endRecord = () => {
    endField();
    records.push(record);
    record = [];
  };
  while (index < text.length) {
    const char = text[index]!;
    if (char === '"' && !fieldStarted && field === '') {
      // A quoted field: runs to the next quote not followed by another quote.
      index += 1;
      for (;;) {
        const quote = text.indexOf('"', index);
        if (quote === -1) throw new CsvParseError(`Unterminated quoted field starting before offset ${index}`);
        field += text.slice(index, quote);
        if (text[quote + 1] === '"') {
          field += '"';
          index = quote + 2;
          continue;
        }
        index = quote + 1;
        break;
      }
      fieldStarted = true;
      const next = text[index];
      if (next !== undefined && next !== ',' && next !== '\r' && next !== '\n') {
        throw new CsvParseError(`Unexpected character ${JSON.stringify(next)} after a quoted field at offset ${index}`);
      }
      continue;
    }
    if (char === ',') {
      endField();
      index += 1;
    } else if (char === '\r' && text[index + 1] === '\n') {
      endRecord();
      index += 2;
    } else if (char === '\n') {
      endRecord();
      index += 1;
    } else {
      if (char === '"') throw new CsvParseError(`Unexpected double quote inside an unquoted field at offset ${index}`);
      field += char;
      fieldStarted = true;
      index += 1;
    }
  }
  // A last record without a terminating line break.
  if (fieldStarted || field !== '' || record.length > 0) endRecord();
  return records;
}

/** A CSV record parsed back (by `parseCsv`) into the exported event. */
export function fromCsvRecord(record: readonly string[]): ExportedEvent {
  if (record.length !== EXPORT_COLUMNS.length) throw new Error(`Expected ${EXPORT_COLUMNS.length} fields, got ${record.length}`);
  const [position, stream, revision, id, type, data, metadata, recordedAt] = record as [string, string, string, string, string, string, string, string];
  return {
    position,
    stream,
    revision: Number(revision),
    id,
    type,
    data: JSON.parse(data) as Record<string, unknown>,
    metadata: JSON.parse(metadata) as Record<string, unknown>,
    recorded_at: recordedAt,
  };
}
