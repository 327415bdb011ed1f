/**
 * Per-subject data keys for personal fields (SPEC §13, crypto-shredding), kept outside the event
 * log: a key destroyed here makes every value encrypted under it unreadable for good. A subject
 * is `user:{app_user_id}` or `customer:{sha256 of a payment customer id}`
 * (src/domain/privacy/personal-fields.ts), or `service:{name}` for a key of the deployment's
 * own that no erasure destroys (src/application/privacy/personal-data-cipher.ts). A subject has
 * at most one key at a time.
 */
export interface DataKey {
  /** Names the key inside each encrypted value; never reused. */
  id: string;
  subject: string;
  /** 32 bytes (AES-256). */
  key: Buffer;
}

export interface KeyStore {
  /**
   * The subject's key, created when it has none: from `material` (32 bytes) when given, else
   * random. Concurrent calls from any process for one subject answer the same key; a key that
   * exists wins over `material`.
   */
  keyFor(subject: string, material?: Buffer): Promise<DataKey>;
  /** The subject's key, or null when it has none (never created, or destroyed). */
  existingKey(subject: string): Promise<DataKey | null>;
  /** Keys by id; ids of destroyed (or unknown) keys are absent from the map. */
  keysById(ids: readonly string[]): Promise<Map<string, DataKey>>;
  /** Destroys the subject's key; how many were destroyed (0: none, e.g. a second erasure). */
  destroy(subject: string): Promise<number>;
  /**
   * Optional, as EventStore's: why no new key can be made durable any more, until the process
   * restarts (the embedded key file's failed sync, or the file removed or replaced); null while
   * keys can be made. Readiness reports it, through the event store that seals with these keys.
   */
  writeFailure?(): Error | null;
  close(): Promise<void>;
}
