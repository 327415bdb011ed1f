import type { LoggedEvent } from '../src/application/event-log.js';
import type { Doc, DocumentRef, Projection } from './projection.js';

/** Each user's linked store transactions and refused link attempts (SPEC §15), for `GET /admin/users/{id}/transactions`. */
export const TRANSACTION_LINKS = 'transaction_links';

export const transactionLinksProjection: Projection = {
  name: 'transaction-links',
  version: 1,
  collections: [{ name: TRANSACTION_LINKS, indexes: [['app_user_id', 'seq']] }],
  eventTypes: ['TransactionLinked', 'TransactionLinkRefused'],
  targets: (event) => {
    if (event.type !== 'TransactionLinked' && event.type !== 'TransactionLinkRefused') return [];
    const { provider, transaction_id, app_user_id } = event.data;
    return [{ collection: TRANSACTION_LINKS, id: `${app_user_id}\u001f${provider}\u001f${transaction_id}` }];
  },
  evolve: (_ref: DocumentRef, doc: Doc | null, event: LoggedEvent): Doc | null => {
    const seq = Number(event.position);
    switch (event.type) {
      case 'TransactionLinked': {
        const { linked_at, ...fields } = event.data;
        return { ...fields, status: 'linked', linked_app_user_id: fields.app_user_id, at: linked_at, seq };
      }
      case 'TransactionLinkRefused': {
        const { attempted_at, ...fields } = event.data;
        return { ...fields, status: 'refused', at: attempted_at, seq };
      }
      default:
        return doc;
    }
  },
};
