import { creditLedgerOut, eventPageOut } from './audit.js';
import { outDateTime } from './common.js';
import { refusedAttemptOut, transactionLinkOut } from './transactions.js';
import { adminAffiliateOut } from './admin.js';
import { userOut } from './users.js';
import { z } from './zod-openapi.js';

const loggedEvent = eventPageOut.shape.events.element;

/** GET /admin/users/{app_user_id}/export (SPEC §13): everything held about one user. */
const userDataExportOut = z
  .object({
    app_user_id: z.string(),
    exported_at: outDateTime,
    user: userOut.openapi({ description: 'The user as GET /users/{app_user_id} shows it; erased personal fields are null' }),
    affiliates: z.array(adminAffiliateOut).openapi({
      description: 'The affiliates linked to the user (usually none or one), whole as GET /admin/affiliates/{id} shows them: name, platforms, codes…',
    }),
    credit_ledger: creditLedgerOut.shape.entries.openapi({ description: 'Every credit movement, oldest first, as in the credit ledger' }),
    events: z.array(loggedEvent).openapi({
      description: 'Every event of the user stream in order, personal fields decrypted; an erased field is {"erased": true}',
    }),
    notifications: z.array(loggedEvent).openapi({
      description: 'The revenue notifications matched to the user (NotificationReceived events), personal fields decrypted likewise',
    }),
    transactions: z
      .object({
        links: z.array(transactionLinkOut),
        refused_attempts: z.array(refusedAttemptOut).openapi({
          description: 'Attempts to link a transaction already linked to another user; which user is left out (another person’s id)',
        }),
      })
      .strict()
      .openapi({
        description: 'The store transactions linked to the user and its refused link attempts, as GET /admin/users/{app_user_id}/transactions lists them',
      }),
  })
  .strict()
  .openapi('UserDataExport');

export const userDataExportResponse = z.object({ data: z.object({ export: userDataExportOut }).strict() }).strict();
