import { inject, injectable } from 'tsyringe';
import type { Logger } from '../ports/logger.js';
import type { ReadConsistency } from '../ports/read-consistency.js';
import { TOKENS } from '../ports/tokens.js';

const WAIT_MS = 5_000;

/** After a command: wait (bounded) until the read models include its events. */
@injectable()
export class ReadYourWrites {
  constructor(
    @inject(TOKENS.ReadConsistency) private readonly consistency: ReadConsistency,
    @inject(TOKENS.Logger) private readonly logger: Logger,
  ) {}

  async after(position: bigint | null): Promise<void> {
    if (position === null) return;
    const reached = await this.consistency.waitFor(position, WAIT_MS);
    if (!reached) this.logger.warn({ position: position.toString() }, 'read models did not catch up in time; answering from them anyway');
  }
}
