/**
 * Personal fields (SPEC §13): the one place that says which fields of which events hold
 * personal data. Every value at these paths is stored encrypted with its owner's data key
 * (src/application/privacy/personal-data-cipher.ts) and erased by destroying that key. A later
 * feature that adds a personal field adds its path here, and nowhere else.
 *
 * `owner` says whose key: `stream-user` = the user of the `user-{app_user_id}` stream the event
 * is in; `customer` = the payment customer named by the value itself (an inbound notification
 * may arrive before any user has that customer id; erasing a user also destroys the keys of
 * every payment customer id it ever had).
 */
type PersonalOwner = 'stream-user' | 'customer';

export interface PersonalField {
  path: readonly string[];
  owner: PersonalOwner;
}

const PERSONAL_FIELDS: Readonly<Record<string, readonly PersonalField[]>> = {
  UserRegistered: [
    { path: ['metadata'], owner: 'stream-user' },
    { path: ['payment_customer_id'], owner: 'stream-user' },
  ],
  UserProfileUpdated: [
    { path: ['changes', 'metadata'], owner: 'stream-user' },
    { path: ['changes', 'payment_customer_id'], owner: 'stream-user' },
  ],
  NotificationReceived: [{ path: ['notification', 'match', 'customer_id'], owner: 'customer' }],
};

/** A personal field as the log stores it: encrypted under its owner's data key. */
export interface SealedValue {
  readonly $encrypted: string;
}

/** A personal field as a read model keeps it: sealed, or clear when the log holds it clear (written before encryption). */
export type Stored<T> = T | SealedValue;

/**
 * What a read model keeps of a personal field at `path` of `event.data`: the value as the log
 * stores it (`event.sealed`), else the value as read (clear in the log, or erased: null). So
 * read models hold no clear personal value, and an erasure's destroyed key makes their every
 * copy unreadable too (old pages of a database file, backups, a MongoDB oplog). Their readers
 * open it: src/application/privacy/personal-read-models.ts.
 */
export function storedValue<T>(event: { sealed?: Readonly<Record<string, SealedValue>> }, path: string, value: T): Stored<T> {
  return event.sealed?.[path] ?? value;
}

/** The user profile fields erasure sets to null (the personal fields of UserRegistered). */
export const PERSONAL_PROFILE_FIELDS = ['metadata', 'payment_customer_id'] as const;

/**
 * Outgoing webhook messages built from these events carry personal fields at these paths of
 * the message body (src/domain/webhooks/message-catalogue.ts copies the event's data).
 */
export const PERSONAL_MESSAGE_FIELDS: Readonly<Record<string, readonly (readonly string[])[]>> = {
  'user.created': [
    ['data', 'metadata'],
    ['data', 'payment_customer_id'],
  ],
};

/** What `GET /admin/events`, the export and the access export show in place of an erased value. */
export const ERASED = Object.freeze({ erased: true as const });

export function personalFieldsOf(type: string): readonly PersonalField[] {
  return Object.hasOwn(PERSONAL_FIELDS, type) ? PERSONAL_FIELDS[type]! : [];
}

/** A copy of `data` with `value` at `path` (copies only the objects on the path). */
export function withValueAt<T>(data: T, path: readonly string[], value: unknown): T {
  if (path.length === 0) return value as T;
  const [head, ...rest] = path as [string, ...string[]];
  const source = data as Record<string, unknown>;
  const copy: Record<string, unknown> = { ...source };
  Object.defineProperty(copy, head, { value: withValueAt(source[head], rest, value), enumerable: true, writable: true, configurable: true });
  return copy as T;
}
