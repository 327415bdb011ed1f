import type { DependencyContainer } from 'tsyringe';
import { ClaimCodeHandler } from '../../application/commands/claim-code.js';
import { GrantRewardHandler } from '../../application/commands/grant-reward-by-hand.js';
import { UpsertUserHandler } from '../../application/commands/upsert-user.js';
import { WithdrawCreditsHandler } from '../../application/commands/withdraw-credits.js';
import { UserQueries } from '../../application/queries/user-queries.js';
import { commandContext } from '../context.js';
import { WriteRecordedError } from '../../ports/read-consistency.js';
import { userNotFound } from '../../domain/domain-error.js';
import { type AnyRoute, route } from '../route.js';
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

const userPath = z.object({ app_user_id: appUserId });

/** The app's API for users: create or update, read, claim a code, withdraw credits, grant by hand. */
export function userRoutes(container: DependencyContainer): AnyRoute[] {
  const queries = container.resolve(UserQueries);
  const upsert = container.resolve(UpsertUserHandler);
  const claim = container.resolve(ClaimCodeHandler);
  const withdraw = container.resolve(WithdrawCreditsHandler);
  const grant = container.resolve(GrantRewardHandler);

  /**
   * The user after a command. Handlers return once the read models include their events
   * (read-your-writes), so the user is there. Commands are refused before they run while the
   * read models catch up (CatchUpGuard); if they still cannot show the user in time (a read
   * model held at a failing batch), the write is kept and the client is told so.
   */
  async function userAfterCommand(appUserIdValue: string): Promise<Record<string, unknown>> {
    const user = await queries.userView(appUserIdValue);
    if (!user) throw new WriteRecordedError();
    return user;
  }

  return [
    route({
      method: 'post',
      path: '/users',
      operationId: 'upsertUser',
      summary: 'Create or update a user (201 created, 200 updated)',
      tags: ['users'],
      body: upsertUserBody,
      responses: { 201: { description: 'Created', schema: userResponse }, 200: { description: 'Updated', schema: userResponse } },
      errors: ['USER.FIRST_SEEN_AT_IN_FUTURE'],
      async handle({ body, res }) {
        const { app_user_id, last_seen_at: _ignored, ...fields } = body;
        const { created } = await upsert.handle(app_user_id, fields, commandContext(res));
        return { status: created ? 201 : 200, body: { data: { user: await userAfterCommand(app_user_id) } } };
      },
    }),
    route({
      method: 'get',
      path: '/users/{app_user_id}',
      operationId: 'getUser',
      summary: 'Get a user (and the affiliate linked to it)',
      tags: ['users'],
      params: userPath,
      responses: { 200: { description: 'The user', schema: getUserResponse } },
      errors: ['NOT_FOUND.USER'],
      async handle({ params }) {
        const answer = await queries.userWithAffiliate(params.app_user_id);
        if (!answer) throw userNotFound();
        return { status: 200, body: { data: answer } };
      },
    }),
    route({
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
      async handle({ params, body, res }) {
        const id = params.app_user_id;
        const { granted } = await claim.handle(id, body.code, commandContext(res));
        const [rewardsGranted, user] = await Promise.all([queries.grantedView(id, granted), userAfterCommand(id)]);
        return { status: 200, body: { data: { rewards_granted: rewardsGranted, user } } };
      },
    }),
    route({
      method: 'post',
      path: '/users/{app_user_id}/rewards/withdraw-credits',
      operationId: 'withdrawCredits',
      summary: 'Withdraw credits (idempotent with operation_id)',
      tags: ['credits'],
      params: userPath,
      body: withdrawCreditsBody,
      responses: { 200: { description: 'Withdrawn (possibly 0 credits)', schema: withdrawResponse } },
      errors: ['NOT_FOUND.USER', 'WITHDRAW.REWARD_NOT_FOUND', 'WITHDRAW.OPERATION_ID_REUSED'],
      async handle({ params, body, res }) {
        const id = params.app_user_id;
        const { result } = await withdraw.handle(id, { key: body.key, amount: body.amount, operation_id: body.operation_id ?? null }, commandContext(res));
        return { status: 200, body: { data: { withdraw_result: result, user: await userAfterCommand(id) } } };
      },
    }),
    route({
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
      async handle({ params, body, res }) {
        const id = params.app_user_id;
        const result = await grant.handle(
          id,
          { key: body.key, operation_id: body.operation_id ?? null, deactivation: body.deactivation ?? { variant: 'never' } },
          commandContext(res),
        );
        const [rewardsGranted, user] = await Promise.all([queries.grantedView(id, result.granted), userAfterCommand(id)]);
        return { status: result.created ? 201 : 200, body: { data: { rewards_granted: rewardsGranted, user } } };
      },
    }),
  ];
}
