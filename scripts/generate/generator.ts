/**
 * The simulation behind `npm run generate-events`: users register and act in simulated time
 * order. What the service writes for each of their requests (and the referral reaction after
 * them) is decided and sequenced by the service's own code, in SimulatedService
 * (simulated-service.ts); this file decides who does what, and when.
 */
import { pooledRandomBytes } from '../../src/application/pooled-random-bytes.js';
import type { NewDomainEvent } from '../../src/domain/decider.js';
import type { CodeType } from '../../src/domain/events/code-events.js';
import { assignProgram } from '../../src/domain/programs/program-assignment.js';
import type { GrantSpec } from '../../src/domain/rewards/grant-and-expire.js';
import type { ClaimTarget } from '../../src/domain/users/claim-code.js';
import type { SenderReward } from '../../src/domain/users/count-referral.js';
import type { ProfileFields } from '../../src/domain/users/upsert-user.js';
import { initialUserState } from '../../src/domain/users/user-state.js';
import type { Ids } from '../../src/ports/ids.js';
import type { EventLog } from '../../src/application/event-log.js';
import {
  DAY,
  HOUR,
  MINUTE,
  LIFETIME,
  RETIRE_AFTER,
  REFERRER_RECENCY,
  BASELINE_EVENTS_PER_USER,
  GOODWILL_CREDITS,
  WELCOME_PROMO,
  LAUNCH_PROMO,
} from './generation-config.js';
import { Random } from './random.js';
import { type Action, type ProfileChange, type Scheduled, Timeline } from './timeline.js';
import type { CommitGroups } from './commit-groups.js';
import { type Catalog, type CodeStream, ensureGeneratedCatalog, receiverEntries, resolveEntries } from './generated-catalog.js';
import { SimulatedService, type SimulatedServiceHooks, type SimUser } from './simulated-service.js';

export type { SimUser } from './simulated-service.js';

export interface GeneratorOptions {
  events: number;
  users: number;
  days: number;
  seed: number;
}

export interface GenerationSummary {
  written: number;
  users: number;
  claims: number;
  conversions: number;
  withdrawals: number;
  /** Activity steps added after everyone's simulated life, to reach the event count. */
  topUps: number;
  runTag: string;
}

/** Events written between two turns of the event loop (signals are handled there). */
const YIELD_EVERY_EVENTS = 2_000;

export class Generator {
  private readonly random: Random;
  private readonly timeline = new Timeline();
  private readonly users = new Map<string, SimUser>();
  /** Users in registration order, for retiring them and choosing recent referrers. */
  private readonly byRegistration: SimUser[] = [];
  private retiredUpTo = 0;
  private referrersFrom = 0;
  private readonly recentInfluencers: SimUser[] = [];
  private codes = new Map<string, CodeStream>();
  private catalog!: Catalog;
  private readonly service: SimulatedService;
  private readonly runTag = pooledRandomBytes(3).toString('hex');
  private readonly start: number;
  private readonly end: number;
  private registered = 0;
  private operations = 0;
  private activityPerDay = 0;
  stopRequested = false;
  readonly summary: GenerationSummary;

  constructor(
    log: EventLog,
    ids: Ids,
    private readonly options: GeneratorOptions,
    claimWindowDays: number,
    private readonly groups: CommitGroups,
    private readonly onProgress: (summary: GenerationSummary) => void,
    journal?: SimulatedServiceHooks['journal'],
  ) {
    this.random = new Random(options.seed);
    this.end = Date.now();
    this.start = this.end - options.days * DAY;
    this.summary = { written: 0, users: 0, claims: 0, conversions: 0, withdrawals: 0, topUps: 0, runTag: this.runTag };
    this.service = new SimulatedService(log.store, ids, claimWindowDays, {
      user: (id) => this.users.get(id),
      appended: (user, events, at) => this.followUps(user, events, at),
      reactionDelay: () => this.random.between(5, 200),
      senderRewards: (referrer) => this.senderRewards(referrer),
      ...(journal ? { journal } : {}),
    });
  }

  /** What a user's new events lead to: recorded expiries, and credits that tend to be spent. */
  private followUps(user: SimUser, events: NewDomainEvent[], at: number): void {
    for (const event of events) {
      if (event.type !== 'RewardGranted') continue;
      // The expiry sweep records expiries within its interval (30 s) of the due time.
      if (event.data.expires_at !== null)
        this.schedule(user, Date.parse(event.data.expires_at) + this.random.between(1_000, 30_000), { kind: 'sweep', user: user.id }, true);
      // Credits tend to be spent.
      if (event.data.kind === 'credit' && this.random.chance(0.5)) {
        const amount = this.random.pick([10, 20, 25, 50, 100]);
        this.schedule(user, at + this.random.between(HOUR, 5 * DAY), { kind: 'withdraw', user: user.id, key: event.data.reward_key, amount });
      }
    }
  }

  private schedule(user: SimUser, at: number, action: Action, ignoreLifetime = false): void {
    if (at > this.end || (!ignoreLifetime && at > user.activeUntil)) return;
    user.pending += 1;
    this.timeline.push(at, action);
  }

  // --- configuration -------------------------------------------------------------------------

  async setUp(): Promise<void> {
    ({ catalog: this.catalog, codes: this.codes } = await ensureGeneratedCatalog(this.service.log, this.service.registry, new Date(this.start)));
    this.summary.written = this.service.written;
    // Extra profile activity fills the event budget beyond the baseline lifecycle.
    const activeDays = this.options.days * DAY >= LIFETIME ? LIFETIME / DAY - (LIFETIME / DAY) ** 2 / (2 * this.options.days) : this.options.days / 2;
    const extraPerUser = Math.max(0, this.options.events / this.options.users - BASELINE_EVENTS_PER_USER);
    this.activityPerDay = extraPerUser / activeDays;
  }

  // --- catalog look-ups ----------------------------------------------------------------------

  private conversionRewards(user: SimUser): GrantSpec[] {
    const referredBy = user.state.referred_by;
    if (referredBy === null || user.state.converted_at !== null) return [];
    return resolveEntries(this.catalog, receiverEntries(this.catalog, referredBy.type, referredBy.code, user.claimedProgramId)).filter(
      (entry) => entry.activation.variant === 'conversion',
    );
  }

  private senderRewards(referrer: SimUser): SenderReward[] {
    const program = referrer.state.program_id ? this.catalog.programs.get(referrer.state.program_id) : undefined;
    return program ? resolveEntries(this.catalog, program.rewards.sender) : [];
  }

  // --- actions -------------------------------------------------------------------------------

  private async register(at: number): Promise<void> {
    const id = `gen-${this.runTag}-${this.registered}`;
    this.registered += 1;
    const user: SimUser = {
      id,
      state: initialUserState(),
      revision: -1,
      registeredAt: at,
      activeUntil: Math.min(this.end, at + LIFETIME),
      pending: 0,
      influencer: this.random.chance(0.02),
      referrals: 0,
      claimedProgramId: null,
      sessions: 1,
    };
    const program = assignProgram(id, [...this.catalog.programs.values()]);
    const isTrial = this.random.chance(0.3);
    const isPremium = !isTrial && this.random.chance(0.08);
    const fields: Partial<ProfileFields> = {
      is_trial: isTrial,
      is_premium: isPremium,
      metadata: {
        platform: this.random.pick(['ios', 'ios', 'android']),
        app_version: '4.2.0',
        locale: this.random.pick(['en-US', 'en-GB', 'de-DE', 'fr-FR', 'ja-JP']),
        sessions: 1,
      },
      ...(this.random.chance(0.6) ? { first_seen_at: new Date(at - this.random.between(0, 3 * HOUR)).toISOString() } : {}),
    };
    this.users.set(id, user);
    this.byRegistration.push(user);
    if (user.influencer) this.recentInfluencers.push(user);
    await this.service.register(user, fields, program ?? null, at);
    this.summary.users += 1;

    // What this user will do.
    if (this.random.chance(0.45)) {
      const roll = this.random.next();
      const codeType: CodeType = roll < 0.7 ? 'referral' : roll < 0.9 ? 'promo' : 'affiliate';
      this.schedule(user, at + Math.min(2 * DAY, this.random.exponential(2 * HOUR)), { kind: 'claim', user: id, codeType });
    }
    if (!isPremium && this.random.chance(isTrial ? 0.45 : 0.2)) {
      const convertAt = at + this.random.between(isTrial ? 3 * DAY : HOUR, 30 * DAY);
      this.schedule(user, convertAt, { kind: 'profile', user: id, change: 'convert' });
      if (this.random.chance(0.3)) this.schedule(user, convertAt + this.random.between(7 * DAY, 28 * DAY), { kind: 'profile', user: id, change: 'churn' });
    } else if (isTrial) {
      this.schedule(user, at + 7 * DAY + this.random.between(0, HOUR), { kind: 'profile', user: id, change: 'trial-end' });
    }
    if (this.random.chance(0.03)) this.schedule(user, at + this.random.between(DAY, LIFETIME), { kind: 'grant', user: id });
    const activeDays = (user.activeUntil - at) / DAY;
    const activity = this.random.poisson(this.activityPerDay * activeDays);
    for (let index = 0; index < activity; index += 1) {
      this.schedule(user, at + this.random.between(MINUTE, user.activeUntil - at), { kind: 'profile', user: id, change: 'activity' });
    }
  }

  private pickReferrer(claimer: SimUser, at: number): SimUser | null {
    while (this.referrersFrom < this.byRegistration.length && this.byRegistration[this.referrersFrom]!.registeredAt < at - REFERRER_RECENCY)
      this.referrersFrom += 1;
    while (this.recentInfluencers.length > 0 && this.recentInfluencers[0]!.registeredAt < at - REFERRER_RECENCY) this.recentInfluencers.shift();
    for (let attempt = 0; attempt < 6; attempt += 1) {
      const candidate =
        this.recentInfluencers.length > 0 && this.random.chance(0.3)
          ? this.random.pick(this.recentInfluencers)
          : this.byRegistration[this.random.int(this.referrersFrom, this.byRegistration.length - 1)];
      if (!candidate || candidate === claimer || !this.users.has(candidate.id) || candidate.state.referral_code === null) continue;
      if (candidate.referrals >= (candidate.influencer ? 400 : 25)) continue;
      return candidate;
    }
    return null;
  }

  private chooseTarget(user: SimUser, codeType: CodeType, at: number): { target: ClaimTarget; limit: number; referrer: SimUser | null } | null {
    let type = codeType;
    let referrer: SimUser | null = null;
    if (type === 'referral') {
      referrer = this.pickReferrer(user, at);
      if (referrer === null) type = 'promo';
    }
    let code: string;
    let ownerId: string;
    let programId: string | null = null;
    let ownerAppUserId: string | null = null;
    let active: boolean;
    let limit: number;
    if (type === 'referral') {
      code = referrer!.state.referral_code!;
      ownerId = referrer!.id;
      ownerAppUserId = referrer!.id;
      programId = referrer!.state.program_id;
      const program = programId ? this.catalog.programs.get(programId) : undefined;
      active = program !== undefined;
      limit = program?.limit ?? 0;
    } else if (type === 'promo') {
      const launch = this.catalog.promos.get(LAUNCH_PROMO)!;
      const launchOpen = launch.limit === 0 || this.codes.get(LAUNCH_PROMO)!.taken < launch.limit;
      const promo = launchOpen && this.random.chance(0.4) ? launch : this.catalog.promos.get(WELCOME_PROMO)!;
      code = promo.code;
      ownerId = promo.code;
      active = promo.is_active;
      limit = promo.limit;
    } else {
      code = this.random.pick([...this.catalog.affiliateCodes.keys()]);
      const affiliate = this.catalog.affiliateCodes.get(code)!;
      ownerId = affiliate.id;
      ownerAppUserId = affiliate.app_user_id;
      active = affiliate.status === 'approved';
      limit = 0;
    }
    const entries = resolveEntries(this.catalog, receiverEntries(this.catalog, type, code, programId));
    return {
      target: {
        code,
        type,
        owner_id: ownerId,
        program_id: programId,
        owner_app_user_id: ownerAppUserId,
        is_active: active,
        claimRewards: entries.filter((entry) => entry.activation.variant === 'claim'),
        conversionRewards: entries.filter((entry) => entry.activation.variant === 'conversion'),
      },
      limit,
      referrer,
    };
  }

  private async claim(user: SimUser, codeType: CodeType, at: number): Promise<void> {
    const chosen = this.chooseTarget(user, codeType, at);
    if (chosen === null) return;
    const { target, limit, referrer } = chosen;
    const claimed = await this.service.claim(user, target, limit, at, () => this.random.between(2, 40));
    if (claimed === null) return; // the service would have answered 4xx and written nothing
    const slots = this.codes.get(target.code);
    if (slots) slots.taken += 1;
    user.claimedProgramId = target.program_id;
    if (referrer) referrer.referrals += 1;
    this.summary.claims += 1;
    if (claimed.converted) this.summary.conversions += 1;
  }

  private async profile(user: SimUser, change: ProfileChange, at: number): Promise<void> {
    const state = user.state;
    let fields: Partial<ProfileFields>;
    if (change === 'convert') {
      fields = { is_premium: true, is_trial: false, payment_customer_id: `cus_${pooledRandomBytes(7).toString('hex')}` };
    } else if (change === 'churn') {
      fields = { is_premium: false };
    } else if (change === 'trial-end') {
      fields = { is_trial: false, is_premium: false };
    } else {
      user.sessions += this.random.int(1, 6);
      const version = this.random.chance(0.1) ? this.random.pick(['4.2.1', '4.3.0', '4.3.1', '5.0.0']) : state.metadata?.app_version;
      fields = { metadata: { ...state.metadata, app_version: version ?? '4.2.0', sessions: user.sessions } };
    }
    if (await this.service.profile(user, fields, this.conversionRewards(user), at)) this.summary.conversions += 1;
  }

  private async withdraw(user: SimUser, key: string, amount: number, at: number): Promise<void> {
    const numbered = this.random.chance(0.8);
    if (numbered) this.operations += 1;
    await this.service.withdraw(user, key, amount, numbered ? `order-${this.operations}` : null, at);
    this.summary.withdrawals += 1;
  }

  private async grant(user: SimUser, at: number): Promise<void> {
    this.operations += 1;
    await this.service.grant(user, this.catalog.rewards.get(GOODWILL_CREDITS)!, `support-ticket-${this.operations}`, at);
  }

  private async run(scheduled: Scheduled): Promise<void> {
    const { action, at } = scheduled;
    const user = this.users.get(action.user);
    if (!user) return;
    user.pending -= 1;
    switch (action.kind) {
      case 'claim':
        return this.claim(user, action.codeType, at);
      case 'profile':
        return this.profile(user, action.change, at);
      case 'withdraw':
        // The credits may be partly spent already: then it withdraws what is left (possibly 0).
        return this.withdraw(user, action.key, action.amount, at);
      case 'grant':
        return this.grant(user, at);
      case 'sweep':
        return this.service.sweep(user, at);
    }
  }

  /** Drops users whose whole life is simulated (memory stays bounded on long histories). */
  private retire(now: number): void {
    while (this.retiredUpTo < this.byRegistration.length) {
      const user = this.byRegistration[this.retiredUpTo]!;
      if (user.registeredAt > now - RETIRE_AFTER || user.pending > 0) break;
      this.users.delete(user.id);
      this.retiredUpTo += 1;
    }
    // Keep the array from growing without bound: cut the retired (and non-referrer) head.
    const cut = Math.min(this.retiredUpTo, this.referrersFrom);
    if (cut > 50_000) {
      this.byRegistration.splice(0, cut);
      this.retiredUpTo -= cut;
      this.referrersFrom -= cut;
    }
  }

  private lastAt = 0;
  private retireCheck = 0;
  private nextRegistration = 0;

  async generate(): Promise<GenerationSummary> {
    const interval = (this.end - this.start) / this.options.users;
    this.nextRegistration = this.start + this.random.between(0, interval);
    this.lastAt = this.start;
    this.retireCheck = this.start;
    try {
      let turnAt = 0;
      while (this.summary.written < this.options.events && !this.stopRequested) {
        this.groups.begin();
        await this.step(interval);
        this.summary.written = this.service.written;
        await this.groups.maybeCommit();
        // Each step resolves at once: give the event loop a turn now and then, or Ctrl-C (SIGINT) waits for the end.
        if (this.summary.written - turnAt >= YIELD_EVERY_EVENTS) {
          turnAt = this.summary.written;
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
        if (this.lastAt - this.retireCheck > DAY) {
          this.retire(this.lastAt);
          this.retireCheck = this.lastAt;
        }
        this.onProgress(this.summary);
      }
      await this.groups.commit();
    } catch (error) {
      await this.groups.rollback();
      throw error;
    }
    return this.summary;
  }

  /** One registration or one scheduled action, whichever comes first. */
  private async step(interval: number): Promise<void> {
    if (this.registered < this.options.users && this.nextRegistration <= this.timeline.peekAt()) {
      this.lastAt = this.nextRegistration;
      await this.register(this.lastAt);
      this.nextRegistration = this.start + (this.registered + this.random.next()) * interval;
      return;
    }
    const scheduled = this.timeline.pop();
    if (scheduled !== undefined) {
      this.lastAt = scheduled.at;
      await this.run(scheduled);
      return;
    }
    // Everyone's life is simulated and events are still missing: more activity of the users
    // still in memory until the count is reached (or more users, if none is left).
    this.lastAt = Math.min(this.end, this.lastAt + this.random.between(MINUTE, 10 * MINUTE));
    this.summary.topUps += 1;
    const resident =
      this.byRegistration.length > this.retiredUpTo ? this.byRegistration[this.random.int(this.retiredUpTo, this.byRegistration.length - 1)] : undefined;
    if (resident && this.users.has(resident.id)) await this.profile(resident, 'activity', this.lastAt);
    else await this.register(this.lastAt);
  }
}
