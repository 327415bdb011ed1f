import { ATTRIBUTION_TOTALS, type AttributionCounts, attributionTotalId } from '../../../projections/attribution.js';
import { AFFILIATES, PROGRAMS, PROMO_CODES, REWARDS } from '../../../projections/catalog.js';
import { CLAIM_STATS, claimStatsId } from '../../../projections/claim-stats.js';
import { CODES, type CodeDoc } from '../../../projections/codes.js';
import { USERS, type UserDoc } from '../../../projections/users.js';
import type { Affiliate, Program, PromoCode } from '../../domain/events/config-events.js';
import type { GrantSpec } from '../../domain/rewards/grant-and-expire.js';
import type { RewardDefinition, ConfiguredReward } from '../../domain/rewards/reward-schemas.js';
import type { FindQuery, ReadStore } from '../../ports/read-store.js';

export interface ResolvedEntry extends GrantSpec {
  reward: RewardDefinition;
  activation: ConfiguredReward['activation'];
}

/** A page of a collection in id order: `limit` documents (null: all) after the id `after` (null: from the first). */
export interface IdPage {
  after: string | null;
  limit: number | null;
}

const idPage = ({ after, limit }: IdPage): FindQuery => ({ ...(after !== null ? { afterId: after } : {}), ...(limit !== null ? { limit } : {}) });

/** Reads of the configuration and other read models, shared by handlers and GET endpoints. */
export class CatalogQueries {
  constructor(private readonly readStore: ReadStore) {}

  reward(key: string): Promise<RewardDefinition | null> {
    return this.readStore.get<RewardDefinition>(REWARDS, key);
  }

  async rewards(keys: string[]): Promise<Map<string, RewardDefinition>> {
    return this.readStore.getMany<RewardDefinition>(REWARDS, keys);
  }

  listRewards(page: IdPage): Promise<RewardDefinition[]> {
    return this.readStore.find<RewardDefinition>(REWARDS, idPage(page));
  }

  program(id: string): Promise<Program | null> {
    return this.readStore.get<Program>(PROGRAMS, id);
  }

  programs(): Promise<Program[]> {
    return this.readStore.find<Program>(PROGRAMS, { orderBy: { field: 'created_at', direction: 'asc' } });
  }

  promoCode(code: string): Promise<PromoCode | null> {
    return this.readStore.get<PromoCode>(PROMO_CODES, code);
  }

  promoCodes(page: IdPage): Promise<PromoCode[]> {
    return this.readStore.find<PromoCode>(PROMO_CODES, idPage(page));
  }

  affiliate(id: string): Promise<Affiliate | null> {
    return this.readStore.get<Affiliate>(AFFILIATES, id);
  }

  affiliates(page: IdPage): Promise<Affiliate[]> {
    return this.readStore.find<Affiliate>(AFFILIATES, idPage(page));
  }

  /** Every affiliate linked to the user, by id. */
  affiliatesOfUser(appUserId: string): Promise<Affiliate[]> {
    return this.readStore.find<Affiliate>(AFFILIATES, { where: { app_user_id: appUserId } });
  }

  async affiliateOfUser(appUserId: string): Promise<Affiliate | null> {
    const [affiliate] = await this.readStore.find<Affiliate>(AFFILIATES, { where: { app_user_id: appUserId }, limit: 1 });
    return affiliate ?? null;
  }

  async claimStats(type: 'promo' | 'affiliate', ownerId: string): Promise<{ claims: number; conversions: number }> {
    return (
      (await this.readStore.get<{ claims: number; conversions: number }>(CLAIM_STATS, claimStatsId(type, ownerId))) ?? {
        claims: 0,
        conversions: 0,
      }
    );
  }

  /**
   * Refunds of conversions attributed to a code or an affiliate, all time (SPEC §11: admin views'
   * stats gain `refunds`): one document of the attribution totals.
   */
  async refunds(group: 'code' | 'affiliate', id: string): Promise<number> {
    return (await this.readStore.get<AttributionCounts>(ATTRIBUTION_TOTALS, attributionTotalId(group, id)))?.refunds ?? 0;
  }

  code(code: string): Promise<CodeDoc | null> {
    return this.readStore.get<CodeDoc>(CODES, code);
  }

  /** The user's small document (profile, program, referral code, claim, stats): one read. */
  user(appUserId: string): Promise<UserDoc | null> {
    return this.readStore.get<UserDoc>(USERS, appUserId);
  }

  /** Entries with their reward definitions; entries whose reward is unknown are left out. */
  async resolveEntries(entries: ConfiguredReward[]): Promise<ResolvedEntry[]> {
    const rewards = await this.rewards(entries.map((entry) => entry.reward_key));
    return entries.flatMap((entry) => {
      const reward = rewards.get(entry.reward_key);
      return reward ? [{ reward, activation: entry.activation, deactivation: entry.deactivation, clawback: entry.clawback ?? 'none' }] : [];
    });
  }
}
