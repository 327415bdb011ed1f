import { Router } from 'express';
import type { DependencyContainer } from 'tsyringe';
import { ClaimCodeHandler } from '../../application/commands/claim-code.js';
import { GrantRewardHandler } from '../../application/commands/grant-reward.js';
import { UpsertUserHandler } from '../../application/commands/upsert-user.js';
import { WithdrawCreditsHandler } from '../../application/commands/withdraw-credits.js';
import { UserQueries } from '../../application/queries/user-queries.js';
import type { UserDocument as UserState } from '../../application/queries/legacy-user-document.js';
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

  /**
   * The user as the read models show it. Commands answer from their own (write-side) state
   * instead, so an acknowledged write never looks missing even if the read models lag.
   */
  async function currentUser(appUserIdValue: string): Promise<UserState> {
    const state = await queries.state(appUserIdValue);
    if (!state?.exists) throw new ApiError(404, 'NOT_FOUND.USER', 'User not found', 'path:/app_user_id');
    return state;
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
      const { created, state } = await upsert.handle(app_user_id, fields, commandContext(res));
      res.status(created ? 201 : 200).json({ data: { user: await queries.commandUserView(state) } });
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
      const state = await currentUser(id);
      const [user, affiliate] = await Promise.all([queries.userView(state), queries.affiliateView(id)]);
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
    ],
  });
  router
    .route('/users/:app_user_id/claim-code')
    .post(async (req, res) => {
      const id = parsePathParam(req, 'app_user_id', appUserId);
      const { code } = parseBody(req, claimCodeBody);
      const { granted, state } = await claim.handle(id, code, commandContext(res));
      res.json({ data: { rewards_granted: await queries.grantedView(state, granted), user: await queries.commandUserView(state) } });
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
      const { result, state } = await withdraw.handle(id, { key: body.key, amount: body.amount, operation_id: body.operation_id ?? null }, commandContext(res));
      res.json({ data: { withdraw_result: result, user: await queries.commandUserView(state) } });
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
      res
        .status(result.created ? 201 : 200)
        .json({ data: { rewards_granted: await queries.grantedView(result.state, result.granted), user: await queries.commandUserView(result.state) } });
    })
    .all(methodNotAllowed(['POST']));

  return router;
}
