import type { EventStore } from '../ports/event-store.js';
import type { KeyStore } from '../ports/key-store.js';
import type { Logger } from '../ports/logger.js';
import type { RateLimitStore } from '../ports/rate-limit-store.js';
import type { ReadStore } from '../ports/read-store.js';
import type { WebhookOutbox } from '../ports/webhook-outbox.js';

/** Work only one process may do at a time: the projector (read models, reactions, sweeps). */
export interface ExclusiveWork {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** A pair of stores behind the ports: embedded (SQLite) or external (EventStoreDB + MongoDB). */
export interface Backend {
  name: 'embedded' | 'external';
  /** The log, with personal fields encrypted on append and decrypted on read (SPEC §13). */
  eventStore: EventStore;
  /** Per-user data keys of personal fields, outside the log (erasure destroys them). */
  keyStore: KeyStore;
  /**
   * After an erasure: makes the store drop copies of overwritten data it may still hold
   * (embedded: checkpoints the WAL into the database file and truncates it). No-op elsewhere.
   */
  purgeOverwritten(): Promise<void>;
  readStore: ReadStore;
  /** Rate-limit counters shared by every instance on this backend (SPEC §13). */
  rateLimits: RateLimitStore;
  /** Outgoing deliveries (webhooks, partner fulfilment) and their feed checkpoint. */
  webhookOutbox: WebhookOutbox;
  /**
   * Runs `work` while this process may: while holding the DATA_DIR's projector lock on the
   * embedded backend, the projector lease on the external one. A second projector serves the
   * API and waits as a hot standby.
   */
  exclusively(work: ExclusiveWork, logger: Logger): ExclusiveWork;
  close(): Promise<void>;
}
