import { Router } from 'express';
import type { DependencyContainer } from 'tsyringe';
import { UserErasure } from '../../application/privacy/user-erasure.js';
import { UserExport } from '../../application/privacy/user-export.js';
import { requireSecretKey } from '../auth.js';
import { commandContext } from '../context.js';
import { ApiError, methodNotAllowed } from '../errors.js';
import type { ApiDescription } from '../openapi.js';
import { appUserId } from '../schemas/common.js';
import { userDataExportResponse } from '../schemas/privacy.js';
import { z } from '../schemas/zod-openapi.js';
import { parsePathParam } from '../validation.js';

const TAG = 'admin: privacy';
const params = z.object({ app_user_id: appUserId });

/** SPEC §13: erasure (crypto-shredding) and access (export) of one user's data (secret key). */
export function adminUsersRouter(container: DependencyContainer, api: ApiDescription): Router {
  const router = Router();
  router.use('/users', requireSecretKey);
  const erasure = container.resolve(UserErasure);
  const exports = container.resolve(UserExport);
  const idOf = (req: Parameters<typeof parsePathParam>[0]) => parsePathParam(req, 'app_user_id', appUserId) as string;

  api.operation({
    method: 'delete',
    path: '/admin/users/{app_user_id}',
    operationId: 'eraseUser',
    summary:
      "Erase a user's personal fields (metadata, payment_customer_id) by destroying their data key; the user, its rewards and ledger stay. " +
      'A second erasure is a no-op (204).',
    tags: [TAG],
    params,
    responses: { 204: { description: 'Erased (or already erased)' } },
    errors: ['NOT_FOUND.USER'],
    auth: 'secret',
  });
  router
    .route('/users/:app_user_id')
    .delete(async (req, res) => {
      await erasure.erase(idOf(req), commandContext(res));
      res.status(204).end();
    })
    .all(methodNotAllowed(['DELETE']));

  api.operation({
    method: 'get',
    path: '/admin/users/{app_user_id}/export',
    operationId: 'exportUserData',
    summary: 'Everything held about a user, personal fields decrypted, as one JSON document (access request)',
    tags: [TAG],
    params,
    responses: { 200: { description: 'The export', schema: userDataExportResponse } },
    errors: ['NOT_FOUND.USER'],
    auth: 'secret',
  });
  router
    .route('/users/:app_user_id/export')
    .get(async (req, res) => {
      const found = await exports.export(idOf(req));
      if (found === null) throw new ApiError(404, 'NOT_FOUND.USER', 'User not found', 'path:/app_user_id');
      res.json({ data: { export: found } });
    })
    .all(methodNotAllowed(['GET']));
  return router;
}
