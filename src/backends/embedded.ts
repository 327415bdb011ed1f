import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { privateFile } from '../private-files.js';
import { databasePath, openSqlite } from '../adapters/sqlite/sqlite-database.js';
import { SqliteEventStore } from '../adapters/sqlite/sqlite-event-store.js';
import { SqliteKeyStore } from '../adapters/sqlite/sqlite-key-store.js';
import { SqliteRateLimitStore } from '../adapters/sqlite/sqlite-rate-limit-store.js';
import { SqliteReadStore } from '../adapters/sqlite/sqlite-read-store.js';
import { SqliteWebhookOutbox } from '../adapters/sqlite/sqlite-webhook-outbox.js';
import { PersonalDataCipher } from '../application/privacy/personal-data-cipher.js';
import { PersonalDataEventStore } from '../application/privacy/personal-data-event-store.js';
import { PersonalDataOutbox } from '../application/privacy/personal-data-outbox.js';
import { checkpointInBackground } from '../adapters/sqlite/wal-checkpointer.js';
import { DeferredWalPurges, openedFiles, removeWalOfReplacedFile, truncateWals } from '../adapters/sqlite/wal-sync.js';
import { StoreUnavailableError } from '../ports/event-store.js';
import type { Logger } from '../ports/logger.js';
import { SqliteProjectorLock } from '../adapters/sqlite/projector-lock.js';
import type { Backend, ExclusiveWork } from './backend.js';

/**
 * How often a standby projector tries to take over a DATA_DIR whose projector may have stopped (a
 * failed exclusive transaction on the lock file, microseconds): a quarter of a second, so the
 * takeover, its start included, comes within a second of the holder's end (kill probe: a 1 s poll
 * made it 0.7–1.1 s).
 */
const STANDBY_RETRY_MS = 250;
/** How often the projector checks that the lock file is still the one it holds (a `stat`). */
const LOCK_FILE_CHECK_MS = 1_000;

/**
 * Runs `work` while this process holds the DATA_DIR's projector lock. Taken at start when free
 * (the work then starts before the service answers, as it always did); otherwise this process
 * serves the API as a standby, and takes over within a second of the holder's end, a crash
 * included. Two projectors on one DATA_DIR would fight over every checkpoint and deliver each
 * webhook twice. A lock file deleted under the holder is taken again within a second.
 */
function whileHoldingLock(openLock: () => SqliteProjectorLock, work: ExclusiveWork, logger: Logger): ExclusiveWork {
  let lock: SqliteProjectorLock | null = null; // opened at start: an API-only process never opens it
  let timer: NodeJS.Timeout | null = null;
  let attempt: Promise<void> = Promise.resolve();
  let holding = false;
  let running = false;
  let watch: NodeJS.Timeout | null = null;
  let lostLogged = false;
  /** While held: a deleted lock file is taken again at once, before another process starts on a new one. */
  const keepOnItsFile = () => {
    let kept: ReturnType<SqliteProjectorLock['keepOnItsFile']>;
    try {
      kept = lock!.keepOnItsFile();
    } catch (error) {
      logger.error({ err: error }, 'projector.lock could not be checked; trying again');
      return;
    }
    if (kept === 'renewed') logger.warn({}, 'projector.lock was deleted while this process projected: it holds the new one');
    if (kept === 'lost' && !lostLogged) {
      lostLogged = true;
      logger.error({}, 'projector.lock was replaced and another process holds the new one: two processes project this DATA_DIR; stop one of them');
    }
  };
  const take = async (): Promise<boolean> => {
    lock ??= openLock();
    if (!lock.tryTake()) return false;
    holding = true;
    watch = setInterval(keepOnItsFile, LOCK_FILE_CHECK_MS).unref();
    try {
      await work.start();
    } catch (error) {
      holding = false;
      if (watch) clearInterval(watch);
      await work.stop().catch(() => {});
      lock.release();
      throw error;
    }
    return true;
  };
  const standBy = () => {
    timer = setTimeout(() => {
      timer = null;
      attempt = take()
        .then((taken) => {
          if (taken) logger.info({}, 'the projector of this DATA_DIR stopped: projecting here now');
          else if (running) standBy();
        })
        .catch((error: unknown) => {
          logger.error({ err: error }, 'taking over the projector failed; trying again');
          if (running) standBy();
        });
    }, STANDBY_RETRY_MS);
    timer.unref();
  };
  return {
    async start() {
      running = true;
      if (await take()) return;
      logger.info({}, 'another process projects this DATA_DIR: standing by to take over its projection');
      standBy();
    },
    async stop() {
      running = false;
      if (timer) clearTimeout(timer);
      if (watch) clearInterval(watch);
      timer = null;
      await attempt;
      if (holding) await work.stop();
      holding = false;
      lock?.release();
    },
  };
}

/** The embedded rate-limit counters' file, beside the events' file in DATA_DIR. */
export const RATE_LIMITS_FILE = 'rate-limits.db';

/**
 * Rate-limit counters live in their own file under the same DATA_DIR, so every service on that
 * directory shares the limits. Not in the events' file: a write by another connection makes
 * SQLite drop the page cache of the events' connection, which cost a third of the claim rate
 * when every request wrote a counter there. A counter lost to a power cut is harmless.
 * secure_delete: counters are keyed by client IP addresses too, personal data that should not
 * stay in free pages once a window's counter is gone.
 */
function openRateLimitConnection(dataDir: string): Database.Database {
  return openBesideEvents(dataDir, RATE_LIMITS_FILE);
}

/**
 * A SQLite file of its own in DATA_DIR, beside the events' file: WAL, the same busy timeout,
 * `secure_delete` (freed bytes are zeroed), and commits that do not wait for the disk (`synchronous = NORMAL`); a store whose writes must be
 * durable before it answers syncs the WAL itself (src/adapters/sqlite/wal-sync.ts).
 */
function openBesideEvents(dataDir: string, file: string): Database.Database {
  const db = new Database(privateFile(dataDir, file));
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('synchronous = NORMAL');
  db.pragma('secure_delete = ON');
  return db;
}

/** The embedded data keys' file (SPEC §13), beside the events' file in DATA_DIR. */
const DATA_KEYS_FILE = 'data-keys.db';

/**
 * Data keys in their own file, so an operator can back it up (and expire its backups) apart
 * from the log: a restored old copy of this file would bring erased keys back. The key store
 * syncs the WAL itself before it hands out a new key (src/adapters/sqlite/sqlite-key-store.ts),
 * so the commits do not wait for the disk.
 */
export function openKeyConnection(dataDir: string): Database.Database {
  return openBesideEvents(dataDir, DATA_KEYS_FILE);
}

/**
 * A log with encrypted personal values whose data keys are not beside it: a copy of
 * `referrals.db` restored or moved without its `data-keys.db`. Opened as it is, a fresh empty key
 * store would be created and every personal value would read as erased, silently; refused
 * instead, before anything is created.
 */
class MissingKeyStoreError extends Error {
  constructor(dataDir: string) {
    super(
      `${path.join(dataDir, DATA_KEYS_FILE)} is missing, but the log in ${path.join(dataDir, 'referrals.db')} holds encrypted personal data: ` +
        'restore data-keys.db from the same backup or directory as referrals.db (without it every personal value would read as erased). Nothing was created.',
    );
    this.name = 'MissingKeyStoreError';
  }
}

/**
 * Data keys without the log they were made for: `referrals.db` deleted, moved or not restored
 * beside its `data-keys.db`. Opened as it is, an empty log would be created and the service would
 * start as new, every user and setting gone; refused instead, before anything is created.
 */
class MissingLogError extends Error {
  constructor(dataDir: string, keys: number) {
    super(
      `${path.join(dataDir, 'referrals.db')} is missing (or empty), but ${path.join(dataDir, DATA_KEYS_FILE)} beside it holds ${keys} data key${keys === 1 ? '' : 's'}: ` +
        'restore referrals.db (with its -wal file, if any) from the same backup or directory as data-keys.db. To start afresh on purpose, ' +
        'move data-keys.db away as well. Nothing was created.',
    );
    this.name = 'MissingLogError';
  }
}

/** How many data keys the key store's file holds, without creating or changing it (0 when there is none). */
function dataKeysIn(dataDir: string): number {
  const file = path.join(dataDir, DATA_KEYS_FILE);
  if (!fs.existsSync(file)) return 0;
  const keys = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const table = keys.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'data_keys'").get();
    return table === undefined ? 0 : (keys.prepare('SELECT COUNT(*) AS n FROM data_keys').get() as { n: number }).n;
  } catch {
    return 0; // unreadable here: the key store's own open says why
  } finally {
    keys.close();
  }
}

/** Whether the log's file is absent or empty (a file SQLite never wrote a page to). */
function logMissing(dataDir: string): boolean {
  const file = databasePath(dataDir);
  return !fs.existsSync(file) || fs.statSync(file).size === 0;
}

/** Whether any event holds an encrypted personal value (read once, when the key store's file is missing). */
function holdsEncryptedValues(db: Database.Database): boolean {
  // Encrypted values are stored as {"$encrypted":"pd1.…"}; a client's text cannot take that shape unescaped.
  return db.prepare(`SELECT 1 FROM events WHERE data LIKE '%"$encrypted":"pd1.%' LIMIT 1`).get() !== undefined;
}

/**
 * The log's connection, once the log and its data keys are found together: data keys without
 * their log, or a log holding encrypted values without its keys, are refused before anything is
 * created (the service, and every script that opens a data directory: `migrate-events` too).
 */
export function openLogBesideItsKeys(dataDir: string): Database.Database {
  if (logMissing(dataDir)) {
    const keys = dataKeysIn(dataDir);
    if (keys > 0) throw new MissingLogError(dataDir, keys);
  }
  const db = openSqlite(dataDir);
  if (!fs.existsSync(path.join(dataDir, DATA_KEYS_FILE)) && holdsEncryptedValues(db)) {
    db.close();
    throw new MissingKeyStoreError(dataDir);
  }
  return db;
}

/** The embedded webhook outbox's file, beside the events' file in DATA_DIR. */
export const WEBHOOKS_FILE = 'webhooks.db';

/**
 * The outgoing webhook outbox (messages, attempts, the feed's checkpoint) in its own file. Not in
 * the events' file: every delivery attempt writes a row, and a write by another connection makes
 * SQLite drop the events' connection's page cache, which the API then pays for while webhooks are
 * delivered. Without an fsync per commit (synchronous=NORMAL, WAL): a power cut may forget the
 * last attempts or feed pages, which are then sent or fed again (what at-least-once allows),
 * never the events themselves. secure_delete: a delivered message's payload is zeroed when its
 * endpoint is deleted.
 */
function openOutboxConnection(dataDir: string): Database.Database {
  return openBesideEvents(dataDir, WEBHOOKS_FILE);
}

export interface EmbeddedOptions {
  /**
   * Empty the WALs when opening (the service's start: `npm start`, `npm run projector`). A purge
   * an erasure had to defer lives in memory only, so a stop or a crash before it ran leaves erased
   * pages, destroyed keys among them, in a WAL; the start empties them, at once or as soon as a
   * reader holding one lets go. Scripts that open the files beside a running service do not.
   */
  purgeWalsOnOpen?: boolean;
}

/**
 * Events and read models in one SQLite file under `dataDir` (WAL); rate-limit counters, data keys
 * and the webhook outbox each in their own file beside it. Their WALs are checkpointed on a
 * background thread (src/adapters/sqlite/wal-checkpointer.ts), not by the commits of requests.
 */
export function openEmbeddedBackend(dataDir: string, logger?: Logger, options: EmbeddedOptions = {}): Backend {
  const db = openLogBesideItsKeys(dataDir);
  const limitsDb = openRateLimitConnection(dataDir);
  const keysDb = openKeyConnection(dataDir);
  const keyStore = new SqliteKeyStore(keysDb);
  const cipher = new PersonalDataCipher(keyStore);
  const eventStore = new PersonalDataEventStore(new SqliteEventStore(db), cipher);
  const readStore = new SqliteReadStore(db);
  const rateLimits = new SqliteRateLimitStore(limitsDb);
  const outboxDb = openOutboxConnection(dataDir);
  let projectorLock: SqliteProjectorLock | undefined; // opened when a projector starts, never by scripts
  const lockOfProjector = () => {
    projectorLock ??= new SqliteProjectorLock(dataDir);
    return projectorLock;
  };
  const connections = [db, limitsDb, keysDb, outboxDb];
  const opened = connections.filter((connection) => !connection.memory).map(openedFiles);
  const onFailure = (file: string, message: string) =>
    logger?.warn({ file, error: message }, 'background WAL checkpoint failing; trying again (logged again each minute it goes on)');
  const onRecovery = (file: string) => logger?.info({ file }, 'background WAL checkpoint works again');
  const stopCheckpoints = connections.map((connection) => checkpointInBackground(connection, { onFailure, onRecovery }));
  const purges = new DeferredWalPurges();
  if (options.purgeWalsOnOpen) {
    for (const connection of [db, keysDb, outboxDb]) purges.addUnlessEmptied(connection);
  }
  return {
    name: 'embedded',
    eventStore,
    keyStore,
    readStore,
    rateLimits,
    webhookOutbox: new PersonalDataOutbox(new SqliteWebhookOutbox(outboxDb), cipher),
    exclusively: (work, workLogger) => whileHoldingLock(lockOfProjector, work, workLogger),
    // secure_delete (src/adapters/sqlite/sqlite-database.ts) zeroes what an erasure overwrote in
    // the database file; the WAL still holds the older page images until checkpointed.
    async purgeOverwritten() {
      const busy = await truncateWals([db, keysDb, outboxDb]);
      for (const connection of busy) purges.add(connection);
      const deferred = busy.map((connection) => path.basename(connection.name));
      if (deferred.length > 0) {
        throw new StoreUnavailableError(`A reader holds the WAL of ${deferred.join(', ')}; it is emptied as soon as the reader lets go`);
      }
    },
    async close() {
      purges.stop();
      await eventStore.close();
      await readStore.close();
      await rateLimits.close();
      await keyStore.close();
      await Promise.all(stopCheckpoints.map((stop) => stop()));
      for (const connection of connections) connection.close();
      for (const files of opened) {
        if (removeWalOfReplacedFile(files))
          logger?.warn(
            { file: files.name },
            'the WAL of the file replaced while the service ran was removed, so it is not replayed into the file now in its place',
          );
      }
      projectorLock?.close();
    },
  };
}
