/**
 * npm run generate-events -- --events 1000000 [--users N] [--days D] [--seed S]
 *
 * Appends a realistic synthetic history to the configured store (DATA_DIR, or
 * EVENTSTORE_URL + MONGODB_URL), to benchmark replay and export on a large log:
 *
 * - configuration (once per store, reused by later runs): rewards `gen-credits`,
 *   `gen-premium-week`, `gen-welcome-credits`, `gen-goodwill-credits`; program `gen-friends`
 *   (100% of users); promo codes GEN-WELCOME and GEN-LAUNCH (limit 500); three affiliates;
 * - `--users` users (default events / 9) registering over the last `--days` days (default 180)
 *   and, in simulated time order, claiming referral, promo and affiliate codes, converting,
 *   churning, updating their profile, withdrawing credits, receiving goodwill grants and having
 *   expired rewards swept — until `--events` events are written (a run ends after the action
 *   that reaches the count, so it may write a few more).
 *
 * Every event is what the service itself would have written: the same pure deciders decide
 * it, `EventLog` checks it against its schema, and each append names the stream's exact
 * expected revision. One append is one request or process step (its own correlation id and
 * actor), carrying all the events that step writes to one stream at once. The referrer's side
 * of a referral (counts and sender rewards) is written as the referral reaction writes it
 * (same deterministic ids, `cause_position` of the claimer's event), so the service's reaction
 * runner later finds nothing left to do. Times inside events (`registered_at`, `claimed_at`, …)
 * are simulated; `recorded_at` is the real time of the append.
 *
 * The store must hold no referral program other than `gen-friends` (the program covers 100% of
 * users), so use a fresh DATA_DIR, or one this script generated into before. User ids carry a
 * per-run tag (`gen-<tag>-<n>`), so later runs add users. Pooled rewards (offer codes) are not
 * generated. Read models are built by the service (or `npm run replay`) afterwards.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import cliProgress from 'cli-progress';
import {
  affiliateConfigEvolver,
  programConfigEvolver,
  promoConfigEvolver,
  rewardConfigEvolver,
} from '../src/domain/catalog/config-state.js';
import { type AffiliateInput, decideDefineAffiliate } from '../src/domain/catalog/affiliate-config.js';
import { decideDefineProgram, type ProgramInput } from '../src/domain/catalog/program-config.js';
import { decideDefinePromoCode, type PromoCodeInput } from '../src/domain/catalog/promo-config.js';
import { decideDefineReward, type RewardInput } from '../src/domain/catalog/reward-config.js';
import { decideTakeSlot, slotsTaken } from '../src/domain/codes/claim-slots.js';
import type { Decision, Evolver, NewDomainEvent } from '../src/domain/decider.js';
import { DomainError } from '../src/domain/domain-error.js';
import type { CodeType } from '../src/domain/events/code-events.js';
import type { Affiliate, Program, PromoCode } from '../src/domain/events/config-events.js';
import { streams } from '../src/domain/events/index.js';
import type { ReferredByFact } from '../src/domain/events/user-events.js';
import { assignProgram } from '../src/domain/programs/program-assignment.js';
import type { GrantSpec } from '../src/domain/rewards/grant-rewards.js';
import type { RewardKind } from '../src/domain/rewards/reward-kinds.js';
import type { Deactivation, RewardDefinition, RewardEntry } from '../src/domain/rewards/reward-schemas.js';
import { checkClaim, type ClaimTarget, decideClaimCode } from '../src/domain/users/claim-code.js';
import { decideCountReferral, type ReferralFigure, type SenderReward } from '../src/domain/users/count-referral.js';
import { decideGrantReward } from '../src/domain/users/grant-reward.js';
import { decideExpireRewards } from '../src/domain/users/maintenance.js';
import { decideUpsertUser, type ProfileFields } from '../src/domain/users/upsert-user.js';
import { evolveUser, initialUserState, type UserState } from '../src/domain/users/user-state.js';
import { decideWithdrawCredits } from '../src/domain/users/withdraw-credits.js';
import { type AppendResult, type ExpectedRevision, WrongExpectedRevisionError } from '../src/ports/event-store.js';
import type { Ids } from '../src/ports/ids.js';
import { openSqlite, type SqliteConnection } from '../src/adapters/sqlite/sqlite-database.js';
import { SqliteEventStore } from '../src/adapters/sqlite/sqlite-event-store.js';
import { RandomIds } from '../src/adapters/system/random-ids.js';
import { type CommandContext, EventLog } from '../src/application/event-log.js';
import { openScriptContext, parseArgs } from './script-context.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const MINUTE = 60_000;

/** All of a user's own actions happen within this time after it registers. */
const LIFETIME = 60 * DAY;
/** A user's state is dropped from memory this long after it registered (all its actions are done). */
const RETIRE_AFTER = 100 * DAY;
/** Referrers are users who registered at most this long before the claim. */
const REFERRER_RECENCY = 21 * DAY;
/** Events per user from everything but the extra profile activity (measured on default runs). */
const BASELINE_EVENTS_PER_USER = 6.5;

const GEN_PROGRAM_ID = 'gen-friends';
const CREDITS = 'gen-credits';
const PREMIUM_WEEK = 'gen-premium-week';
const WELCOME_CREDITS = 'gen-welcome-credits';
const GOODWILL_CREDITS = 'gen-goodwill-credits';
const WELCOME_PROMO = 'GEN-WELCOME';
const LAUNCH_PROMO = 'GEN-LAUNCH';

function actorOf(kind: 'client' | 'secret', name: string): string {
  return `${kind}:${createHash('sha256').update(`generate-events:${name}`).digest('hex').slice(0, 12)}`;
}
const CLIENT_ACTOR = actorOf('client', 'app');
const SECRET_ACTOR = actorOf('secret', 'backoffice');

const never: Deactivation = { variant: 'never' };
const days = (duration: number): Deactivation => ({ variant: 'interval', duration, period: 'days' });

const REWARDS: RewardInput[] = [
  { key: CREDITS, kind: 'credit', name: 'Referral credits', description: 'Earned for each friend who joins', metadata: null, credits: 50 },
  { key: PREMIUM_WEEK, kind: 'basic', name: 'Premium week', description: null, metadata: { entitlement: 'premium' } },
  { key: WELCOME_CREDITS, kind: 'credit', name: 'Welcome credits', description: null, metadata: null, credits: 10 },
  { key: GOODWILL_CREDITS, kind: 'credit', name: 'Goodwill credits', description: 'Granted by support', metadata: null, credits: 20 },
];

const PROGRAM: ProgramInput = {
  id: GEN_PROGRAM_ID,
  name: 'Invite friends (generated)',
  description: 'Synthetic program of npm run generate-events',
  metadata: null,
  distribution_percentage: 100,
  limit: 0,
  rewards: {
    sender: [
      { reward_key: CREDITS, activation: { variant: 'claim', amount: 1, limit: 0 }, deactivation: never },
      { reward_key: CREDITS, activation: { variant: 'conversion', amount: 3, limit: 10 }, deactivation: never },
    ],
    receiver: [
      { reward_key: PREMIUM_WEEK, activation: { variant: 'claim' }, deactivation: days(7) },
      { reward_key: WELCOME_CREDITS, activation: { variant: 'conversion' }, deactivation: never },
    ],
  },
};

const PROMOS: PromoCodeInput[] = [
  {
    code: WELCOME_PROMO,
    description: 'Welcome credits for everyone',
    is_active: true,
    limit: 0,
    rewards: [{ reward_key: WELCOME_CREDITS, activation: { variant: 'claim' }, deactivation: never }],
  },
  {
    code: LAUNCH_PROMO,
    description: 'Launch week: two premium weeks for the first 500',
    is_active: true,
    limit: 500,
    rewards: [{ reward_key: PREMIUM_WEEK, activation: { variant: 'claim' }, deactivation: days(14) }],
  },
];

const AFFILIATES: AffiliateInput[] = [1, 2, 3].map((n) => ({
  id: `gen-affiliate-${n}`,
  status: 'approved',
  name: `Generated creator ${n}`,
  logo_url: null,
  platforms: [{ type: n % 2 === 0 ? 'youtube' : 'instagram', handle: `@gen_creator_${n}`, verified: n !== 3 }],
  app_user_id: null,
  codes: [`GEN-AFF${n}`],
  rewards: [
    { reward_key: PREMIUM_WEEK, activation: { variant: 'claim' }, deactivation: days(30) },
    { reward_key: WELCOME_CREDITS, activation: { variant: 'conversion' }, deactivation: never },
  ],
}));

// ---------------------------------------------------------------------------------------------
// Randomness (seeded, so a seed reproduces the same choices; event ids stay random UUIDs)

class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** mulberry32 */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  between(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  int(min: number, maxInclusive: number): number {
    return Math.floor(this.between(min, maxInclusive + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  exponential(mean: number): number {
    return -mean * Math.log(1 - this.next());
  }

  poisson(mean: number): number {
    if (mean <= 0) return 0;
    if (mean > 30) {
      const gaussian = Math.sqrt(-2 * Math.log(1 - this.next())) * Math.cos(2 * Math.PI * this.next());
      return Math.max(0, Math.round(mean + Math.sqrt(mean) * gaussian));
    }
    const limit = Math.exp(-mean);
    let count = 0;
    let product = this.next();
    while (product > limit) {
      count += 1;
      product *= this.next();
    }
    return count;
  }
}

// ---------------------------------------------------------------------------------------------
// Simulated actions, processed in time order

type ProfileChange = 'convert' | 'churn' | 'trial-end' | 'activity';

type Action =
  | { kind: 'claim'; user: string; codeType: CodeType }
  | { kind: 'profile'; user: string; change: ProfileChange }
  | { kind: 'withdraw'; user: string; key: string; amount: number }
  | { kind: 'grant'; user: string }
  | { kind: 'sweep'; user: string };

interface Scheduled {
  at: number;
  seq: number;
  action: Action;
}

/** A binary min-heap on (at, seq). */
class Timeline {
  private readonly heap: Scheduled[] = [];
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  peekAt(): number {
    return this.heap[0]?.at ?? Number.POSITIVE_INFINITY;
  }

  push(at: number, action: Action): void {
    const item = { at, seq: (this.seq += 1), action };
    const heap = this.heap;
    heap.push(item);
    let index = heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!this.before(heap[index]!, heap[parent]!)) break;
      [heap[index], heap[parent]] = [heap[parent]!, heap[index]!];
      index = parent;
    }
  }

  pop(): Scheduled | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined || heap.length === 0) return top;
    heap[0] = last;
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let smallest = index;
      if (left < heap.length && this.before(heap[left]!, heap[smallest]!)) smallest = left;
      if (right < heap.length && this.before(heap[right]!, heap[smallest]!)) smallest = right;
      if (smallest === index) break;
      [heap[index], heap[smallest]] = [heap[smallest]!, heap[index]!];
      index = smallest;
    }
    return top;
  }

  private before(a: Scheduled, b: Scheduled): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }
}

interface SimUser {
  id: string;
  state: UserState;
  revision: number;
  registeredAt: number;
  /** Its own actions happen before this. */
  activeUntil: number;
  /** Scheduled actions not yet run; a user is dropped from memory only at 0. */
  pending: number;
  influencer: boolean;
  referrals: number;
  /** Program behind the referral code it claimed (the referrer's), for its conversion rewards. */
  claimedProgramId: string | null;
  sessions: number;
}

interface CodeStream {
  revision: number;
  taken: number;
}

interface Catalog {
  rewards: Map<string, RewardDefinition>;
  programs: Map<string, Program>;
  promos: Map<string, PromoCode>;
  affiliates: Map<string, Affiliate>;
  /** Affiliate by code. */
  affiliateCodes: Map<string, Affiliate>;
}

interface GeneratorOptions {
  events: number;
  users: number;
  days: number;
  seed: number;
}

interface GenerationSummary {
  written: number;
  users: number;
  claims: number;
  conversions: number;
  withdrawals: number;
  /** Activity steps added after everyone's simulated life, to reach the event count. */
  topUps: number;
  runTag: string;
}

class UsageError extends Error {
  override name = 'UsageError';
}

const USAGE = 'Usage: npm run generate-events -- --events N [--users N] [--days D] [--seed S]';

function positiveInt(args: Map<string, string | true>, name: string, fallback: number | null): number {
  const value = args.get(name);
  if (value === undefined) {
    if (fallback === null) throw new UsageError(`--${name} is required`);
    return fallback;
  }
  if (value === true || !/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`--${name} must be a positive integer`);
  return Number(value);
}

function parseOptions(argv: string[]): GeneratorOptions {
  const args = parseArgs(argv);
  for (const name of args.keys()) {
    if (!['events', 'users', 'days', 'seed'].includes(name)) throw new UsageError(`Unknown option --${name}`);
  }
  const events = positiveInt(args, 'events', null);
  return {
    events,
    users: positiveInt(args, 'users', Math.max(10, Math.round(events / 9))),
    days: positiveInt(args, 'days', 180),
    seed: positiveInt(args, 'seed', randomBytes(4).readUInt32BE(0) || 1),
  };
}

/**
 * Commit groups on the embedded backend. Each append is still its own (nested) transaction
 * with its exact expected revision, but many of them share one SQLite commit, so the
 * generator does not wait for one fsync per append (`synchronous=FULL`). A crash loses the
 * open group only; the log stays consistent.
 */
class CommitGroups {
  private open = false;
  private openedAt = 0;

  constructor(
    private readonly db: SqliteConnection | null,
    private readonly maxMs = 250,
  ) {}

  /** Before an action: opens a group when none is open. */
  begin(): void {
    if (this.db === null || this.open) return;
    this.db.exec('BEGIN IMMEDIATE');
    this.open = true;
    this.openedAt = Date.now();
  }

  /** After an action: commits the group once it is old enough. */
  maybeCommit(): void {
    if (this.open && Date.now() - this.openedAt >= this.maxMs) this.commit();
  }

  commit(): void {
    if (this.db === null || !this.open) return;
    this.db.exec('COMMIT');
    this.open = false;
  }

  rollback(): void {
    if (this.db === null || !this.open) return;
    if (this.db.inTransaction) this.db.exec('ROLLBACK');
    this.open = false;
  }
}

// ---------------------------------------------------------------------------------------------

class Generator {
  private readonly random: Random;
  private readonly timeline = new Timeline();
  private readonly users = new Map<string, SimUser>();
  /** Users in registration order, for retiring them and choosing recent referrers. */
  private readonly byRegistration: SimUser[] = [];
  private retiredUpTo = 0;
  private referrersFrom = 0;
  private readonly recentInfluencers: SimUser[] = [];
  private readonly codes = new Map<string, CodeStream>();
  private catalog!: Catalog;
  private readonly runTag = randomBytes(3).toString('hex');
  private readonly start: number;
  private readonly end: number;
  private registered = 0;
  private operations = 0;
  private activityPerDay = 0;
  stopRequested = false;
  readonly summary: GenerationSummary;

  constructor(
    private readonly log: EventLog,
    private readonly ids: Ids,
    private readonly options: GeneratorOptions,
    private readonly claimWindowDays: number,
    private readonly groups: CommitGroups,
    private readonly onProgress: (summary: GenerationSummary) => void,
  ) {
    this.random = new Random(options.seed);
    this.end = Date.now();
    this.start = this.end - options.days * DAY;
    this.summary = { written: 0, users: 0, claims: 0, conversions: 0, withdrawals: 0, topUps: 0, runTag: this.runTag };
  }

  // --- appends ------------------------------------------------------------------------------

  private async append(stream: string, events: NewDomainEvent[], expected: ExpectedRevision, context: CommandContext): Promise<AppendResult> {
    const result = await this.log.append(stream, events, expected, context);
    this.summary.written += events.length;
    return result;
  }

  private request(actor = CLIENT_ACTOR, operationId?: string): CommandContext {
    const id = randomUUID();
    return { correlation_id: id, causation_id: id, actor, ...(operationId ? { operation_id: operationId } : {}) };
  }

  /** Appends a decision's events to the user's stream and schedules what they lead to. */
  private async appendToUser(user: SimUser, events: NewDomainEvent[], context: CommandContext, at: number): Promise<AppendResult | null> {
    if (events.length === 0) return null;
    const result = await this.append(streams.user(user.id), events, user.revision < 0 ? 'no_stream' : user.revision, context);
    user.revision = result.nextExpectedRevision;
    user.state = events.reduce(evolveUser, user.state);
    for (const event of events) {
      if (event.type !== 'RewardGranted') continue;
      // The expiry sweep records expiries within its interval (30 s) of the due time.
      if (event.data.expires_at !== null) this.schedule(user, Date.parse(event.data.expires_at) + this.random.between(1_000, 30_000), { kind: 'sweep', user: user.id }, true);
      // Credits tend to be spent.
      if (event.data.kind === 'credit' && this.random.chance(0.5)) {
        const amount = this.random.pick([10, 20, 25, 50, 100]);
        this.schedule(user, at + this.random.between(HOUR, 5 * DAY), { kind: 'withdraw', user: user.id, key: event.data.reward_key, amount });
      }
    }
    return result;
  }

  /** Global position of the event at `index` of an append (to name it as a cause). */
  private async positionOf(user: SimUser, result: AppendResult, count: number, index: number): Promise<bigint> {
    const revision = result.nextExpectedRevision - (count - 1 - index);
    const [event] = await this.log.store.readStream(streams.user(user.id), { fromRevision: revision, maxCount: 1 });
    if (!event) throw new Error(`Event ${streams.user(user.id)}@${revision} just appended was not found`);
    return event.position;
  }

  private schedule(user: SimUser, at: number, action: Action, ignoreLifetime = false): void {
    if (at > this.end || (!ignoreLifetime && at > user.activeUntil)) return;
    user.pending += 1;
    this.timeline.push(at, action);
  }

  // --- configuration -------------------------------------------------------------------------

  private async ensureConfig<S>(
    stream: string,
    evolver: Evolver<S | null>,
    decide: (existing: S | null) => Decision<unknown>,
    before?: () => Promise<void>,
  ): Promise<S> {
    const existing = (await this.log.readStream(stream)).reduce<S | null>((state, event) => evolver.evolve(state, event), evolver.initialState());
    if (existing !== null) return existing;
    await before?.();
    const { events } = decide(null);
    await this.append(stream, events, 'no_stream', this.request(SECRET_ACTOR));
    return events.reduce<S | null>((state, event) => evolver.evolve(state, event), null)!;
  }

  private async reserveConfiguredCode(code: string, type: CodeType, ownerId: string): Promise<void> {
    try {
      await this.append(
        streams.code(code),
        [{ type: 'CodeReserved', data: { code, type, owner_id: ownerId }, id: this.ids.derived('code', code, type, ownerId) }],
        'no_stream',
        this.request(SECRET_ACTOR),
      );
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
      const first = await this.log.first(streams.code(code));
      if (!(first?.type === 'CodeReserved' && first.data.type === type && first.data.owner_id === ownerId)) {
        throw new Error(`Code ${code} is already taken by someone else in this store`);
      }
    }
  }

  private async trackCode(code: string): Promise<void> {
    const last = await this.log.last(streams.code(code));
    this.codes.set(code, { revision: last ? last.revision : -1, taken: slotsTaken(last) });
  }

  async setUp(): Promise<void> {
    const foreign = new Set<string>();
    let after: bigint | null = null;
    for (;;) {
      const page = await this.log.readAll(after, 1000, { types: ['ProgramCreated'] });
      if (page.length === 0) break;
      for (const event of page) if (event.type === 'ProgramCreated' && event.data.program.id !== GEN_PROGRAM_ID) foreign.add(event.data.program.id);
      after = page[page.length - 1]!.position;
    }
    if (foreign.size > 0) {
      throw new UsageError(
        `This store already has referral programs (${[...foreign].join(', ')}); the generated program covers 100% of users. ` +
          'Generate into a fresh DATA_DIR (or one generated into before).',
      );
    }
    const at = new Date(this.start);
    const rewards = new Map<string, RewardDefinition>();
    for (const input of REWARDS) {
      rewards.set(input.key, await this.ensureConfig(streams.reward(input.key), rewardConfigEvolver, (existing) => decideDefineReward(existing, input, at)));
    }
    const kinds = new Map<string, RewardKind>([...rewards].map(([key, reward]) => [key, reward.kind]));
    const program = await this.ensureConfig(streams.program(PROGRAM.id), programConfigEvolver, (existing) =>
      decideDefineProgram(existing, { input: PROGRAM, rewardKinds: kinds, otherProgramsPercentage: 0, now: at }),
    );
    const promos = new Map<string, PromoCode>();
    for (const input of PROMOS) {
      const promo = await this.ensureConfig(
        streams.promo(input.code),
        promoConfigEvolver,
        (existing) => decideDefinePromoCode(existing, input, kinds, at),
        () => this.reserveConfiguredCode(input.code, 'promo', input.code),
      );
      promos.set(promo.code, promo);
      await this.trackCode(promo.code);
    }
    const affiliates = new Map<string, Affiliate>();
    const affiliateCodes = new Map<string, Affiliate>();
    for (const input of AFFILIATES) {
      const affiliate = await this.ensureConfig(
        streams.affiliate(input.id),
        affiliateConfigEvolver,
        (existing) => decideDefineAffiliate(existing, input, kinds, at),
        async () => {
          for (const code of input.codes) await this.reserveConfiguredCode(code, 'affiliate', input.id);
        },
      );
      affiliates.set(affiliate.id, affiliate);
      for (const code of affiliate.codes) {
        affiliateCodes.set(code, affiliate);
        await this.trackCode(code);
      }
    }
    this.catalog = { rewards, programs: new Map([[program.id, program]]), promos, affiliates, affiliateCodes };
    // Extra profile activity fills the event budget beyond the baseline lifecycle.
    const activeDays = this.options.days * DAY >= LIFETIME ? LIFETIME / DAY - (LIFETIME / DAY) ** 2 / (2 * this.options.days) : this.options.days / 2;
    const extraPerUser = Math.max(0, this.options.events / this.options.users - BASELINE_EVENTS_PER_USER);
    this.activityPerDay = extraPerUser / activeDays;
  }

  // --- catalog look-ups ----------------------------------------------------------------------

  private resolve(entries: RewardEntry[]): (GrantSpec & { activation: RewardEntry['activation'] })[] {
    return entries.flatMap((entry) => {
      const reward = this.catalog.rewards.get(entry.reward_key);
      return reward ? [{ reward, activation: entry.activation, deactivation: entry.deactivation }] : [];
    });
  }

  private receiverEntries(type: CodeType, code: string, programId: string | null): RewardEntry[] {
    if (type === 'referral') return (programId && this.catalog.programs.get(programId)?.rewards.receiver) || [];
    if (type === 'promo') return this.catalog.promos.get(code)?.rewards ?? [];
    return this.catalog.affiliateCodes.get(code)?.rewards ?? [];
  }

  private conversionRewards(user: SimUser): GrantSpec[] {
    const referredBy = user.state.referred_by;
    if (referredBy === null || user.state.converted_at !== null) return [];
    return this.resolve(this.receiverEntries(referredBy.type, referredBy.code, user.claimedProgramId)).filter((entry) => entry.activation.variant === 'conversion');
  }

  private senderRewards(referrer: SimUser): SenderReward[] {
    const program = referrer.state.program_id ? this.catalog.programs.get(referrer.state.program_id) : undefined;
    return program ? this.resolve(program.rewards.sender) : [];
  }

  // --- the referral reaction ------------------------------------------------------------------

  /** What the referral reaction appends to the referrer's stream for a claimer's event. */
  private async countReferral(figure: ReferralFigure, claimer: SimUser, referredBy: ReferredByFact, cause: { id: string; position: bigint; correlationId: string }, at: number): Promise<void> {
    if (referredBy.type !== 'referral') return;
    // A referrer no longer in memory is counted by the service's reaction runner later.
    const referrer = this.users.get(referredBy.owner_id);
    if (!referrer) return;
    const decision = decideCountReferral(referrer.state, {
      figure,
      claimer: claimer.id,
      code: referredBy.code,
      program_id: referrer.state.program_id,
      senderRewards: this.senderRewards(referrer),
      cause_id: cause.id,
      cause_position: cause.position,
      now: new Date(at),
    });
    const events = decision.events.map((event, index) => ({ ...event, id: this.ids.derived(cause.id, 'referral', String(index)) }));
    await this.appendToUser(referrer, events, { correlation_id: cause.correlationId, causation_id: cause.id, actor: 'process:referrals' }, at);
  }

  /** Counts, on the referrers' side, the claims, conversions and churns among `events`. */
  private async reactTo(user: SimUser, events: NewDomainEvent[], result: AppendResult | null, context: CommandContext, at: number): Promise<void> {
    if (result === null) return;
    for (const [index, event] of events.entries()) {
      let figure: ReferralFigure;
      let referredBy: ReferredByFact;
      if (event.type === 'CodeClaimed') [figure, referredBy] = ['claim', event.data];
      else if (event.type === 'UserConverted') [figure, referredBy] = ['conversion', event.data.referred_by];
      else if (event.type === 'UserChurned') [figure, referredBy] = ['churn', event.data.referred_by];
      else continue;
      if (referredBy.type !== 'referral' || event.id === undefined) continue;
      const position = await this.positionOf(user, result, events.length, index);
      await this.countReferral(figure, user, referredBy, { id: event.id, position, correlationId: context.correlation_id }, at + this.random.between(5, 200));
    }
  }

  /** Causes of reactions get their ids here, so the reaction's derived ids can name them. */
  private withCauseIds(events: NewDomainEvent[]): NewDomainEvent[] {
    return events.map((event) =>
      event.type === 'CodeClaimed' || event.type === 'UserConverted' || event.type === 'UserChurned' ? { ...event, id: randomUUID() } : event,
    );
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
    const context = this.request();
    const program = assignProgram(id, [...this.catalog.programs.values()]);
    let assignment: { program_id: string; referral_code: string } | null = null;
    if (program) {
      for (let attempt = 0; assignment === null; attempt += 1) {
        const code = this.ids.referralCode();
        try {
          await this.append(streams.code(code), [{ type: 'CodeReserved', data: { code, type: 'referral', owner_id: id } }], 'no_stream', context);
          this.codes.set(code, { revision: 0, taken: 0 });
          assignment = { program_id: program.id, referral_code: code };
        } catch (error) {
          if (!(error instanceof WrongExpectedRevisionError) || attempt >= 20) throw error;
        }
      }
    }
    const isTrial = this.random.chance(0.3);
    const isPremium = !isTrial && this.random.chance(0.08);
    const fields: Partial<ProfileFields> = {
      is_trial: isTrial,
      is_premium: isPremium,
      metadata: { platform: this.random.pick(['ios', 'ios', 'android']), app_version: '4.2.0', locale: this.random.pick(['en-US', 'en-GB', 'de-DE', 'fr-FR', 'ja-JP']), sessions: 1 },
      ...(this.random.chance(0.6) ? { first_seen_at: new Date(at - this.random.between(0, 3 * HOUR)).toISOString() } : {}),
    };
    const decision = decideUpsertUser(user.state, { app_user_id: id, fields, now: new Date(at), assignment, conversionRewards: [] });
    this.users.set(id, user);
    this.byRegistration.push(user);
    if (user.influencer) this.recentInfluencers.push(user);
    await this.appendToUser(user, decision.events, context, at);
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
    while (this.referrersFrom < this.byRegistration.length && this.byRegistration[this.referrersFrom]!.registeredAt < at - REFERRER_RECENCY) this.referrersFrom += 1;
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
    const entries = this.resolve(this.receiverEntries(type, code, programId));
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
    const command = { claim_id: randomUUID(), code: target.code, target, now: new Date(at), windowDays: this.claimWindowDays };
    const slot = this.codes.get(target.code)!;
    let take: Decision<number>;
    try {
      checkClaim(user.state, command);
      take = decideTakeSlot(slot.taken, limit, command.claim_id, user.id);
    } catch (error) {
      if (error instanceof DomainError) return; // the service would have answered 4xx and written nothing
      throw error;
    }
    const context = this.request();
    await this.append(streams.code(target.code), take.events, slot.revision < 0 ? 'no_stream' : slot.revision, context);
    slot.revision += 1;
    slot.taken = take.result;
    const claimAt = at + this.random.between(2, 40);
    const events = this.withCauseIds(decideClaimCode(user.state, { ...command, now: new Date(claimAt) }).events);
    const result = await this.appendToUser(user, events, context, claimAt);
    user.claimedProgramId = target.program_id;
    if (referrer) referrer.referrals += 1;
    this.summary.claims += 1;
    if (events.some((event) => event.type === 'UserConverted')) this.summary.conversions += 1;
    await this.reactTo(user, events, result, context, claimAt);
  }

  private async profile(user: SimUser, change: ProfileChange, at: number): Promise<void> {
    const state = user.state;
    let fields: Partial<ProfileFields>;
    if (change === 'convert') {
      fields = { is_premium: true, is_trial: false, payment_customer_id: `cus_${randomBytes(7).toString('hex')}` };
    } else if (change === 'churn') {
      fields = { is_premium: false };
    } else if (change === 'trial-end') {
      fields = { is_trial: false, is_premium: false };
    } else {
      user.sessions += this.random.int(1, 6);
      const version = this.random.chance(0.1) ? this.random.pick(['4.2.1', '4.3.0', '4.3.1', '5.0.0']) : state.metadata?.app_version;
      fields = { metadata: { ...state.metadata, app_version: version ?? '4.2.0', sessions: user.sessions } };
    }
    const context = this.request();
    const decision = decideUpsertUser(state, { app_user_id: user.id, fields, now: new Date(at), assignment: null, conversionRewards: this.conversionRewards(user) });
    const events = this.withCauseIds(decision.events);
    const result = await this.appendToUser(user, events, context, at);
    if (events.some((event) => event.type === 'UserConverted')) this.summary.conversions += 1;
    await this.reactTo(user, events, result, context, at);
  }

  private async withdraw(user: SimUser, key: string, amount: number, at: number): Promise<void> {
    const operationId = this.random.chance(0.8) ? `order-${(this.operations += 1)}` : null;
    const decision = decideWithdrawCredits(user.state, { key, amount, operation_id: operationId, isCreditReward: true, now: new Date(at) });
    await this.appendToUser(user, decision.events, this.request(CLIENT_ACTOR, operationId ?? undefined), at);
    this.summary.withdrawals += 1;
  }

  private async grant(user: SimUser, at: number): Promise<void> {
    const operationId = `support-ticket-${(this.operations += 1)}`;
    const reward = this.catalog.rewards.get(GOODWILL_CREDITS)!;
    const decision = decideGrantReward(user.state, {
      key: reward.key,
      spec: { reward, deactivation: days(30) },
      operation_id: operationId,
      grant_id_prefix: `manual:${operationId}`,
      now: new Date(at),
    });
    await this.appendToUser(user, decision.events, this.request(SECRET_ACTOR, operationId), at);
  }

  private async sweep(user: SimUser, at: number): Promise<void> {
    const sweepId = `sweep-${new Date(at).toISOString()}`;
    const decision = decideExpireRewards(user.state, new Date(at));
    await this.appendToUser(user, decision.events, { correlation_id: sweepId, causation_id: sweepId, actor: 'process:expiry-sweep' }, at);
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
        return this.sweep(user, at);
    }
  }

  /** Drops users whose whole life is simulated (memory stays bounded on long histories). */
  private retire(now: number): void {
    while (this.retiredUpTo < this.byRegistration.length) {
      const user = this.byRegistration[this.retiredUpTo]!;
      if (user.registeredAt > now - RETIRE_AFTER || user.pending > 0) break;
      this.users.delete(user.id);
      if (user.state.referral_code) this.codes.delete(user.state.referral_code);
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
      while (this.summary.written < this.options.events && !this.stopRequested) {
        this.groups.begin();
        await this.step(interval);
        this.groups.maybeCommit();
        if (this.lastAt - this.retireCheck > DAY) {
          this.retire(this.lastAt);
          this.retireCheck = this.lastAt;
        }
        this.onProgress(this.summary);
      }
      this.groups.commit();
    } catch (error) {
      this.groups.rollback();
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
    const resident = this.byRegistration.length > this.retiredUpTo ? this.byRegistration[this.random.int(this.retiredUpTo, this.byRegistration.length - 1)] : undefined;
    if (resident && this.users.has(resident.id)) await this.profile(resident, 'activity', this.lastAt);
    else await this.register(this.lastAt);
  }
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  let options: GeneratorOptions;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message}\n${USAGE}\n`);
    return 64;
  }
  const context = await openScriptContext();
  // Embedded: own connection, so appends can share commits (see CommitGroups).
  const db = context.backend.name === 'embedded' ? openSqlite(context.config.DATA_DIR) : null;
  const log = db === null ? context.log : new EventLog(new SqliteEventStore(db), new RandomIds());
  const started = Date.now();
  const bar = new cliProgress.SingleBar(
    {
      format: 'generate |{bar}| {percentage}% | {value}/{total} events | {users} users | {rate} events/s | ETA {eta_formatted}',
      etaBuffer: 200,
      noTTYOutput: true,
      notTTYSchedule: 10_000,
    },
    cliProgress.Presets.shades_classic,
  );
  const rate = (written: number) => Math.round(written / Math.max(0.001, (Date.now() - started) / 1000));
  const generator = new Generator(log, new RandomIds(), options, context.config.CLAIM_WINDOW_DAYS, new CommitGroups(db), (summary) =>
    bar.update(Math.min(summary.written, options.events), { users: summary.users, rate: rate(summary.written) }),
  );
  process.once('SIGINT', () => {
    generator.stopRequested = true;
  });
  try {
    await generator.setUp();
    bar.start(options.events, generator.summary.written, { users: 0, rate: 0 });
    const summary = await generator.generate();
    bar.update(Math.min(summary.written, options.events), { users: summary.users, rate: rate(summary.written) });
    bar.stop();
    const seconds = (Date.now() - started) / 1000;
    process.stdout.write(
      `Generated ${summary.written} events in ${seconds.toFixed(1)} s (${rate(summary.written)} events/s): ` +
        `${summary.users} users (gen-${summary.runTag}-*), ${summary.claims} claims, ${summary.conversions} conversions, ` +
        `${summary.withdrawals} withdrawals over ${options.days} days (seed ${options.seed})` +
        `${summary.users < options.users ? `; the count was reached before all ${options.users} users registered` : ''}` +
        `${summary.topUps > 0 ? `; ${summary.topUps} extra profile updates at the end to reach the count` : ''}.\n` +
        'Start the service (or npm run replay) to build the read models; npm run audit checks every credit balance.\n',
    );
    return generator.stopRequested ? 130 : 0;
  } catch (error) {
    bar.stop();
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message}\n`);
    return 2;
  } finally {
    db?.close();
    await context.backend.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`generate-events failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
