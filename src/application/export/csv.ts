/**
 * RFC 4180 CSV: fields separated by commas, records by CRLF. A field holding a comma, a
 * double quote, a CR or an LF is enclosed in double quotes, and each double quote inside it
 * is doubled. Leading or trailing spaces are quoted too, so spreadsheet tools that trim
 * unquoted fields keep them.
 */

const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;

const CSV_RECORD_SEPARATOR = '\r\n';

export function csvField(value: string): string {
  return NEEDS_QUOTES.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** One record, terminated by CRLF. */
export function csvRecord(fields: readonly string[]): string {
  return fields.map(csvField).join(',') + CSV_RECORD_SEPARATOR;
}
