import { Router } from 'express';
import type { DependencyContainer } from 'tsyringe';
import { LinkTransactionHandler } from '../../application/commands/link-transaction.js';
import { TransactionQueries } from '../../application/queries/transaction-queries.js';
import { UserQueries } from '../../application/queries/user-queries.js';
import { requireSecretKey } from '../auth.js';
import { commandContext } from '../context.js';
import { ApiError, methodNotAllowed } from '../errors.js';
import type { ApiDescription } from '../openapi.js';
import { appUserId } from '../schemas/common.js';
import { appStoreTransactionBody, googlePlayTransactionBody, userTransactionsOut } from '../schemas/transactions.js';
import { z } from '../schemas/zod-openapi.js';
import { parseBody, parsePathParam } from '../validation.js';

const userPath = z.object({ app_user_id: appUserId });
const LINK_DESCRIPTION =
  'The first link of a transaction is recorded and lets revenue notifications without an account id find the user. ' +
  'A repeat is a no-op; a transaction already linked to another user stays with that user and the attempt is kept for review ' +
  '(`GET /admin/users/{app_user_id}/transactions`). Always 204 for a known user and a valid body.';

/** SPEC §15: the app links store transactions to its user (client or secret key). */
export function transactionsRouter(container: DependencyContainer, api: ApiDescription): Router {
  const router = Router();
  const link = container.resolve(LinkTransactionHandler);

  api.operation({
    method: 'post',
    path: '/users/{app_user_id}/transactions/app-store',
    operationId: 'linkAppStoreTransaction',
    summary: 'Link an App Store transaction (originalTransactionId) to the user',
    description: LINK_DESCRIPTION,
    tags: ['transactions'],
    params: userPath,
    body: appStoreTransactionBody,
    responses: { 204: { description: 'Linked (or already linked, or kept for review)' } },
    errors: ['NOT_FOUND.USER'],
  });
  router
    .route('/users/:app_user_id/transactions/app-store')
    .post(async (req, res) => {
      const id = parsePathParam(req, 'app_user_id', appUserId);
      const body = parseBody(req, appStoreTransactionBody);
      await link.handle(
        id,
        {
          provider: 'app-store',
          transaction_id: body.original_transaction_id,
          app_account_token: body.app_account_token?.toLowerCase() ?? null,
          obfuscated_external_account_id: null,
        },
        commandContext(res),
      );
      res.status(204).end();
    })
    .all(methodNotAllowed(['POST']));

  api.operation({
    method: 'post',
    path: '/users/{app_user_id}/transactions/google-play',
    operationId: 'linkGooglePlayTransaction',
    summary: 'Link a Google Play purchase (purchase token) to the user',
    description: LINK_DESCRIPTION,
    tags: ['transactions'],
    params: userPath,
    body: googlePlayTransactionBody,
    responses: { 204: { description: 'Linked (or already linked, or kept for review)' } },
    errors: ['NOT_FOUND.USER'],
  });
  router
    .route('/users/:app_user_id/transactions/google-play')
    .post(async (req, res) => {
      const id = parsePathParam(req, 'app_user_id', appUserId);
      const body = parseBody(req, googlePlayTransactionBody);
      await link.handle(
        id,
        {
          provider: 'google-play',
          transaction_id: body.purchase_token,
          app_account_token: null,
          obfuscated_external_account_id: body.obfuscated_external_account_id ?? null,
        },
        commandContext(res),
      );
      res.status(204).end();
    })
    .all(methodNotAllowed(['POST']));

  return router;
}

/** `GET /admin/users/{app_user_id}/transactions` (secret key): a user's links and refused attempts. */
export function adminTransactionsRouter(container: DependencyContainer, api: ApiDescription): Router {
  const router = Router();
  const transactions = container.resolve(TransactionQueries);
  const users = container.resolve(UserQueries);

  api.operation({
    method: 'get',
    path: '/admin/users/{app_user_id}/transactions',
    operationId: 'getUserTransactions',
    summary: "A user's linked store transactions and its refused link attempts",
    tags: ['admin: audit'],
    params: userPath,
    responses: { 200: { description: 'Links and refused attempts, oldest first', schema: z.object({ data: userTransactionsOut }) } },
    errors: ['NOT_FOUND.USER'],
    auth: 'secret',
  });
  router
    .route('/users/:app_user_id/transactions')
    .get(requireSecretKey, async (req, res) => {
      const id = parsePathParam(req, 'app_user_id', appUserId);
      if (!(await users.exists(id))) throw new ApiError(404, 'NOT_FOUND.USER', 'User not found', 'path:/app_user_id');
      res.json({ data: await transactions.ofUser(id) });
    })
    .all(methodNotAllowed(['GET']));
  return router;
}
