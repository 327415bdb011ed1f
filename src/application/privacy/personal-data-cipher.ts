import { LRUCache } from 'lru-cache';
import { createCipheriv, createDecipheriv, createHash, createSecretKey, type KeyObject } from 'node:crypto';
import { appUserIdOf } from '../../domain/events/index.js';
import { type PersonalField, personalFieldsOf, withValueAt } from '../../domain/privacy/personal-fields.js';
import { valueAt } from '../../domain/json-object.js';
import { pooledRandomBytes } from '../pooled-random-bytes.js';
import type { RecordedEvent } from '../../ports/event-store.js';
import type { DataKey, KeyStore } from '../../ports/key-store.js';

/**
 * AES-256-GCM for personal fields (SPEC §13). An encrypted value is stored in place of the plain
 * one as `{"$encrypted": "pd1.<key id>.<iv>.<ciphertext>.<tag>"}` (base64url parts): the key id
 * names the data key in the key store; the additional data binds it to the key id and the
 * field's name, so a value cannot be moved to another field unnoticed. A value whose key is gone
 * (erased) reads as null.
 */
const PREFIX = 'pd1';
const FIELD = '$encrypted';

export type Envelope = { [FIELD]: string };

export function isEnvelope(value: unknown): value is Envelope {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  const text = (value as Record<string, unknown>)[FIELD];
  return keys.length === 1 && typeof text === 'string' && text.startsWith(`${PREFIX}.`);
}

export function keyIdOf(envelope: Envelope): string {
  return envelope[FIELD].split('.')[1] ?? '';
}

class PersonalDataCorruptError extends Error {
  override name = 'PersonalDataCorruptError';
}

/**
 * The key as a KeyObject, made once per key id and kept for the next values under it. Node 24
 * takes a raw Buffer key through a slow check in createCipheriv/createDecipheriv (about 13 µs a
 * call against 3 µs with a KeyObject), and a KeyObject's first use costs about as much again: a
 * read model opening a user's fields on every answer would pay both each time (the key store
 * hands out a new DataKey per look-up). Only keys the key store has just handed out reach this,
 * so a destroyed key is never used from here; the material is compared so an id can never open
 * with another key's. A key stays in memory at most KEY_OBJECT_TTL_MS after its last use (swept
 * at the next use of any key, at most once a second), and an erasure in this process drops its keys at once
 * (`forgetKeysOf`); at most KEY_OBJECTS_KEPT are kept.
 */
const KEY_OBJECTS_KEPT = 10_000;
const KEY_OBJECT_TTL_MS = 60_000;
/** Least recently used dropped first (lru-cache: a Map used as one walks over its deleted slots). */
const keyObjects = new LRUCache<string, { subject: string; material: Buffer; keyObject: KeyObject; usedAt: number }>({ max: KEY_OBJECTS_KEPT });
/** When keys past their time were last dropped (at most once a second: a look at the oldest is not free). */
let sweptAt = 0;
function keyObjectOf(key: DataKey): KeyObject {
  const now = Date.now();
  if (now - sweptAt >= 1_000 || now < sweptAt) {
    sweptAt = now;
    dropKeysUnusedSince(now - KEY_OBJECT_TTL_MS);
  }
  const kept = keyObjects.get(key.id);
  if (kept?.material.equals(key.key)) {
    kept.usedAt = now;
    return kept.keyObject;
  }
  const keyObject = createSecretKey(key.key);
  keyObjects.set(key.id, { subject: key.subject, material: Buffer.from(key.key), keyObject, usedAt: now });
  return keyObject;
}

/** Drops the keys last used before `time`, the least recently used first. */
function dropKeysUnusedSince(time: number): void {
  for (let oldest = keyObjects.rkeys().next().value; oldest !== undefined; oldest = keyObjects.rkeys().next().value) {
    if (keyObjects.peek(oldest)!.usedAt >= time) return;
    keyObjects.delete(oldest);
  }
}

/** Drops the kept keys of `subject` (its key was just destroyed: erasure). */
export function forgetKeysOf(subject: string): void {
  const ids = [...keyObjects.entries()].filter(([, kept]) => kept.subject === subject).map(([id]) => id);
  for (const id of ids) keyObjects.delete(id);
}

/** How many keys are kept in memory (tests). */
export function keptKeyCount(subject: string): number {
  return [...keyObjects.values()].filter((kept) => kept.subject === subject).length;
}

/** Initialisation vectors, 12 random bytes each, never reused (see pooledRandomBytes). */
const IV_BYTES = 12;

export function encryptValue(key: DataKey, label: string, value: unknown): Envelope {
  const iv = pooledRandomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyObjectOf(key), iv);
  cipher.setAAD(Buffer.from(`${key.id}:${label}`));
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  const parts = [PREFIX, key.id, iv.toString('base64url'), ciphertext.toString('base64url'), cipher.getAuthTag().toString('base64url')];
  return { [FIELD]: parts.join('.') };
}

/** The plain value, or `undefined` when `keys` lacks its key (destroyed: erased). */
export function decryptValue(keys: ReadonlyMap<string, DataKey>, label: string, envelope: Envelope): unknown {
  const [, keyId, iv, ciphertext, tag] = envelope[FIELD].split('.') as [string, string, string, string, string];
  const key = keys.get(keyId);
  if (!key) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyObjectOf(key), Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(`${keyId}:${label}`));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    const plain = Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    return JSON.parse(plain) as unknown;
  } catch (error) {
    throw new PersonalDataCorruptError(`A personal field (${label}) under key ${keyId} does not decrypt: ${(error as Error).message}`);
  }
}

/** The key-store subject of a user. */
export function userSubject(appUserId: string): string {
  return `user:${appUserId}`;
}

/**
 * The key-store subject of the payment-customer digest key (the `payment_customer_claimers` rule's
 * counters, src/application/fraud/payment-customer-claimers.ts): a key of the deployment, which no
 * erasure destroys.
 */
export const PAYMENT_CUSTOMER_DIGEST_SUBJECT = 'service:payment-customer-digest';

/** The key-store subject of a payment customer id (a digest: the key store holds no plain id). */
export function customerSubject(customerId: string): string {
  return `customer:${createHash('sha256').update(customerId, 'utf8').digest('hex')}`;
}

function labelOf(path: readonly string[]): string {
  return path[path.length - 1]!;
}

function subjectOf(field: PersonalField, stream: string, value: unknown): string | null {
  if (field.owner === 'customer') return typeof value === 'string' ? customerSubject(value) : null;
  const user = appUserIdOf(stream);
  return user === null ? null : userSubject(user);
}

/** How reveal shows an erased value: null (the application's view) or a marker object (the log's view). */
export type ErasedAs = null | Readonly<Record<string, unknown>>;

/**
 * Encrypts and decrypts personal fields with the keys of a KeyStore. The one boundary is the
 * event store (PersonalDataEventStore); snapshots and webhook messages use the same values.
 */
export class PersonalDataCipher {
  constructor(readonly keys: KeyStore) {}

  /** `data` with every personal field that holds a value encrypted under its owner's key. */
  async protect(stream: string, type: string, data: Record<string, unknown>): Promise<Record<string, unknown>> {
    let result = data;
    for (const field of personalFieldsOf(type)) {
      const value = valueAt(result, field.path);
      if (value === undefined || value === null || isEnvelope(value)) continue;
      const subject = subjectOf(field, stream, value);
      if (subject === null) continue;
      result = withValueAt(result, field.path, encryptValue(await this.keys.keyFor(subject), labelOf(field.path), value));
    }
    return result;
  }

  /** The events with their personal fields decrypted; values whose key is gone become `erasedAs` and are listed in `erased`. */
  async reveal(events: RecordedEvent[], erasedAs: ErasedAs = null): Promise<RecordedEvent[]> {
    const keys = await this.keysFor(events.map((event) => ({ type: event.type, data: event.data })));
    if (keys === null) return events;
    return events.map((event) => {
      const { data, erased, sealed } = this.revealData(event.type, event.data, keys, erasedAs);
      if (erased.length === 0 && data === event.data) return event;
      return { ...event, data, ...(erased.length > 0 ? { erased } : {}), ...(sealed === null ? {} : { sealed }) };
    });
  }

  /** The keys the personal fields of these events need, in one look-up; null when none is encrypted. */
  async keysFor(events: { type: string; data: unknown }[]): Promise<Map<string, DataKey> | null> {
    const ids: string[] = [];
    for (const event of events) {
      for (const field of personalFieldsOf(event.type)) {
        const value = valueAt(event.data, field.path);
        if (isEnvelope(value)) ids.push(keyIdOf(value));
      }
    }
    return ids.length === 0 ? null : this.keys.keysById(ids);
  }

  /** `erasedAs: 'keep'` leaves a value whose key is gone as it is stored (re-encryption). */
  revealData(type: string, data: Record<string, unknown>, keys: ReadonlyMap<string, DataKey>, erasedAs: ErasedAs | 'keep') {
    let result = data;
    const erased: string[] = [];
    let sealed: Record<string, Envelope> | null = null;
    for (const field of personalFieldsOf(type)) {
      const value = valueAt(result, field.path);
      if (!isEnvelope(value)) continue;
      const plain = decryptValue(keys, labelOf(field.path), value);
      if (plain === undefined) erased.push(field.path.join('.'));
      else sealed = { ...(sealed ?? {}), [field.path.join('.')]: value };
      if (plain === undefined && erasedAs === 'keep') continue;
      result = withValueAt(result, field.path, plain === undefined ? erasedAs : plain);
    }
    return { data: result, erased, sealed };
  }

  /**
   * The events' data for another store whose keys are `target`'s (`npm run migrate-events`):
   * values decrypted with these keys and encrypted again with the target's, plain ones (written
   * before encryption) encrypted, erased ones left as they are (unreadable there too).
   */
  async reencrypt<E extends { stream: string; type: string; data: Record<string, unknown> }>(events: E[], target: PersonalDataCipher): Promise<E[]> {
    const keys = (await this.keysFor(events)) ?? new Map<string, DataKey>();
    return Promise.all(
      events.map(async (event) => {
        if (personalFieldsOf(event.type).length === 0) return event;
        const { data } = this.revealData(event.type, event.data, keys, 'keep');
        const protectedData = await target.protect(event.stream, event.type, data);
        return protectedData === event.data ? event : { ...event, data: protectedData };
      }),
    );
  }

  /** `value` sealed under the subject's current key; null when the subject has no key (erased) and `create` is false. */
  async seal(subject: string, label: string, value: unknown, create = true): Promise<Envelope | null> {
    const key = create ? await this.keys.keyFor(subject) : await this.keys.existingKey(subject);
    return key === null ? null : encryptValue(key, label, value);
  }

  /** A sealed value opened; undefined when its key is gone. */
  async open(label: string, envelope: Envelope): Promise<unknown> {
    return decryptValue(await this.keys.keysById([keyIdOf(envelope)]), label, envelope);
  }
}
