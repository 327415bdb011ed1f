import { inject, injectable } from 'tsyringe';
import { decideUpsertStoreOfferCode, storeOfferCodeEvolver, type UpsertOutcome } from '../../domain/catalog/store-offer-code.js';
import { streams } from '../../domain/events/index.js';
import type { StoreOfferCodeEntry } from '../../domain/events/store-events.js';
import { CommandExecutor } from '../command-executor.js';
import type { CommandContext } from '../event-log.js';

/** PUT /admin/store/offer-codes/{id}: puts an entry in the catalog (`offer-code-{id}`). */
@injectable()
export class UpsertStoreOfferCodeHandler {
  constructor(@inject(CommandExecutor) private readonly commands: CommandExecutor) {}

  async handle(entry: StoreOfferCodeEntry, context: CommandContext): Promise<UpsertOutcome> {
    const executed = await this.commands.execute(
      streams.offerCode(entry.offer_code.id),
      storeOfferCodeEvolver,
      (state) => decideUpsertStoreOfferCode(state, entry),
      context,
    );
    return executed.result;
  }
}
