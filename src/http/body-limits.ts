/** A size limit as the answers and the documents state it: `64 KiB`, `4 MiB`. */
export const sizeText = (bytes: number): string => (bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes / 1024} KiB`);

/** JSON bodies: 64 KiB, but for the bulk uploads. */
export const BODY_LIMIT = 64 * 1024;

/**
 * The admin uploads of up to 10,000 items (a pool's codes, SPEC §7.5; a `blocked_users` rule's
 * ids, §13) take bodies up to 4 MiB: at 64 KiB a call held about 1,200 codes, not the 10,000 the
 * SPEC allows. Only these two secret-key operations; every other body stays at 64 KiB. One such
 * upload is one append: an EventStoreDB server must take appends of twice this size
 * (`EVENTSTORE_MAX_APPEND_SIZE`, docker-compose.yml; its default is 1 MiB).
 */
export const BULK_BODY_LIMIT = 4 * 1024 * 1024;

/** A notification to POST /webhooks/{provider} (SPEC §11): read as raw bytes (signatures cover them). */
export const WEBHOOK_BODY_LIMIT = 1024 * 1024;
