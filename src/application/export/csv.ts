/**
 * RFC 4180 CSV: fields separated by commas, records by CRLF. A field holding a comma, a
 * double quote, a CR or an LF is enclosed in double quotes, and each double quote inside it
 * is doubled. Leading or trailing spaces are quoted too, so spreadsheet tools that trim
 * unquoted fields keep them.
 */

const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;

export const CSV_RECORD_SEPARATOR = '\r\n';

export function csvField(value: string): string {
  return NEEDS_QUOTES.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** One record, terminated by CRLF. */
export function csvRecord(fields: readonly string[]): string {
  return fields.map(csvField).join(',') + CSV_RECORD_SEPARATOR;
}

export class CsvParseError extends Error {
  override name = 'CsvParseError';
}

/**
 * Parses RFC 4180 text back into records (for round-trip checks and small tools). Accepts
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
