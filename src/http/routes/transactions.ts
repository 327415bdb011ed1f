import type { DependencyContainer } from 'tsyringe';
import { LinkTransactionHandler } from '../../application/commands/link-transaction.js';
import { TransactionQueries } from '../../application/queries/transaction-queries.js';
import { UserQueries } from '../../application/queries/user-queries.js';
import { commandContext } from '../context.js';
import { userNotFound } from '../../domain/domain-error.js';
import { type AnyRoute, route } from '../route.js';
import { appUserId } from '../schemas/common.js';
import { appStoreTransactionBody, googlePlayTransactionBody, userTransactionsOut } from '../schemas/transactions.js';
import { z } from '../schemas/zod-openapi.js';

const userPath = z.object({ app_user_id: appUserId });
const LINK_DESCRIPTION =
  'The first link of a transaction is recorded and lets revenue notifications without an account id find the user. ' +
  'A repeat is a no-op; a transaction already linked to another user stays with that user and the attempt is kept for review ' +
  '(`GET /admin/users/{app_user_id}/transactions`). Always 204 for a known user and a valid body.';
const linked = { 204: { description: 'Linked (or already linked, or kept for review)' } };

/** SPEC §15: the app links store transactions to its user (client or secret key). */
export function transactionRoutes(container: DependencyContainer): AnyRoute[] {
  const link = container.resolve(LinkTransactionHandler);
  return [
    route({
      method: 'post',
      path: '/users/{app_user_id}/transactions/app-store',
      operationId: 'linkAppStoreTransaction',
      summary: 'Link an App Store transaction (originalTransactionId) to the user',
      description: LINK_DESCRIPTION,
      tags: ['transactions'],
      params: userPath,
      body: appStoreTransactionBody,
      responses: linked,
      errors: ['NOT_FOUND.USER'],
      async handle({ params, body, res }) {
        await link.handle(
          params.app_user_id,
          {
            provider: 'app-store',
            transaction_id: body.original_transaction_id,
            app_account_token: body.app_account_token?.toLowerCase() ?? null,
            obfuscated_external_account_id: null,
          },
          commandContext(res),
        );
        return { status: 204 };
      },
    }),
    route({
      method: 'post',
      path: '/users/{app_user_id}/transactions/google-play',
      operationId: 'linkGooglePlayTransaction',
      summary: 'Link a Google Play purchase (purchase token) to the user',
      description: LINK_DESCRIPTION,
      tags: ['transactions'],
      params: userPath,
      body: googlePlayTransactionBody,
      responses: linked,
      errors: ['NOT_FOUND.USER'],
      async handle({ params, body, res }) {
        await link.handle(
          params.app_user_id,
          {
            provider: 'google-play',
            transaction_id: body.purchase_token,
            app_account_token: null,
            obfuscated_external_account_id: body.obfuscated_external_account_id ?? null,
          },
          commandContext(res),
        );
        return { status: 204 };
      },
    }),
  ];
}

/** `GET /admin/users/{app_user_id}/transactions` (secret key): a user's links and refused attempts. */
export function adminTransactionRoutes(container: DependencyContainer): AnyRoute[] {
  const transactions = container.resolve(TransactionQueries);
  const users = container.resolve(UserQueries);
  return [
    route({
      method: 'get',
      path: '/admin/users/{app_user_id}/transactions',
      operationId: 'getUserTransactions',
      summary: "A user's linked store transactions and its refused link attempts",
      tags: ['admin: audit'],
      params: userPath,
      responses: { 200: { description: 'Links and refused attempts, oldest first', schema: z.object({ data: userTransactionsOut }) } },
      errors: ['NOT_FOUND.USER'],
      auth: 'secret',
      async handle({ params: { app_user_id: id } }) {
        if (!(await users.exists(id))) throw userNotFound();
        return { status: 200, body: { data: await transactions.ofUser(id) } };
      },
    }),
  ];
}
