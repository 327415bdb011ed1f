import type { RewardKind } from '../../domain/rewards/reward-kinds.js';
import type { CatalogQueries } from '../queries/catalog-queries.js';

/** Kind of every existing reward, by key: what reward entries are checked against. */
export async function rewardKinds(catalog: CatalogQueries): Promise<Map<string, RewardKind>> {
  return new Map((await catalog.listRewards({ after: null, limit: null })).map((reward) => [reward.key, reward.kind]));
}
