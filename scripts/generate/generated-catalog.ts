/**
 * The configuration `npm run generate-events` works with: created in the store on the first
 * run (through the same deciders as the admin API), read back on later runs.
 */
import { randomUUID } from 'node:crypto';
import { affiliateConfigEvolver, programConfigEvolver, promoConfigEvolver, rewardConfigEvolver } from '../../src/domain/catalog/config-state.js';
import { decideDefineAffiliate } from '../../src/domain/catalog/affiliate-config.js';
import { decideDefineProgram } from '../../src/domain/catalog/program-config.js';
import { decideDefinePromoCode } from '../../src/domain/catalog/promo-config.js';
import { decideDefineReward } from '../../src/domain/catalog/reward-config.js';
import { slotsTaken } from '../../src/domain/codes/claim-slots.js';
import type { Decision, Evolver } from '../../src/domain/decider.js';
import type { CodeType } from '../../src/domain/events/code-events.js';
import type { Affiliate, Program, PromoCode } from '../../src/domain/events/config-events.js';
import { streams } from '../../src/domain/events/index.js';
import type { GrantSpec } from '../../src/domain/rewards/grant-and-expire.js';
import type { RewardKind } from '../../src/domain/rewards/reward-kinds.js';
import type { RewardDefinition, ConfiguredReward } from '../../src/domain/rewards/reward-schemas.js';
import { DomainError } from '../../src/domain/domain-error.js';
import type { CommandContext, EventLog } from '../../src/application/event-log.js';
import type { CodeRegistry } from '../../src/application/shared-resources/code-registry.js';
import { AFFILIATES, GEN_PROGRAM_ID, PROGRAM, PROMOS, REWARDS, SECRET_ACTOR } from './generation-config.js';

/** What the generator knows of a code's stream: the claim slots taken. */
export interface CodeStream {
  taken: number;
}

export interface Catalog {
  rewards: Map<string, RewardDefinition>;
  programs: Map<string, Program>;
  promos: Map<string, PromoCode>;
  affiliates: Map<string, Affiliate>;
  /** Affiliate by code. */
  affiliateCodes: Map<string, Affiliate>;
}

/** A bad invocation or a store this generator cannot add to (exit 64). */
export class UsageError extends Error {
  override name = 'UsageError';
}

function backoffice(): CommandContext {
  const id = randomUUID();
  return { correlation_id: id, causation_id: id, actor: SECRET_ACTOR };
}

/** Creates the generated configuration where missing (dated `at`), its codes reserved through the service's registry. */
export async function ensureGeneratedCatalog(log: EventLog, registry: CodeRegistry, at: Date): Promise<{ catalog: Catalog; codes: Map<string, CodeStream> }> {
  await refuseForeignPrograms(log);
  const codes = new Map<string, CodeStream>();

  async function ensureConfig<S>(
    stream: string,
    evolver: Evolver<S | null>,
    decide: (existing: S | null) => Decision<unknown>,
    before?: () => Promise<void>,
  ): Promise<S> {
    const existing = (await log.readStream(stream)).reduce<S | null>((state, event) => evolver.evolve(state, event), evolver.initialState());
    if (existing !== null) return existing;
    await before?.();
    const { events } = decide(null);
    await log.append(stream, events, 'no_stream', backoffice());
    return events.reduce<S | null>((state, event) => evolver.evolve(state, event), null)!;
  }

  async function reserveCode(code: string, type: CodeType, ownerId: string): Promise<void> {
    try {
      await registry.reserve(code, type, ownerId, backoffice());
    } catch (error) {
      if (error instanceof DomainError && error.code === 'CODE.TAKEN') throw new Error(`Code ${code} is already taken by someone else in this store`);
      throw error;
    }
  }

  async function trackCode(code: string): Promise<void> {
    const last = await log.last(streams.code(code));
    codes.set(code, { taken: slotsTaken(last) });
  }

  const rewards = new Map<string, RewardDefinition>();
  for (const input of REWARDS) {
    rewards.set(input.key, await ensureConfig(streams.reward(input.key), rewardConfigEvolver, (existing) => decideDefineReward(existing, input, at)));
  }
  const kinds = new Map<string, RewardKind>([...rewards].map(([key, reward]) => [key, reward.kind]));
  const program = await ensureConfig(streams.program(PROGRAM.id), programConfigEvolver, (existing) =>
    decideDefineProgram(existing, { input: PROGRAM, rewardKinds: kinds, otherProgramsPercentage: 0, now: at }),
  );
  const promos = new Map<string, PromoCode>();
  for (const input of PROMOS) {
    const promo = await ensureConfig(
      streams.promo(input.code),
      promoConfigEvolver,
      (existing) => decideDefinePromoCode(existing, input, kinds, at),
      () => reserveCode(input.code, 'promo', input.code),
    );
    promos.set(promo.code, promo);
    await trackCode(promo.code);
  }
  const affiliates = new Map<string, Affiliate>();
  const affiliateCodes = new Map<string, Affiliate>();
  for (const input of AFFILIATES) {
    const affiliate = await ensureConfig(
      streams.affiliate(input.id),
      affiliateConfigEvolver,
      (existing) => decideDefineAffiliate(existing, input, kinds, at),
      async () => {
        for (const code of input.codes) await reserveCode(code, 'affiliate', input.id);
      },
    );
    affiliates.set(affiliate.id, affiliate);
    for (const code of affiliate.codes) {
      affiliateCodes.set(code, affiliate);
      await trackCode(code);
    }
  }
  return { catalog: { rewards, programs: new Map([[program.id, program]]), promos, affiliates, affiliateCodes }, codes };
}

/** The generated program covers 100% of users, so a store with other programs is refused. */
async function refuseForeignPrograms(log: EventLog): Promise<void> {
  const foreign = new Set<string>();
  let after: bigint | null = null;
  for (;;) {
    const page = await log.readAll(after, 1000, { types: ['ProgramCreated'] });
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
}

/** Entries with their reward definitions (unknown rewards left out). */
export function resolveEntries(catalog: Catalog, entries: ConfiguredReward[]): (GrantSpec & { activation: ConfiguredReward['activation'] })[] {
  return entries.flatMap((entry) => {
    const reward = catalog.rewards.get(entry.reward_key);
    return reward ? [{ reward, activation: entry.activation, deactivation: entry.deactivation }] : [];
  });
}

/** The receiver entries behind a code of the given type. */
export function receiverEntries(catalog: Catalog, type: CodeType, code: string, programId: string | null): ConfiguredReward[] {
  if (type === 'referral') return (programId && catalog.programs.get(programId)?.rewards.receiver) || [];
  if (type === 'promo') return catalog.promos.get(code)?.rewards ?? [];
  return catalog.affiliateCodes.get(code)?.rewards ?? [];
}
