import { Router } from 'express';
import type { DependencyContainer } from 'tsyringe';
import { ClaimCodeHandler } from '../../application/commands/claim-code.js';
import { GrantRewardHandler } from '../../application/commands/grant-reward.js';
import { UpsertUserHandler } from '../../application/commands/upsert-user.js';
import { WithdrawCreditsHandler } from '../../application/commands/withdraw-credits.js';
import { UserQueries } from '../../application/queries/user-queries.js';
import { requireSecretKey } from '../auth.js';
import { commandContext } from '../context.js';
import { ApiError, methodNotAllowed } from '../errors.js';
import type { ApiDescription } from '../openapi.js';
import { appUserId } from '../schemas/common.js';
import {
  claimCodeBody,
  claimResponse,
  getUserResponse,
  grantRewardBody,
  upsertUserBody,
  userResponse,
  withdrawCreditsBody,
  withdrawResponse,
} from '../schemas/users.js';
import { z } from '../schemas/zod-openapi.js';
import { parseBody, parsePathParam } from '../validation.js';

const userPath = z.object({ app_user_id: appUserId });

export function usersRouter(container: DependencyContainer, api: ApiDescription): Router {
  const router = Router();
  const queries = container.resolve(UserQueries);
  const upsert = container.resolve(UpsertUserHandler);
  const claim = container.resolve(ClaimCodeHandler);
  const withdraw = container.resolve(WithdrawCreditsHandler);
  const grant = container.resolve(GrantRewardHandler);

  /** The user as the read models show it (GET). */
  async function currentUser(appUserIdValue: string): Promise<Record<string, unknown>> {
    const user = await queries.userView(appUserIdValue);
    if (!user) throw new ApiError(404, 'NOT_FOUND.USER', 'User not found', 'path:/app_user_id');
    return user;
  }

  /**
   * The user after a command. Handlers return once the read models include their events
   * (read-your-writes), so the user is there; if the read models are too far behind to show
   * it, the client is told to retry (the write itself is kept, and repeats are idempotent).
   */
  async function userAfterCommand(appUserIdValue: string): Promise<Record<string, unknown>> {
    const user = await queries.userView(appUserIdValue);
    if (!user) throw new ApiError(503, 'SERVICE_UNAVAILABLE', 'The read models are behind the write; retry later');
    return user;
  }

  api.operation({
    method: 'post',
    path: '/users',
    operationId: 'upsertUser',
    summary: 'Create or update a user (201 created, 200 updated)',
    tags: ['users'],
    body: upsertUserBody,
    responses: { 201: { description: 'Created', schema: userResponse }, 200: { description: 'Updated', schema: userResponse } },
    errors: ['USER.FIRST_SEEN_AT_IN_FUTURE'],
  });
  router
    .route('/users')
    .post(async (req, res) => {
      const { app_user_id, last_seen_at: _ignored, ...fields } = parseBody(req, upsertUserBody);
      const { created } = await upsert.handle(app_user_id, fields, commandContext(res));
      res.status(created ? 201 : 200).json({ data: { user: await userAfterCommand(app_user_id) } });
    })
    .all(methodNotAllowed(['POST']));

  api.operation({
    method: 'get',
    path: '/users/{app_user_id}',
    operationId: 'getUser',
    summary: 'Get a user (and the affiliate linked to it)',
    tags: ['users'],
    params: userPath,
    responses: { 200: { description: 'The user', schema: getUserResponse } },
    errors: ['NOT_FOUND.USER'],
  });
  router
    .route('/users/:app_user_id')
    .get(async (req, res) => {
      const id = parsePathParam(req, 'app_user_id', appUserId);
      const [user, affiliate] = await Promise.all([currentUser(id), queries.affiliateView(id)]);
      res.json({ data: { user, affiliate } });
    })
    .all(methodNotAllowed(['GET']));

  api.operation({
    method: 'post',
    path: '/users/{app_user_id}/claim-code',
    operationId: 'claimCode',
    summary: 'Claim a referral, promo or affiliate code',
    tags: ['users'],
    params: userPath,
    body: claimCodeBody,
    responses: { 200: { description: 'Claimed', schema: claimResponse } },
    errors: [
      'NOT_FOUND.USER',
      'CLAIM.CODE_NOT_FOUND',
      'CLAIM.ALREADY_CLAIMED',
      'CLAIM.OWN_CODE',
      'CLAIM.NOT_ELIGIBLE',
      'CLAIM.CODE_INACTIVE',
      'CLAIM.LIMIT_REACHED',
      'CLAIM.SLOT_LOST',
      'CLAIM.REJECTED_BY_RULE',
    ],
  });
  router
    .route('/users/:app_user_id/claim-code')
    .post(async (req, res) => {
      const id = parsePathParam(req, 'app_user_id', appUserId);
      const { code } = parseBody(req, claimCodeBody);
      const { granted } = await claim.handle(id, code, commandContext(res));
      const [rewardsGranted, user] = await Promise.all([queries.grantedView(id, granted), userAfterCommand(id)]);
      res.json({ data: { rewards_granted: rewardsGranted, user } });
    })
    .all(methodNotAllowed(['POST']));

  api.operation({
    method: 'post',
    path: '/users/{app_user_id}/rewards/withdraw-credits',
    operationId: 'withdrawCredits',
    summary: 'Withdraw credits (idempotent with operation_id)',
    tags: ['credits'],
    params: userPath,
    body: withdrawCreditsBody,
    responses: { 200: { description: 'Withdrawn (possibly 0 credits)', schema: withdrawResponse } },
    errors: ['NOT_FOUND.USER', 'WITHDRAW.REWARD_NOT_FOUND', 'WITHDRAW.OPERATION_ID_REUSED'],
  });
  router
    .route('/users/:app_user_id/rewards/withdraw-credits')
    .post(async (req, res) => {
      const id = parsePathParam(req, 'app_user_id', appUserId);
      const body = parseBody(req, withdrawCreditsBody);
      const { result } = await withdraw.handle(id, { key: body.key, amount: body.amount, operation_id: body.operation_id ?? null }, commandContext(res));
      res.json({ data: { withdraw_result: result, user: await userAfterCommand(id) } });
    })
    .all(methodNotAllowed(['POST']));

  api.operation({
    method: 'post',
    path: '/users/{app_user_id}/rewards/grant',
    operationId: 'grantReward',
    summary: 'Grant a reward by hand (secret key; 201 granted, 200 already active)',
    tags: ['credits'],
    params: userPath,
    body: grantRewardBody,
    responses: { 201: { description: 'Granted', schema: claimResponse }, 200: { description: 'Already active; nothing added', schema: claimResponse } },
    errors: ['NOT_FOUND.USER', 'GRANT.REWARD_NOT_FOUND', 'GRANT.OPERATION_ID_REUSED'],
    auth: 'secret',
  });
  router
    .route('/users/:app_user_id/rewards/grant')
    .post(requireSecretKey, async (req, res) => {
      const id = parsePathParam(req, 'app_user_id', appUserId);
      const body = parseBody(req, grantRewardBody);
      const result = await grant.handle(
        id,
        { key: body.key, operation_id: body.operation_id ?? null, deactivation: body.deactivation ?? { variant: 'never' } },
        commandContext(res),
      );
      const [rewardsGranted, user] = await Promise.all([queries.grantedView(id, result.granted), userAfterCommand(id)]);
      res.status(result.created ? 201 : 200).json({ data: { rewards_granted: rewardsGranted, user } });
    })
    .all(methodNotAllowed(['POST']));

  return router;
}
