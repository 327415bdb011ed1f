import { inject, injectable } from 'tsyringe';
import { DomainError } from '../../domain/domain-error.js';
import type { CodeType } from '../../domain/events/code-events.js';
import { streams } from '../../domain/events/index.js';
import type { Ids } from '../../ports/ids.js';
import { TOKENS } from '../../ports/tokens.js';
import { type CommandContext, EventLog, type LoggedEvent } from '../event-log.js';
import { StreamExecutor } from '../stream-executor.js';
import { withWriteRetries } from '../write-retries.js';

/** Whether a code stream's first event reserves it to this owner. */
function reservedTo(first: LoggedEvent | undefined, type: CodeType, ownerId: string): boolean {
  return first?.type === 'CodeReserved' && first.data.type === type && first.data.owner_id === ownerId;
}

const codeTaken = (code: string, source: string) => new DomainError('CODE.TAKEN', `Code ${code} is already in use`, source);

/** A random referral code that someone else reserved first: another one is drawn. */
class CodeDrawnTwice extends Error {}

/**
 * The shared namespace of referral, promo and affiliate codes. A code belongs to whoever
 * first appends `CodeReserved` to `code-{CODE}`, the stream's first event: an append that
 * expects no stream, through the write path like every other.
 */
@injectable()
export class CodeRegistry {
  constructor(
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(EventLog) private readonly log: EventLog,
    @inject(TOKENS.Ids) private readonly ids: Ids,
  ) {}

  /** Reserves `code` for the owner; idempotent for the same owner, CODE.TAKEN for another. */
  async reserve(code: string, type: CodeType, ownerId: string, context: CommandContext, source = '/code'): Promise<void> {
    const id = this.ids.derived('code', code, type, ownerId);
    if (await this.reserveIfFree(code, type, ownerId, id, context)) return;
    if (!reservedTo(await this.log.first(streams.code(code)), type, ownerId)) throw codeTaken(code, source);
  }

  /** CODE.TAKEN when another owner reserved `code`; nothing is written. */
  async checkFree(code: string, type: CodeType, ownerId: string, source = '/code'): Promise<void> {
    const first = await this.log.first(streams.code(code));
    if (first !== undefined && !reservedTo(first, type, ownerId)) throw codeTaken(code, source);
  }

  /** A fresh random referral code reserved for the user. */
  async reserveReferralCode(appUserId: string, context: CommandContext): Promise<string> {
    return withWriteRetries(
      (error) => error instanceof CodeDrawnTwice,
      async () => {
        const code = this.ids.referralCode();
        if (!(await this.reserveIfFree(code, 'referral', appUserId, undefined, context))) throw new CodeDrawnTwice(`Referral code ${code} is taken`);
        return code;
      },
    );
  }

  /** Appends `CodeReserved` when the code's stream does not exist yet; false when it does. */
  private async reserveIfFree(code: string, type: CodeType, ownerId: string, id: string | undefined, context: CommandContext): Promise<boolean> {
    const { result } = await this.executor.executeOnLatest(
      streams.code(code),
      (latest) =>
        latest === undefined
          ? { events: [{ type: 'CodeReserved', data: { code, type, owner_id: ownerId }, ...(id ? { id } : {}) }], result: true }
          : { events: [], result: false },
      context,
      // Nearly every code asked for is free: the first attempt appends without reading.
      { expectNew: true },
    );
    return result;
  }
}
