import { inject, injectable } from 'tsyringe';
import type { Config } from '../../config.js';
import type { Affiliate } from '../../domain/events/config-events.js';
import type { GrantedFact } from '../../domain/events/user-events.js';
import type { UserState } from '../../domain/users/user-state.js';
import type { Clock } from '../../ports/clock.js';
import { TOKENS } from '../../ports/tokens.js';
import { referralLink } from '../../domain/codes/referral-code.js';
import { CatalogQueries } from './catalog-queries.js';
import { programRewardKeys } from './reward-views.js';
import { grantedView, userView } from './user-view.js';

/** Builds the seed's User (and Affiliate) objects from the read models. */
@injectable()
export class UserQueries {
  constructor(
    @inject(CatalogQueries) private readonly catalog: CatalogQueries,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Config) private readonly config: Config,
  ) {}

  async state(appUserId: string): Promise<UserState | null> {
    return this.catalog.user(appUserId);
  }

  async userView(state: UserState) {
    const program = state.program_id === null ? null : await this.catalog.program(state.program_id);
    const keys = [...state.grants.map((grant) => grant.reward_key), ...(program ? programRewardKeys(program) : [])];
    const rewards = await this.catalog.rewards(keys);
    return userView(state, {
      now: this.clock.now(),
      windowDays: this.config.CLAIM_WINDOW_DAYS,
      linkBase: this.config.REFERRAL_LINK_BASE,
      rewards,
      program,
    });
  }

  async grantedView(state: UserState, granted: readonly GrantedFact[]) {
    const rewards = await this.catalog.rewards(state.grants.map((grant) => grant.reward_key));
    return grantedView(state, granted.map((grant) => grant.grant_id), rewards);
  }

  async affiliateView(appUserId: string) {
    const affiliate = await this.catalog.affiliateOfUser(appUserId);
    return affiliate && this.affiliateObject(affiliate);
  }

  async affiliateObject(affiliate: Affiliate) {
    const stats = await this.catalog.claimStats('affiliate', affiliate.id);
    return {
      id: affiliate.id,
      status: affiliate.status,
      codes: affiliate.codes.map((code) => ({ code, code_link: referralLink(this.config.REFERRAL_LINK_BASE, code) })),
      stats: { claims: stats.claims, conversions: stats.conversions, earnings: 0 },
    };
  }
}
