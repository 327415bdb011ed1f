import { PERSONAL_MESSAGE_FIELDS, withValueAt } from '../../domain/privacy/personal-fields.js';
import { valueAt } from '../../domain/json-object.js';
import type { AttemptRecord, EndpointQueueStats, NewOutboxMessage, OutboxListQuery, OutboxMessage, WebhookOutbox } from '../../ports/webhook-outbox.js';
import { type Envelope, isEnvelope, type PersonalDataCipher, userSubject } from './personal-data-cipher.js';

function personalPaths(eventType: string): readonly (readonly string[])[] {
  return Object.hasOwn(PERSONAL_MESSAGE_FIELDS, eventType) ? PERSONAL_MESSAGE_FIELDS[eventType]! : [];
}

function labelOf(path: readonly string[]): string {
  return `message.${path.join('.')}`;
}

/** A failed attempt's receiver answer, as much as `last_error` keeps of it. */
const ERROR_LABEL = 'message.last_error';

/** The user whose personal values a message holds (sealed, as stored); null when it holds none. */
function personalUserOf(message: Pick<OutboxMessage, 'event_type' | 'payload'>): string | null {
  if (personalPaths(message.event_type).length === 0 || !message.payload.includes('"$encrypted"')) return null;
  const user = valueAt(JSON.parse(message.payload) as Record<string, unknown>, ['data', 'app_user_id']);
  return typeof user === 'string' ? user : null;
}

/** `last_error` as stored: sealed (an envelope's JSON text) or a plain text. */
function storedEnvelope(text: string | null): Envelope | null {
  if (text === null || !text.startsWith('{"$encrypted"')) return null;
  try {
    const parsed: unknown = JSON.parse(text);
    return isEnvelope(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/**
 * Outgoing messages hold personal fields (`user.created`: metadata, payment_customer_id) only
 * encrypted at rest, under the user's data key (SPEC §13): sealed when queued, opened when read
 * back for delivery or listing. A message of an erased user goes out with those fields null.
 * What a receiver answered to such a message (`last_error`, which may echo the message) is sealed
 * the same way: after the erasure it lists as null.
 */
export class PersonalDataOutbox implements WebhookOutbox {
  constructor(
    readonly inner: WebhookOutbox,
    private readonly cipher: PersonalDataCipher,
  ) {}

  private async seal(messages: NewOutboxMessage[]): Promise<NewOutboxMessage[]> {
    return Promise.all(
      messages.map(async (message) => {
        const paths = personalPaths(message.event_type);
        if (paths.length === 0) return message;
        let body = JSON.parse(message.payload) as Record<string, unknown>;
        const user = valueAt(body, ['data', 'app_user_id']);
        if (typeof user !== 'string') return message;
        for (const path of paths) {
          const value = valueAt(body, path);
          if (value === undefined || value === null || isEnvelope(value)) continue;
          // Never creates a key: none means the user was erased meanwhile.
          body = withValueAt(body, path, await this.cipher.seal(userSubject(user), labelOf(path), value, false));
        }
        return { ...message, payload: JSON.stringify(body) };
      }),
    );
  }

  private async open<T extends OutboxMessage | null>(message: T): Promise<T> {
    if (message === null) return message;
    const sealedError = storedEnvelope(message.last_error);
    if (sealedError !== null) {
      const opened = await this.cipher.open(ERROR_LABEL, sealedError);
      return this.open({ ...message, last_error: typeof opened === 'string' ? opened : null });
    }
    const paths = personalPaths(message.event_type);
    if (paths.length === 0 || !message.payload.includes('"$encrypted"')) return message;
    let body = JSON.parse(message.payload) as Record<string, unknown>;
    for (const path of paths) {
      const value = valueAt(body, path);
      if (!isEnvelope(value)) continue;
      body = withValueAt(body, path, (await this.cipher.open(labelOf(path), value)) ?? null);
    }
    return { ...message, payload: JSON.stringify(body) };
  }

  async feed(name: string, messages: NewOutboxMessage[], after: bigint | null, position: bigint): Promise<void> {
    return this.inner.feed(name, await this.seal(messages), after, position);
  }

  feedCheckpoint(name: string): Promise<bigint | null> {
    return this.inner.feedCheckpoint(name);
  }

  async requeue(messages: NewOutboxMessage[], now: string): Promise<number> {
    return this.inner.requeue(await this.seal(messages), now);
  }

  dueEndpoints(now: string): Promise<string[]> {
    return this.inner.dueEndpoints(now);
  }

  async head(endpointId: string): Promise<OutboxMessage | null> {
    return this.open(await this.inner.head(endpointId));
  }

  async recordAttempt(endpointId: string, messageId: string, attempt: AttemptRecord): Promise<void> {
    const message = attempt.error === null ? null : await this.inner.get(endpointId, messageId);
    const user = message === null ? null : personalUserOf(message);
    if (user === null) return this.inner.recordAttempt(endpointId, messageId, attempt);
    // Never creates a key: none means the user was erased meanwhile, and the answer is not kept.
    const sealed = await this.cipher.seal(userSubject(user), ERROR_LABEL, attempt.error, false);
    return this.inner.recordAttempt(endpointId, messageId, { ...attempt, error: sealed === null ? null : JSON.stringify(sealed) });
  }

  async get(endpointId: string, messageId: string): Promise<OutboxMessage | null> {
    return this.open(await this.inner.get(endpointId, messageId));
  }

  async list(endpointId: string, query: OutboxListQuery): Promise<OutboxMessage[]> {
    return Promise.all((await this.inner.list(endpointId, query)).map((message) => this.open(message)));
  }

  redeliver(endpointId: string, messageId: string, now: string): Promise<boolean> {
    return this.inner.redeliver(endpointId, messageId, now);
  }

  stats(): Promise<EndpointQueueStats[]> {
    return this.inner.stats();
  }

  failingSince(endpointId: string): Promise<string | null> {
    return this.inner.failingSince(endpointId);
  }

  setFailingSince(endpointId: string, since: string | null): Promise<void> {
    return this.inner.setFailingSince(endpointId, since);
  }

  removeDelivered(before: string, limit: number): Promise<number> {
    return this.inner.removeDelivered(before, limit);
  }

  removeEndpoint(endpointId: string): Promise<void> {
    return this.inner.removeEndpoint(endpointId);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
