import { inject, injectable } from 'tsyringe';
import { userNotFound } from '../../domain/domain-error.js';
import { streams } from '../../domain/events/index.js';
import type { TransactionProvider } from '../../domain/events/transaction-events.js';
import { decideLinkTransaction, type LinkOutcome, transactionEvolver, transactionKey } from '../../domain/transactions/transaction-link.js';
import type { Clock } from '../../ports/clock.js';
import { TOKENS } from '../../ports/tokens.js';
import { CommandExecutor } from '../command-executor.js';
import { type CommandContext, EventLog } from '../event-log.js';

export interface LinkTransactionInput {
  provider: TransactionProvider;
  transaction_id: string;
  app_account_token: string | null;
  obfuscated_external_account_id: string | null;
}

/**
 * POST /users/{id}/transactions/app-store|google-play: links a store transaction to the user,
 * in the transaction's own stream, so that of any number of concurrent links exactly one is
 * first. Revenue notifications then find their user through it (SPEC §11).
 */
@injectable()
export class LinkTransactionHandler {
  constructor(
    @inject(CommandExecutor) private readonly commands: CommandExecutor,
    @inject(EventLog) private readonly log: EventLog,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  async handle(appUserId: string, input: LinkTransactionInput, context: CommandContext): Promise<LinkOutcome> {
    if ((await this.log.first(streams.user(appUserId)))?.type !== 'UserRegistered') {
      throw userNotFound();
    }
    // Read-your-writes after the commit: the listing and the revenue matching see the link once the call returns.
    const executed = await this.commands.execute(
      streams.transaction(input.provider, transactionKey(input.provider, input.transaction_id)),
      transactionEvolver,
      (state) => decideLinkTransaction(state, { ...input, app_user_id: appUserId, now: this.clock.now() }),
      context,
    );
    return executed.result;
  }
}
