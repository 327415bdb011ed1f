/**
 * What the service writes for each simulated request, decided and sequenced by the service's
 * own code: the claim runs `runClaim` (src/application/commands/claim-code.ts) with the
 * service's ClaimSlots, referral codes come from the service's CodeRegistry, the referral
 * reaction is `decideReferralCounts` with the reaction's context, manual grants take their ids
 * from src/domain/idempotency.ts and sweeps the expiry sweep's context. Only the user stream's
 * appends are the generator's own: it is the only writer, so it keeps each user's state and
 * revision in memory instead of reading them back (the speed of a long run depends on it).
 */
import { randomUUID } from 'node:crypto';
import { MemoryReadStore } from '../../src/adapters/memory/memory-read-store.js';
import { runClaim } from '../../src/application/commands/claim-code.js';
import { type CommandContext, EventLog, type LoggedEvent } from '../../src/application/event-log.js';
import { sweepContext } from '../../src/application/maintenance/expiry-sweep.js';
import { reactionContext } from '../../src/application/reactions/reaction-runner.js';
import { ClaimSlots } from '../../src/application/shared-resources/claim-slots.js';
import { CodeRegistry } from '../../src/application/shared-resources/code-registry.js';
import { StreamExecutor } from '../../src/application/stream-executor.js';
import type { NewDomainEvent } from '../../src/domain/decider.js';
import { DomainError } from '../../src/domain/domain-error.js';
import type { Program } from '../../src/domain/events/config-events.js';
import { SCHEMA_VERSION, streams } from '../../src/domain/events/index.js';
import { manualGrantIdPrefix, type Operation } from '../../src/domain/idempotency.js';
import type { GrantSpec } from '../../src/domain/rewards/grant-and-expire.js';
import type { RewardDefinition } from '../../src/domain/rewards/reward-schemas.js';
import type { ClaimTarget } from '../../src/domain/users/claim-code.js';
import { decideReferralCounts, type ReferralCause, referralCountOf, type SenderReward } from '../../src/domain/users/count-referral.js';
import { decideExpireRewards } from '../../src/domain/users/expire-rewards.js';
import { decideGrantReward } from '../../src/domain/users/grant-reward-by-hand.js';
import { decideUpsertUser, type ProfileFields } from '../../src/domain/users/upsert-user.js';
import { evolveUser, type UserState } from '../../src/domain/users/user-state.js';
import { decideWithdrawCredits } from '../../src/domain/users/withdraw-credits.js';
import type { AppendResult, EventStore, ExpectedRevision } from '../../src/ports/event-store.js';
import type { Ids } from '../../src/ports/ids.js';
import type { ReadConsistency } from '../../src/ports/read-consistency.js';
import { CLIENT_ACTOR, days, SECRET_ACTOR } from './generation-config.js';

export interface SimUser {
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

/**
 * The generator's EventLog: counts the events it appends and, being the only writer, remembers
 * the last event it appended to each code stream, so the claim slots' and the registry's
 * look-ups of a code's latest event do not read the store back.
 */
class GeneratorLog extends EventLog {
  written = 0;
  private readonly lastOfCode = new Map<string, LoggedEvent>();

  override async append(...args: Parameters<EventLog['append']>): Promise<AppendResult> {
    const [stream, events, , contexts] = args;
    const result = await super.append(...args);
    this.written += events.length;
    if (streams.idOf('code', stream) !== null) {
      const last = events[events.length - 1]!;
      const { correlation_id, causation_id, actor } = Array.isArray(contexts) ? contexts[contexts.length - 1]! : (contexts as CommandContext);
      const metadata = { correlation_id, causation_id, actor, schema_version: SCHEMA_VERSION };
      const position = result.position;
      this.lastOfCode.set(stream, { ...last, id: last.id ?? '', stream, revision: result.nextExpectedRevision, position, metadata, recordedAt: new Date() });
    }
    return result;
  }

  override async last(stream: string): Promise<LoggedEvent | undefined> {
    return this.lastOfCode.get(stream) ?? super.last(stream);
  }
}

/** The claim-slots index is only read when a claim is abandoned, which never happens here. */
const neverBehind: ReadConsistency = { waitFor: async () => true, projections: async () => [] };

/**
 * The requests (and reaction steps) the simulation made, in order, with what the service
 * would need to repeat them: test/scripts/generated-history.test.ts replays them through the
 * service's own handlers and compares the events.
 */
export type JournalEntry =
  | { kind: 'register'; user: string; fields: Partial<ProfileFields>; referralCode: string | null; at: number }
  /** recordAt: when the claim was recorded; refused: the error code when the service refuses it. */
  | { kind: 'claim'; user: string; code: string; at: number; recordAt: number | null; refused: string | null }
  | { kind: 'profile'; user: string; fields: Partial<ProfileFields>; at: number }
  | { kind: 'withdraw'; user: string; key: string; amount: number; operationId: string | null; at: number }
  | { kind: 'grant'; user: string; key: string; operationId: string; at: number }
  | { kind: 'sweep'; user: string; at: number }
  /** The referral reaction handling the next cause (skipped: its referrer is no longer simulated). */
  | { kind: 'reaction'; at: number; skipped: boolean };

export interface SimulatedServiceHooks {
  /** Each request and reaction step, as it happens (tests). */
  journal?(entry: JournalEntry): void;
  /** Users still in memory (a referrer no longer there is counted by the service's reaction later). */
  user(id: string): SimUser | undefined;
  /** After each append to a user's stream: what the events lead to. */
  appended(user: SimUser, events: NewDomainEvent[], at: number): void;
  /** How long after a claimer's event the referral reaction handles it (ms). */
  reactionDelay(): number;
  /** The sender rewards of a referrer's program. */
  senderRewards(referrer: SimUser): SenderReward[];
}

export class SimulatedService {
  readonly log: GeneratorLog;
  readonly registry: CodeRegistry;
  private readonly slots: ClaimSlots;

  constructor(
    store: EventStore,
    private readonly ids: Ids,
    private readonly claimWindowDays: number,
    private readonly hooks: SimulatedServiceHooks,
  ) {
    this.log = new GeneratorLog(store, ids);
    const executor = new StreamExecutor(this.log, new MemoryReadStore());
    this.registry = new CodeRegistry(executor, this.log, ids);
    this.slots = new ClaimSlots(executor, this.log, new MemoryReadStore(), neverBehind, ids);
  }

  get written(): number {
    return this.log.written;
  }

  private request(actor = CLIENT_ACTOR, operation?: Operation): CommandContext {
    const id = randomUUID();
    return { correlation_id: id, causation_id: id, actor, ...(operation ? { operation } : {}) };
  }

  /** Appends a decision's events to the user's stream (with the ids of any causes it names). */
  private async appendToUser(user: SimUser, events: NewDomainEvent[], context: CommandContext, at: number): Promise<ReferralCause[]> {
    if (events.length === 0) return [];
    // Causes of reactions get their ids here, so the reaction's derived ids can name them.
    const isCause = events.map((event) => referralCountOf({ ...event, id: '', position: 0n, stream: '' }) !== null);
    const withIds = events.map((event, index) => (isCause[index] ? { ...event, id: randomUUID() } : event));
    const stream = streams.user(user.id);
    const expected: ExpectedRevision = user.revision < 0 ? 'no_stream' : user.revision;
    const result = await this.log.append(stream, withIds, expected, context);
    user.revision = result.nextExpectedRevision;
    user.state = withIds.reduce(evolveUser, user.state);
    this.hooks.appended(user, withIds, at);
    const causes: ReferralCause[] = [];
    for (const [index, event] of withIds.entries()) {
      if (!isCause[index] || event.id === undefined) continue;
      const position = await this.positionOf(stream, result.nextExpectedRevision - (withIds.length - 1 - index));
      causes.push({ ...event, id: event.id, position, stream });
    }
    for (const cause of causes) await this.countReferral(cause, context, at + this.hooks.reactionDelay());
    return causes;
  }

  /** Global position of an event just appended (the reaction names it as its cause). */
  private async positionOf(stream: string, revision: number): Promise<bigint> {
    const [event] = await this.log.store.readStream(stream, { fromRevision: revision, maxCount: 1 });
    if (!event) throw new Error(`Event ${stream}@${revision} just appended was not found`);
    return event.position;
  }

  /** The referral reaction, for one cause, as the service's reaction runner would write it. */
  private async countReferral(cause: ReferralCause, request: CommandContext, at: number): Promise<void> {
    const count = referralCountOf(cause);
    const referrer = count && this.hooks.user(count.referredBy.owner_id);
    this.hooks.journal?.({ kind: 'reaction', at, skipped: !referrer });
    if (!count || !referrer) return;
    const decision = decideReferralCounts(referrer.state, [count], this.hooks.senderRewards(referrer), new Date(at), (...parts) => this.ids.derived(...parts));
    await this.appendToUser(referrer, decision.events, reactionContext({ id: cause.id, metadata: { ...request } }, 'referrals'), at);
  }

  async register(user: SimUser, fields: Partial<ProfileFields>, program: Program | null, at: number): Promise<void> {
    const context = this.request();
    const assignment = program && { program_id: program.id, referral_code: await this.registry.reserveReferralCode(user.id, context) };
    this.hooks.journal?.({ kind: 'register', user: user.id, fields, referralCode: assignment?.referral_code ?? null, at });
    const decision = decideUpsertUser(user.state, { app_user_id: user.id, fields, now: new Date(at), assignment, conversionRewards: [] });
    await this.appendToUser(user, decision.events, context, at);
  }

  /**
   * A claim of `target`, recorded `recordDelay()` ms after its slot is taken; null when the
   * service would have refused it (a 4xx: nothing written).
   */
  async claim(user: SimUser, target: ClaimTarget, limit: number, at: number, recordDelay: () => number): Promise<{ converted: boolean } | null> {
    const context = this.request();
    const entry: JournalEntry = { kind: 'claim', user: user.id, code: target.code, at, recordAt: null, refused: null };
    this.hooks.journal?.(entry);
    let now = at;
    let events: NewDomainEvent[] = [];
    try {
      await runClaim(
        {
          now: () => new Date(now),
          claimId: () => randomUUID(),
          claimer: async () => user.state,
          takeSlot: async (claimId, guard) => {
            const hold = await this.slots.take(target.code, claimId, user.id, limit, context, guard);
            now += recordDelay();
            entry.recordAt = now;
            return hold;
          },
          record: async (decide) => {
            events = decide(user.state).events;
            await this.appendToUser(user, events, context, now);
          },
          giveBack: async () => {
            throw new Error('the generator is the only writer: a claim it decided cannot fail to be recorded');
          },
          // Every claim the generator starts is recorded: no slot is left behind.
          abandonStale: async () => [],
          // The generator defines no fraud rules.
          fraud: null,
        },
        { code: target.code, target, windowDays: this.claimWindowDays },
      );
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      entry.refused = error.code;
      return null;
    }
    return { converted: events.some((event) => event.type === 'UserConverted') };
  }

  /** A profile update (POST /users of an existing user); true when it converted the user. */
  async profile(user: SimUser, fields: Partial<ProfileFields>, conversionRewards: GrantSpec[], at: number): Promise<boolean> {
    this.hooks.journal?.({ kind: 'profile', user: user.id, fields, at });
    const decision = decideUpsertUser(user.state, { app_user_id: user.id, fields, now: new Date(at), assignment: null, conversionRewards });
    await this.appendToUser(user, decision.events, this.request(), at);
    return decision.events.some((event) => event.type === 'UserConverted');
  }

  async withdraw(user: SimUser, key: string, amount: number, operationId: string | null, at: number): Promise<void> {
    this.hooks.journal?.({ kind: 'withdraw', user: user.id, key, amount, operationId, at });
    const decision = decideWithdrawCredits(user.state, { key, amount, operation_id: operationId, earlier: null, isCreditReward: true, now: new Date(at) });
    await this.appendToUser(user, decision.events, this.request(CLIENT_ACTOR, operationId === null ? undefined : { id: operationId, kind: 'withdraw' }), at);
  }

  /** A goodwill grant by hand (secret key), lasting 30 days. */
  async grant(user: SimUser, reward: RewardDefinition, operationId: string, at: number): Promise<void> {
    this.hooks.journal?.({ kind: 'grant', user: user.id, key: reward.key, operationId, at });
    const decision = decideGrantReward(user.state, {
      key: reward.key,
      spec: { reward, deactivation: days(30) },
      operation_id: operationId,
      earlier: null,
      grant_id_prefix: manualGrantIdPrefix(operationId, randomUUID),
      now: new Date(at),
    });
    await this.appendToUser(user, decision.events, this.request(SECRET_ACTOR, { id: operationId, kind: 'grant' }), at);
  }

  async sweep(user: SimUser, at: number): Promise<void> {
    this.hooks.journal?.({ kind: 'sweep', user: user.id, at });
    await this.appendToUser(user, decideExpireRewards(user.state, new Date(at)).events, sweepContext(new Date(at)), at);
  }
}
