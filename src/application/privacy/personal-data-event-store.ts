import { ERASED } from '../../domain/privacy/personal-fields.js';
import {
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  ForwardingEventStore,
  type LogPage,
  type NewEvent,
  type PageOptions,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type RecordedEventJson,
} from '../../ports/event-store.js';
import type { PersonalDataCipher } from './personal-data-cipher.js';

/**
 * The boundary where personal fields are encrypted and decrypted (SPEC §13): appends store
 * them encrypted with their owner's data key, reads hand them back in the clear, so deciders,
 * projections and reactions see plain values. A value whose key was destroyed reads as null and
 * its path is listed in `RecordedEvent.erased` (GET /admin/events shows `{"erased": true}`);
 * `readAllJson` (the export) writes that marker into the JSON itself. Events written before
 * encryption existed hold plain values and read as they are.
 */
export class PersonalDataEventStore extends ForwardingEventStore {
  constructor(
    inner: EventStore,
    readonly cipher: PersonalDataCipher,
  ) {
    super(inner);
    if (inner.readAllJson) this.readAllJson = (options) => this.readJsonPage(inner.readAllJson!.bind(inner), options);
  }

  /**
   * A sealed append needs the key store as much as the log: either one's failure stops every
   * write until a restart (one rule for the operator, whether or not a write holds personal data).
   */
  override writeFailure(): Error | null {
    return super.writeFailure() ?? this.cipher.keys.writeFailure?.() ?? null;
  }

  override async append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    const keysFailed = this.cipher.keys.writeFailure?.();
    if (keysFailed) throw keysFailed;
    const protectedEvents = await Promise.all(
      events.map(async (event) => {
        const data = await this.cipher.protect(stream, event.type, event.data);
        return data === event.data ? event : { ...event, data };
      }),
    );
    return this.inner.append(stream, protectedEvents, expected);
  }

  override async readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.cipher.reveal(await this.inner.readStream(stream, options));
  }

  override async readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.cipher.reveal(await this.inner.readAll(options));
  }

  override async readPage(options: PageOptions): Promise<LogPage> {
    const page = await this.inner.readPage(options);
    return { ...page, events: await this.cipher.reveal(page.events) };
  }

  readAllJson?: (options: ReadAllOptions) => Promise<RecordedEventJson[]>;

  /** Rows without an encrypted value pass through as stored text; the others are decrypted and written again. */
  private async readJsonPage(read: (options: ReadAllOptions) => Promise<RecordedEventJson[]>, options: ReadAllOptions): Promise<RecordedEventJson[]> {
    const page = await read(options);
    const encrypted = page.filter((row) => row.dataJson.includes('"$encrypted"'));
    if (encrypted.length === 0) return page;
    const parsed = new Map(encrypted.map((row) => [row, JSON.parse(row.dataJson) as Record<string, unknown>]));
    const keys = await this.cipher.keysFor(encrypted.map((row) => ({ type: row.type, data: parsed.get(row) })));
    if (keys === null) return page;
    return page.map((row) => {
      const data = parsed.get(row);
      if (data === undefined) return row;
      return { ...row, dataJson: JSON.stringify(this.cipher.revealData(row.type, data, keys, ERASED).data) };
    });
  }
}
