import type { DependencyContainer } from 'tsyringe';
import { BULK_BODY_LIMIT } from '../body-limits.js';
import { DefineAffiliateHandler } from '../../application/admin/define-affiliate.js';
import { DefineProgramHandler } from '../../application/admin/define-program.js';
import { DefinePromoCodeHandler } from '../../application/admin/define-promo-code.js';
import { DefineRewardHandler } from '../../application/admin/define-reward.js';
import { PoolAssignments } from '../../application/shared-resources/pool-assignments.js';
import { CatalogQueries } from '../../application/queries/catalog-queries.js';
import { UserQueries } from '../../application/queries/user-queries.js';
import { adminRewardView, programRewardKeys, programView } from '../../application/queries/reward-views.js';
import type { Affiliate, PromoCode } from '../../domain/events/config-events.js';
import { POOLED_KINDS } from '../../domain/rewards/reward-kinds.js';
import { commandContext } from '../context.js';
import { ApiError } from '../errors.js';
import { type AnyRoute, route } from '../route.js';
import {
  adminAffiliateOut,
  adminRewardOut,
  affiliateBody,
  affiliateId,
  configuredCode,
  poolCodesBody,
  poolCodesOut,
  poolFiguresOut,
  programBody,
  programId,
  promoCodeBody,
  promoCodeOut,
  rewardBody,
  rewardKey,
} from '../schemas/admin.js';
import { referralProgramOut } from '../schemas/rewards.js';
import { z } from '../schemas/zod-openapi.js';
import { adminAuditRoutes } from './admin-audit.js';
import { adminResourceRoutes } from './admin-resource.js';

/** The admin API (secret key): rewards, programs, promo codes, affiliates, code pools. */
export function adminRoutes(container: DependencyContainer): AnyRoute[] {
  const catalog = container.resolve(CatalogQueries);

  const defineReward = container.resolve(DefineRewardHandler);
  const rewards = adminResourceRoutes({
    tag: 'admin: rewards',
    path: '/rewards',
    param: 'key',
    paramSchema: rewardKey,
    singular: 'reward',
    plural: 'rewards',
    name: 'Reward',
    notFoundCode: 'NOT_FOUND.REWARD',
    putErrors: ['REWARD.IMMUTABLE_FIELD', 'REWARD.OFFER_CODE_UNKNOWN'],
    body: rewardBody,
    out: adminRewardOut,
    get: (key) => catalog.reward(key),
    list: (page) => catalog.listRewards(page),
    idOf: (reward) => reward.key,
    view: adminRewardView,
    put: async (key, body, res) => {
      const { created, reward } = await defineReward.handle(
        { ...body, key, description: body.description ?? null, metadata: body.metadata ?? null },
        commandContext(res),
      );
      return { created, value: reward };
    },
  });

  const defineProgram = container.resolve(DefineProgramHandler);
  const programWithRewards = async (program: Parameters<typeof programView>[0]) => programView(program, await catalog.rewards(programRewardKeys(program)));
  const programs = adminResourceRoutes({
    tag: 'admin: programs',
    path: '/programs',
    param: 'id',
    paramSchema: programId,
    singular: 'program',
    plural: 'programs',
    name: 'Program',
    notFoundCode: 'NOT_FOUND.PROGRAM',
    putErrors: ['PROGRAM.REWARD_NOT_FOUND', 'PROGRAM.INVALID_ACTIVATION', 'PROGRAM.DISTRIBUTION_EXCEEDED'],
    body: programBody,
    out: referralProgramOut,
    get: (id) => catalog.program(id),
    list: () => catalog.programs(),
    view: programWithRewards,
    put: async (id, body, res) => {
      const { created, program } = await defineProgram.handle(
        { ...body, id, description: body.description ?? null, metadata: body.metadata ?? null },
        commandContext(res),
      );
      return { created, value: program };
    },
  });

  const definePromo = container.resolve(DefinePromoCodeHandler);
  const promoView = async (promo: PromoCode) => {
    const [{ claims, conversions }, refunds] = await Promise.all([catalog.claimStats('promo', promo.code), catalog.refunds('code', promo.code)]);
    return { ...promo, stats: { claims, conversions, refunds } };
  };
  const promoCodes = adminResourceRoutes({
    tag: 'admin: promo codes',
    path: '/promo-codes',
    param: 'code',
    paramSchema: configuredCode,
    singular: 'promo_code',
    plural: 'promo_codes',
    name: 'PromoCode',
    notFoundCode: 'NOT_FOUND.PROMO_CODE',
    putErrors: ['CODE.REWARD_NOT_FOUND', 'CODE.INVALID_ACTIVATION', 'CODE.TAKEN'],
    body: promoCodeBody,
    out: promoCodeOut,
    get: (code) => catalog.promoCode(code),
    list: (page) => catalog.promoCodes(page),
    idOf: (promo) => promo.code,
    view: promoView,
    put: async (code, body, res) => {
      const { created, promo_code } = await definePromo.handle({ ...body, code, description: body.description ?? null }, commandContext(res));
      return { created, value: promo_code };
    },
  });

  const defineAffiliate = container.resolve(DefineAffiliateHandler);
  const users = container.resolve(UserQueries);
  const affiliateView = (affiliate: Affiliate) => users.affiliateRecord(affiliate);
  const affiliates = adminResourceRoutes({
    tag: 'admin: affiliates',
    path: '/affiliates',
    param: 'id',
    paramSchema: affiliateId,
    singular: 'affiliate',
    plural: 'affiliates',
    name: 'Affiliate',
    notFoundCode: 'NOT_FOUND.AFFILIATE',
    putErrors: ['AFFILIATE.REWARD_NOT_FOUND', 'AFFILIATE.INVALID_ACTIVATION', 'AFFILIATE.BANNED', 'CODE.TAKEN'],
    body: affiliateBody,
    out: adminAffiliateOut,
    get: (id) => catalog.affiliate(id),
    list: (page) => catalog.affiliates(page),
    idOf: (affiliate) => affiliate.id,
    view: affiliateView,
    put: async (id, body, res) => {
      const { created, affiliate } = await defineAffiliate.handle(
        { ...body, id, codes: [...new Set(body.codes)], logo_url: body.logo_url ?? null, app_user_id: body.app_user_id ?? null },
        commandContext(res),
      );
      return { created, value: affiliate };
    },
  });

  const pools = container.resolve(PoolAssignments);
  /** The reward `key` names, which must have a code pool: 404 NOT_FOUND.REWARD, 422 REWARD.NOT_POOLED. */
  const pooledReward = async (key: string) => {
    const reward = await catalog.reward(key);
    if (!reward) throw new ApiError('NOT_FOUND.REWARD', `No reward ${key}`, 'path:/key');
    if (!POOLED_KINDS.includes(reward.kind)) throw new ApiError('REWARD.NOT_POOLED', `Rewards of kind ${reward.kind} have no code pool`, 'path:/key');
    return reward;
  };
  const addPoolCodes = route({
    method: 'post',
    path: '/admin/rewards/{key}/codes',
    operationId: 'addPoolCodes',
    description:
      'Needs a secret key. Values already in the pool are skipped. Every code of an offer_code reward needs a `link` (400 `BAD_REQUEST` otherwise); a reward without a pool is 422 `REWARD.NOT_POOLED`. ' +
      `The body is at most ${BULK_BODY_LIMIT / 1024 / 1024} MiB (413 \`BODY_TOO_LARGE\` beyond): 10,000 codes fit when each takes up to about 400 bytes of JSON (a 32-character value with a 300-character link); longer codes go in several calls.`,
    summary: "Add one-time codes to an offer_code / store_promo_code reward's pool",
    tags: ['admin: rewards'],
    params: z.object({ key: rewardKey }),
    body: poolCodesBody,
    responses: { 200: { description: 'Added', schema: z.object({ data: poolCodesOut }) } },
    errors: ['NOT_FOUND.REWARD', 'REWARD.NOT_POOLED'],
    auth: 'secret',
    async handle({ params: { key }, body: { codes }, res }) {
      const reward = await pooledReward(key);
      const missingLink = reward.kind === 'offer_code' ? codes.findIndex((code) => !code.link) : -1;
      if (missingLink >= 0) throw new ApiError('BAD_REQUEST', 'An offer_code pool code needs a link', `/codes/${missingLink}/link`);
      const result = await pools.addCodes(
        key,
        codes.map((code) => ({ value: code.value, link: code.link ?? null, expires_at: code.expires_at })),
        commandContext(res),
      );
      return { status: 200, body: { data: { added: result.added, skipped: result.skipped, available: result.available } } };
    },
  });

  const poolFigures = route({
    method: 'get',
    path: '/admin/rewards/{key}/codes',
    operationId: 'getPoolFigures',
    summary: "An offer_code / store_promo_code reward's pool: codes available, used and expired, grants waiting",
    tags: ['admin: rewards'],
    params: z.object({ key: rewardKey }),
    responses: { 200: { description: 'The figures', schema: z.object({ data: poolFiguresOut }) } },
    errors: ['NOT_FOUND.REWARD', 'REWARD.NOT_POOLED'],
    auth: 'secret',
    async handle({ params: { key } }) {
      await pooledReward(key);
      return { status: 200, body: { data: await pools.figures(key) } };
    },
  });

  return [...rewards, addPoolCodes, poolFigures, ...programs, ...promoCodes, ...affiliates, ...adminAuditRoutes(container)];
}
