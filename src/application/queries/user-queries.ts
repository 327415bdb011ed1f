import { inject, injectable } from 'tsyringe';
import { type RewardEntryDoc, rewardEntryId, USER_REWARDS, type UserDoc } from '../../../projections/users.js';
import type { Config } from '../../config.js';
import type { Affiliate } from '../../domain/events/config-events.js';
import type { GrantedFact } from '../../domain/events/user-events.js';
import { POOLED_KINDS } from '../../domain/rewards/reward-kinds.js';
import type { Clock } from '../../ports/clock.js';
import type { ReadStore } from '../../ports/read-store.js';
import { TOKENS } from '../../ports/tokens.js';
import { referralLink } from '../../domain/codes/referral-code.js';
import { deepFreeze } from '../deep-freeze.js';
import { ReadModelGate } from '../projections/read-model-gate.js';
import { PersonalDataCipher } from '../privacy/personal-data-cipher.js';
import { openProfile } from '../privacy/personal-read-models.js';
import { CatalogQueries } from './catalog-queries.js';
import { programRewardKeys } from './reward-views.js';
import type { UserOut } from '../../http/schemas/users.js';
import { EXPIRED_PER_KIND, grantedView, userView } from './user-view.js';

/** A view asked for whose read has not started yet, and how many callers wait for it. */
interface PendingView {
  callers: number;
  view: Promise<UserOut | null>;
}

/**
 * Builds the seed's User (and Affiliate) objects from the read models: the user's document,
 * its live reward entries and, per kind that has any, its most recently expired ones — reads
 * bounded by what is live, never by the length of the user's history.
 */
@injectable()
export class UserQueries {
  /** Views asked for whose read has not started yet, by user. */
  private readonly viewsNotStarted = new Map<string, PendingView>();

  constructor(
    @inject(CatalogQueries) private readonly catalog: CatalogQueries,
    @inject(TOKENS.ReadStore) private readonly readStore: ReadStore,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Config) private readonly config: Config,
    @inject(ReadModelGate) private readonly gate: ReadModelGate,
    @inject(PersonalDataCipher) private readonly cipher: PersonalDataCipher,
  ) {}

  async exists(appUserId: string): Promise<boolean> {
    return (await this.catalog.user(appUserId))?.exists === true;
  }

  /**
   * The seed's User as `GET /users/{id}` and every command response show it; null when unknown.
   *
   * Calls for one user made before a read of it starts share that read, which starts on the next
   * microtask. The requests a batch of writes answers are released together and reach this call
   * in the same microtask round when they took the same path (a batch of withdrawals from many
   * devices): they cost one view, not one each. A call that arrives later reads again. Each caller
   * still gets a view read after its call, so a caller that waited for its write to reach the read
   * models (read-your-writes) sees it. A shared view is frozen: callers build their answers
   * around it, never change it.
   */
  userView(appUserId: string): Promise<UserOut | null> {
    let pending = this.viewsNotStarted.get(appUserId);
    if (!pending) {
      const read = Promise.resolve().then(() => {
        this.viewsNotStarted.delete(appUserId);
        // Its reads see the read models at one moment: this process's projector commits before or after them.
        return this.gate.read(() => this.readView(appUserId));
      });
      // Frozen only when shared: a view with one caller is that caller's alone.
      const asked: PendingView = { callers: 0, view: read.then((view) => (asked.callers > 1 ? deepFreeze(view) : view)) };
      pending = asked;
      this.viewsNotStarted.set(appUserId, asked);
    }
    pending.callers += 1;
    return pending.view;
  }

  private async readView(appUserId: string): Promise<UserOut | null> {
    const user = await this.catalog.user(appUserId);
    if (!user?.exists) return null;
    const [live, expired, program, profile] = await Promise.all([
      this.liveEntries(appUserId),
      this.recentlyExpiredEntries(user),
      user.program_id === null ? null : this.catalog.program(user.program_id),
      openProfile(this.cipher, user),
    ]);
    const keys = [...live, ...expired].map((entry) => entry.reward_key);
    const rewards = await this.catalog.rewards(program ? [...keys, ...programRewardKeys(program)] : keys);
    return userView(user, profile, live, expired, {
      now: this.clock.now(),
      windowDays: this.config.CLAIM_WINDOW_DAYS,
      linkBase: this.config.REFERRAL_LINK_BASE,
      rewards,
      program,
    });
  }

  /** `rewards_granted` of a command: the grants it made, as granted (pooled ones with their entry's value). */
  async grantedView(appUserId: string, granted: readonly GrantedFact[]) {
    const pooled = granted.filter((grant) => POOLED_KINDS.includes(grant.kind)).map((grant) => rewardEntryId(appUserId, grant.entry_id));
    const [rewards, rows] = await Promise.all([
      this.catalog.rewards(granted.map((grant) => grant.reward_key)),
      pooled.length > 0 ? this.readStore.getMany<RewardEntryDoc>(USER_REWARDS, pooled) : new Map<string, RewardEntryDoc>(),
    ]);
    const entries = new Map([...rows.values()].map((entry) => [entry.entry_id, entry]));
    return grantedView(granted, entries, rewards);
  }

  /** Entries whose expiry is not recorded yet (active, or expired by time and not swept yet). */
  liveEntries(appUserId: string): Promise<RewardEntryDoc[]> {
    return this.readStore.find<RewardEntryDoc>(USER_REWARDS, {
      where: { app_user_id: appUserId, expired: false },
      orderBy: { field: 'seq', direction: 'asc' },
    });
  }

  /** Per kind with recorded expiries, the EXPIRED_PER_KIND most recently expired entries. */
  async recentlyExpiredEntries(user: Pick<UserDoc, 'app_user_id' | 'expired_kinds'>): Promise<RewardEntryDoc[]> {
    const perKind = await Promise.all(
      user.expired_kinds.map((kind) =>
        this.readStore.find<RewardEntryDoc>(USER_REWARDS, {
          where: { app_user_id: user.app_user_id, expired: true, kind },
          orderBy: { field: 'expires_at', direction: 'desc' },
          limit: EXPIRED_PER_KIND,
        }),
      ),
    );
    return perKind.flat();
  }

  /** `GET /users/{id}`'s answer: the user as the read models show it, and the affiliate linked to it; null for an unknown user. */
  async userWithAffiliate(appUserId: string) {
    const [user, affiliate] = await Promise.all([this.userView(appUserId), this.affiliateView(appUserId)]);
    return user && { user, affiliate };
  }

  async affiliateView(appUserId: string) {
    const affiliate = await this.catalog.affiliateOfUser(appUserId);
    return affiliate && this.affiliateObject(affiliate);
  }

  /** An affiliate as the app sees it on its user: its codes and the seed's three figures. */
  async affiliateObject(affiliate: Affiliate) {
    const { claims, conversions } = await this.catalog.claimStats('affiliate', affiliate.id);
    return { id: affiliate.id, status: affiliate.status, codes: this.codeLinks(affiliate), stats: { claims, conversions, earnings: 0 } };
  }

  /** An affiliate as the admin API shows it: everything it holds, its codes' links and its figures, refunds included. */
  async affiliateRecord(affiliate: Affiliate) {
    const [{ claims, conversions }, refunds] = await Promise.all([
      this.catalog.claimStats('affiliate', affiliate.id),
      this.catalog.refunds('affiliate', affiliate.id),
    ]);
    return { ...affiliate, codes: this.codeLinks(affiliate), stats: { claims, conversions, earnings: 0, refunds } };
  }

  private codeLinks(affiliate: Affiliate) {
    return affiliate.codes.map((code) => ({ code, code_link: referralLink(this.config.REFERRAL_LINK_BASE, code) }));
  }

  /**
   * `GET /admin/users/{id}`: the user as the app sees it, its stats with the refunds of the
   * conversions attributed to its referral code; null for an unknown user.
   */
  async userForOperators(appUserId: string) {
    const answer = await this.userWithAffiliate(appUserId);
    if (!answer) return null;
    const { user } = answer;
    const refunds = user.referral_code === null ? 0 : await this.catalog.refunds('code', user.referral_code);
    return { ...answer, user: { ...user, stats: { ...user.stats, refunds } } };
  }

  /** Every affiliate linked to a user, whole (the user's data export). */
  async affiliateRecordsOfUser(appUserId: string) {
    return Promise.all((await this.catalog.affiliatesOfUser(appUserId)).map((affiliate) => this.affiliateRecord(affiliate)));
  }
}
