import { inject, injectable } from 'tsyringe';
import { TRANSACTION_LINKS } from '../../../projections/transaction-links.js';
import type { TransactionProvider } from '../../domain/events/transaction-events.js';
import type { ReadStore } from '../../ports/read-store.js';
import { TOKENS } from '../../ports/tokens.js';

export interface TransactionDoc extends Record<string, unknown> {
  provider: TransactionProvider;
  transaction_id: string;
  app_user_id: string;
  app_account_token: string | null;
  obfuscated_external_account_id: string | null;
  status: 'linked' | 'refused';
  linked_app_user_id: string;
  at: string;
  seq: number;
}

const transactionFields = (doc: TransactionDoc) => ({
  provider: doc.provider,
  transaction_id: doc.transaction_id,
  app_account_token: doc.app_account_token,
  obfuscated_external_account_id: doc.obfuscated_external_account_id,
});

/** A linked transaction as the API shows it. */
export const linkView = (doc: TransactionDoc) => ({ ...transactionFields(doc), linked_at: doc.at });

/** A refused link attempt as the API shows it, without the user the transaction stays linked to. */
export const refusedAttemptView = (doc: TransactionDoc) => ({ ...transactionFields(doc), attempted_at: doc.at });

/** A user's linked store transactions and refused link attempts, oldest first (SPEC §15). */
@injectable()
export class TransactionQueries {
  constructor(@inject(TOKENS.ReadStore) private readonly readStore: ReadStore) {}

  async ofUser(appUserId: string) {
    const docs = await this.readStore.find<TransactionDoc>(TRANSACTION_LINKS, {
      where: { app_user_id: appUserId },
      orderBy: { field: 'seq', direction: 'asc' },
    });
    return {
      app_user_id: appUserId,
      links: docs.filter((doc) => doc.status === 'linked').map(linkView),
      refused_attempts: docs
        .filter((doc) => doc.status === 'refused')
        .map((doc) => ({ ...refusedAttemptView(doc), linked_app_user_id: doc.linked_app_user_id })),
    };
  }
}
