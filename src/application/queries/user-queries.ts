import { inject, injectable } from 'tsyringe';
import type { Config } from '../../config.js';
import type { Affiliate } from '../../domain/events/config-events.js';
import type { GrantedFact } from '../../domain/events/user-events.js';
import { isActiveAt } from '../../domain/rewards/expiry.js';
import type { UserState as WriteState } from '../../domain/users/user-state.js';
import type { GrantState, UserDocument as UserState } from './legacy-user-document.js';
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

  /**
   * The user as a command leaves it: profile, counters and live entries from the command's own
   * state (so an acknowledged write never looks missing while read models lag), the expired
   * entries from the users read model.
   */
  async commandUserView(state: WriteState) {
    const doc = await this.catalog.user(state.app_user_id);
    const live = new Set(state.entries.map((entry) => entry.entry_id));
    const expired = (doc?.grants ?? []).filter((grant) => !live.has(grant.grant_id) && (grant.expired || !isActiveAt(grant.expires_at, this.clock.now())));
    const grants: GrantState[] = [
      ...expired,
      ...state.entries.map((entry) => ({ ...entry, grant_id: entry.entry_id, expired: false })),
    ];
    return this.userView({ ...state, grants, operations: {} });
  }

  /** `rewards_granted`: each grant as granted (its own credits, expiry and time; SPEC §5.3). */
  async grantedView(state: WriteState, granted: readonly GrantedFact[]) {
    const rewards = await this.catalog.rewards(granted.map((grant) => grant.reward_key));
    const entries = new Map(state.entries.map((entry) => [entry.entry_id, entry]));
    const grants: GrantState[] = granted.map((grant) => {
      const entry = entries.get(grant.entry_id);
      return {
        grant_id: grant.grant_id,
        reward_key: grant.reward_key,
        kind: grant.kind,
        credits: grant.credits,
        value: entry?.value ?? null,
        expires_at: grant.expires_at,
        created_at: grant.granted_at,
        updated_at: grant.entry_id === grant.grant_id ? (entry?.updated_at ?? null) : null,
        expired: false,
      };
    });
    return grantedView({ grants } as UserState, grants.map((grant) => grant.grant_id), rewards);
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
