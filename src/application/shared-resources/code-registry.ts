import { inject, injectable } from 'tsyringe';
import { DomainError } from '../../domain/domain-error.js';
import type { CodeType } from '../../domain/events/code-events.js';
import { streams } from '../../domain/events/index.js';
import { WrongExpectedRevisionError } from '../../ports/event-store.js';
import type { Ids } from '../../ports/ids.js';
import { TOKENS } from '../../ports/tokens.js';
import { type CommandContext, EventLog } from '../event-log.js';

const REFERRAL_CODE_ATTEMPTS = 20;

/**
 * The shared namespace of referral, promo and affiliate codes. A code belongs to whoever
 * first appends `CodeReserved` to `code-{CODE}` with expected revision "no stream".
 */
@injectable()
export class CodeRegistry {
  constructor(
    @inject(EventLog) private readonly log: EventLog,
    @inject(TOKENS.Ids) private readonly ids: Ids,
  ) {}

  /** Reserves `code` for the owner; idempotent for the same owner, CODE.TAKEN for another. */
  async reserve(code: string, type: CodeType, ownerId: string, context: CommandContext, source = '/code'): Promise<void> {
    try {
      await this.log.append(
        streams.code(code),
        [{ type: 'CodeReserved', data: { code, type, owner_id: ownerId }, id: this.ids.derived('code', code, type, ownerId) }],
        'no_stream',
        context,
      );
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
      const first = await this.log.first(streams.code(code));
      const ours = first?.type === 'CodeReserved' && first.data.type === type && first.data.owner_id === ownerId;
      if (!ours) throw new DomainError('CODE.TAKEN', `Code ${code} is already in use`, source);
    }
  }

  /** A fresh random referral code reserved for the user. */
  async reserveReferralCode(appUserId: string, context: CommandContext): Promise<string> {
    for (let attempt = 0; attempt < REFERRAL_CODE_ATTEMPTS; attempt += 1) {
      const code = this.ids.referralCode();
      try {
        await this.log.append(streams.code(code), [{ type: 'CodeReserved', data: { code, type: 'referral', owner_id: appUserId } }], 'no_stream', context);
        return code;
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
      }
    }
    throw new Error(`No free referral code after ${REFERRAL_CODE_ATTEMPTS} attempts`);
  }
}
