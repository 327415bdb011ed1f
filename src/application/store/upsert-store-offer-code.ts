import { inject, injectable } from 'tsyringe';
import { decideUpsertStoreOfferCode, storeOfferCodeEvolver, type UpsertOutcome } from '../../domain/catalog/store-offer-code.js';
import { streams } from '../../domain/events/index.js';
import type { StoreOfferCodeEntry } from '../../domain/events/store-events.js';
import type { CommandContext } from '../event-log.js';
import { ReadYourWrites } from '../read-your-writes.js';
import { StreamExecutor } from '../stream-executor.js';

/** PUT /admin/store/offer-codes/{id}: puts an entry in the catalog (`offer-code-{id}`). */
@injectable()
export class UpsertStoreOfferCodeHandler {
  constructor(
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(ReadYourWrites) private readonly readYourWrites: ReadYourWrites,
  ) {}

  async handle(entry: StoreOfferCodeEntry, context: CommandContext): Promise<UpsertOutcome> {
    const executed = await this.executor.execute(
      streams.offerCode(entry.offer_code.id),
      storeOfferCodeEvolver,
      (state) => decideUpsertStoreOfferCode(state, entry),
      context,
    );
    await this.readYourWrites.after(executed.position);
    return executed.result;
  }
}
