import type { DependencyContainer } from 'tsyringe';
import { UserErasure } from '../../application/privacy/user-erasure.js';
import { ExportOvertakenByErasure } from '../../application/privacy/export-erasure-gate.js';
import { UserExport } from '../../application/privacy/user-export.js';
import { UserQueries } from '../../application/queries/user-queries.js';
import { commandContext } from '../context.js';
import { userNotFound } from '../../domain/domain-error.js';
import { type AnyRoute, route, sendJsonPieces } from '../route.js';
import { appUserId } from '../schemas/common.js';
import { userDataExportResponse } from '../schemas/privacy.js';
import { operatorUserResponse } from '../schemas/users.js';
import { z } from '../schemas/zod-openapi.js';

/** One user for operators (secret key): read as the app reads it; SPEC §13 erasure (crypto-shredding) and access (export). */
export function adminUserRoutes(container: DependencyContainer): AnyRoute[] {
  const erasure = container.resolve(UserErasure);
  const exports = container.resolve(UserExport);
  const queries = container.resolve(UserQueries);
  const params = z.object({ app_user_id: appUserId });
  const common = { tags: ['admin: privacy'], auth: 'secret' as const, params };

  return [
    route({
      ...common,
      tags: ['admin: audit'],
      method: 'get',
      path: '/admin/users/{app_user_id}',
      operationId: 'getUserAsOperator',
      summary:
        'A user as GET /users/{app_user_id} shows it, for operators (the console), its stats with the refunds of the conversions made through its referral code',
      responses: { 200: { description: 'The user', schema: operatorUserResponse } },
      errors: ['NOT_FOUND.USER'],
      async handle({ params: { app_user_id } }) {
        const answer = await queries.userForOperators(app_user_id);
        if (!answer) throw userNotFound();
        return { status: 200, body: { data: answer } };
      },
    }),
    route({
      ...common,
      method: 'delete',
      path: '/admin/users/{app_user_id}',
      operationId: 'eraseUser',
      summary:
        "Erase a user's personal fields (metadata, payment_customer_id) by destroying their data key; the user, its rewards and ledger stay. " +
        'A second erasure is a no-op (204).',
      responses: { 204: { description: 'Erased (or already erased)' } },
      errors: ['NOT_FOUND.USER'],
      async handle({ params: { app_user_id }, res }) {
        await erasure.erase(app_user_id, commandContext(res));
        return { status: 204 };
      },
    }),
    route({
      ...common,
      method: 'get',
      path: '/admin/users/{app_user_id}/export',
      operationId: 'exportUserData',
      summary:
        'Everything held about a user, personal fields decrypted, as one JSON document (access request). ' +
        'Written out as it is read, a page at a time, so its size is not bounded by memory; it lists what the log held when it started',
      responses: { 200: { description: 'The export', schema: userDataExportResponse } },
      errors: ['NOT_FOUND.USER'],
      async handle({ params: { app_user_id }, res }) {
        const pieces = await exports.open(app_user_id, res.locals.requestId);
        if (pieces === null) throw userNotFound();
        // Overtaken by an erasure of the user: the document is cut short, by design, not failed.
        return sendJsonPieces(res, pieces).catch((error: unknown) => {
          if (error instanceof ExportOvertakenByErasure) return { raw: true } as const;
          throw error;
        });
      },
    }),
  ];
}
