import { LOG_POSITION_TEXT, type LogFilter, type RecordedEvent, type RecordedEventJson } from '../../ports/event-store.js';
import { ERASED, withValueAt } from '../../domain/privacy/personal-fields.js';
import { isKnownEventType } from '../../domain/events/index.js';
import { csvRecord } from './csv.js';

/**
 * What `npm run export-events` writes for each event: the same fields, names and value
 * shapes as `GET /admin/events` (position as a decimal string, since ESDB positions exceed
 * 2^53). Data and metadata are exported as stored, without upcasting: `metadata.schema_version`
 * says which version of the event's schema they follow.
 */
export interface ExportedEvent {
  position: string;
  stream: string;
  revision: number;
  id: string;
  type: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
  recorded_at: string;
}

export const EXPORT_COLUMNS = ['position', 'stream', 'revision', 'id', 'type', 'data', 'metadata', 'recorded_at'] as const;

export type ExportFormat = 'ndjson' | 'csv';

/**
 * The events that carry a webhook signing secret (`data.secret`): it is shown as
 * `{"redacted": true}` wherever the log is read (GET /admin/events, export-events), since SPEC §12
 * shows a secret only in the response that made it. The log keeps it: deliveries sign with it.
 */
const SECRET_BEARING = new Set(['WebhookEndpointCreated', 'WebhookSecretRotated']);
const REDACTED = Object.freeze({ redacted: true });

/** Erased personal fields (SPEC §13) are shown as `{"erased": true}`. */
export function exportedEvent(event: RecordedEvent): ExportedEvent {
  let data = event.data;
  for (const path of event.erased ?? []) data = withValueAt(data, path.split('.'), ERASED);
  if (SECRET_BEARING.has(event.type) && 'secret' in data) data = { ...data, secret: REDACTED };
  return {
    position: event.position.toString(),
    stream: event.stream,
    revision: event.revision,
    id: event.id,
    type: event.type,
    data,
    metadata: event.metadata,
    recorded_at: event.recordedAt.toISOString(),
  };
}

/** One NDJSON line (JSON text has no raw line breaks, so one event is exactly one line). */
export function ndjsonLine(event: RecordedEvent): string {
  return `${JSON.stringify(exportedEvent(event))}\n`;
}

export function csvHeader(): string {
  return csvRecord(EXPORT_COLUMNS);
}

/** One CSV record in EXPORT_COLUMNS order; data and metadata as JSON text. */
export function csvLine(event: RecordedEvent): string {
  const row = exportedEvent(event);
  return csvRecord([row.position, row.stream, String(row.revision), row.id, row.type, JSON.stringify(row.data), JSON.stringify(row.metadata), row.recorded_at]);
}

/** The text of one event in `format`. */
export function formatEvent(event: RecordedEvent, format: ExportFormat): string {
  return format === 'csv' ? csvLine(event) : ndjsonLine(event);
}

/**
 * The same NDJSON line as `ndjsonLine`, built around the stored JSON text of data and
 * metadata instead of parsing and re-serialising it (the store wrote that text with
 * JSON.stringify, so the bytes are the same): the export then runs at the speed of reading.
 */
export function ndjsonLineFromJson(event: RecordedEventJson): string {
  return (
    `{"position":"${event.position}","stream":${JSON.stringify(event.stream)},"revision":${event.revision},` +
    `"id":${JSON.stringify(event.id)},"type":${JSON.stringify(event.type)},"data":${event.dataJson},` +
    `"metadata":${event.metadataJson},"recorded_at":"${event.recordedAtIso}"}\n`
  );
}

/** The same CSV record as `csvLine`, from the stored JSON text. */
export function csvLineFromJson(event: RecordedEventJson): string {
  return csvRecord([
    event.position.toString(),
    event.stream,
    String(event.revision),
    event.id,
    event.type,
    event.dataJson,
    event.metadataJson,
    event.recordedAtIso,
  ]);
}

export function formatEventFromJson(event: RecordedEventJson, format: ExportFormat): string {
  if (SECRET_BEARING.has(event.type)) {
    // Rare events whose text is not shown as stored: through the parsed path, which redacts.
    const { dataJson, metadataJson, recordedAtIso, ...rest } = event;
    return formatEvent({ ...rest, data: JSON.parse(dataJson), metadata: JSON.parse(metadataJson), recordedAt: new Date(recordedAtIso) }, format);
  }
  return format === 'csv' ? csvLineFromJson(event) : ndjsonLineFromJson(event);
}

/** The text before the first event (the CSV header; nothing for NDJSON). */
export function preamble(format: ExportFormat): string {
  return format === 'csv' ? csvHeader() : '';
}

export interface ExportOptions {
  /** Exclusive: events after this position; null = from the first event. */
  after: bigint | null;
  streamPrefix: string | null;
  /** Event types to keep (any of them); empty = all. */
  types: string[];
  /** Keep events recorded at or after this instant; null = all. */
  since: Date | null;
  format: ExportFormat;
  /** File to write; null = stdout. */
  out: string | null;
}

export class ExportUsageError extends Error {
  override name = 'ExportUsageError';
}

const KNOWN_FLAGS = new Set(['after', 'stream-prefix', 'type', 'since', 'format', 'out']);

function stringFlag(args: Map<string, string | true>, name: string): string | null {
  const value = args.get(name);
  if (value === undefined) return null;
  if (value === true || value.trim() === '') throw new ExportUsageError(`--${name} needs a value`);
  return value;
}

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * `--since`: an ISO 8601 date (midnight UTC) or date-time; a date-time without an offset is
 * UTC too, so the result does not depend on the machine's time zone.
 */
export function parseSince(text: string): Date {
  const match = ISO_DATE_TIME.exec(text.trim());
  const invalid = () => new ExportUsageError(`--since must be an ISO 8601 date or date-time (e.g. 2026-01-31 or 2026-01-31T12:00:00Z), got ${text}`);
  if (!match) throw invalid();
  const [, year, month, day, hours, minutes, seconds, offset] = match;
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (date.getUTCMonth() !== Number(month) - 1 || date.getUTCDate() !== Number(day)) throw invalid();
  if (hours === undefined) return date;
  if (Number(hours) > 23 || Number(minutes) > 59 || Number(seconds ?? 0) > 59) throw invalid();
  const normalized = text.trim().replace(' ', 'T') + (offset === undefined ? 'Z' : '');
  const time = Date.parse(normalized);
  if (Number.isNaN(time)) throw invalid();
  return new Date(time);
}

/**
 * Reads the export's flags (as `parseArgs` returns them). `--format` defaults to csv when
 * `--out` ends in `.csv`, otherwise ndjson; `--type` takes one type or a comma-separated list.
 */
export function parseExportOptions(args: Map<string, string | true>): ExportOptions {
  for (const name of args.keys()) {
    if (!KNOWN_FLAGS.has(name)) throw new ExportUsageError(`Unknown option --${name}`);
  }
  const afterText = stringFlag(args, 'after');
  if (afterText !== null && !LOG_POSITION_TEXT.test(afterText)) throw new ExportUsageError('--after must be a log position (1 to 20 digits)');
  const sinceText = stringFlag(args, 'since');
  const since = sinceText === null ? null : parseSince(sinceText);
  const out = stringFlag(args, 'out');
  const formatText = stringFlag(args, 'format') ?? (out?.toLowerCase().endsWith('.csv') ? 'csv' : 'ndjson');
  if (formatText !== 'ndjson' && formatText !== 'csv') throw new ExportUsageError('--format must be ndjson or csv');
  return {
    after: afterText === null ? null : BigInt(afterText),
    streamPrefix: stringFlag(args, 'stream-prefix'),
    types: parseTypes(stringFlag(args, 'type')),
    since,
    format: formatText,
    out,
  };
}

/**
 * `--type`: one event type or a comma-separated list, each one this service records (a typo would
 * export nothing, and an empty list everything, without a word).
 */
function parseTypes(text: string | null): string[] {
  if (text === null) return [];
  const types = text.split(',').map((type) => type.trim());
  if (types.some((type) => type.length === 0))
    throw new ExportUsageError(`--type must be an event type or a comma-separated list of them, got ${JSON.stringify(text)}`);
  const unknown = types.filter((type) => !isKnownEventType(type));
  if (unknown.length > 0) throw new ExportUsageError(`--type: no event type ${unknown.join(', ')} (the types are listed in docs/events.md)`);
  return types;
}

/** The part of the options the event store filters on (`--since` is applied while reading). */
export function logFilterOf(options: ExportOptions): LogFilter {
  return {
    ...(options.streamPrefix !== null ? { streamPrefixes: [options.streamPrefix] } : {}),
    ...(options.types.length > 0 ? { types: options.types } : {}),
  };
}

export function recordedSince(event: Pick<RecordedEvent, 'recordedAt'> | Pick<RecordedEventJson, 'recordedAtIso'>, since: Date | null): boolean {
  if (since === null) return true;
  const time = 'recordedAt' in event ? event.recordedAt.getTime() : Date.parse(event.recordedAtIso);
  return time >= since.getTime();
}
