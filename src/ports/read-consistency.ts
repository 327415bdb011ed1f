import { StoreUnavailableError } from './event-store.js';

export interface ProjectionStatus {
  name: string;
  version: number;
  /** Version the stored read model was built with; differs from `version` → replay needed. */
  storedVersion: number;
  checkpoint: bigint | null;
  failure: { position: string; eventId: string; error: string } | null;
}

/**
 * How long a request (or a delivery) waits for the read models it needs before it gives up:
 * a request then answers 503 (ReadModelsBehindError) with nothing done.
 */
export const READ_MODELS_WAIT_MS = 5_000;

/** Where the read models stand: for read-your-writes, readiness and metrics. */
export interface ReadConsistency {
  /**
   * true once every read model (or only `projection`, when named) has passed `position`;
   * false if `timeoutMs` ran out first.
   */
  waitFor(position: bigint, timeoutMs: number, projection?: string): Promise<boolean>;
  projections(): Promise<ProjectionStatus[]>;
}

/**
 * A request answered 503 SERVICE_UNAVAILABLE (Retry-After) because the read models it needs are
 * behind the log: refused with nothing done, unless it is a WriteRecordedError. Its message
 * (shown to the client) says which, unlike the generic message of an unreachable store.
 */
export class ReadModelsBehindError extends StoreUnavailableError {
  override name = 'ReadModelsBehindError';
}

/**
 * A write recorded whose answer cannot show it: the read models did not include it within
 * READ_MODELS_WAIT_MS (no projector runs on the store, or it is far behind). The answer would
 * contradict the write (a claim answered with no referrer), so the client is told instead.
 */
export class WriteRecordedError extends ReadModelsBehindError {
  override name = 'WriteRecordedError';

  constructor() {
    super('The write is recorded, but the read models are behind it: read it later, and repeat a grant or withdrawal only with its operation_id');
  }
}
