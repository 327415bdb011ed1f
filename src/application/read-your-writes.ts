import { inject, injectable } from 'tsyringe';
import type { EventStore } from '../ports/event-store.js';
import type { Logger } from '../ports/logger.js';
import { READ_MODELS_WAIT_MS, type ReadConsistency, ReadModelsBehindError, WriteRecordedError } from '../ports/read-consistency.js';
import { TOKENS } from '../ports/tokens.js';

/**
 * After a command: wait (bounded) until the read models include its events; else 503
 * (WriteRecordedError, or ReadModelsBehindError saying nothing was written).
 */
@injectable()
export class ReadYourWrites {
  constructor(
    @inject(TOKENS.ReadConsistency) private readonly consistency: ReadConsistency,
    @inject(TOKENS.EventStore) private readonly store: EventStore,
    @inject(TOKENS.Logger) private readonly logger: Logger,
  ) {}

  /**
   * Waits for `position`. null — the command wrote nothing itself (an idempotent repeat, or
   * work another request or reaction did first), or pooled codes are being handed out — waits
   * for everything committed so far, so the answer still reflects the state the decision saw.
   * Not reached in time: 503, saying whether the command wrote (`wrote`) or nothing at all.
   */
  async after(position: bigint | null, wrote = position !== null): Promise<void> {
    const target = position ?? (await this.store.headPosition());
    if (target === null) return;
    const reached = await this.consistency.waitFor(target, READ_MODELS_WAIT_MS);
    if (reached) return;
    this.logger.warn({ position: target.toString(), wrote }, 'read models did not catch up in time: answered 503');
    if (wrote) throw new WriteRecordedError();
    throw new ReadModelsBehindError('The read models are behind the log: nothing was written, but the answer cannot be shown yet; retry later');
  }
}
