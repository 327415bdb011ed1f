import 'reflect-metadata';
import { MemoryKeyStore } from '../../src/adapters/memory/memory-key-store.js';
import { expect } from 'chai';
import { defaultProjections } from '../support/projections.js';
import { MemoryEventStore } from '../../src/adapters/memory/memory-event-store.js';
import { RandomIds } from '../../src/adapters/system/random-ids.js';
import { ClaimCodeHandler } from '../../src/application/commands/claim-code.js';
import { GrantRewardHandler } from '../../src/application/commands/grant-reward-by-hand.js';
import { UpsertUserHandler } from '../../src/application/commands/upsert-user.js';
import { WithdrawCreditsHandler } from '../../src/application/commands/withdraw-credits.js';
import { EventLog, type LoggedEvent } from '../../src/application/event-log.js';
import { sweepContext } from '../../src/application/maintenance/expiry-sweep.js';
import { ClaimFraudChecks } from '../../src/application/fraud/claim-fraud-checks.js';
import { FraudRuleQueries } from '../../src/application/fraud/fraud-rule-queries.js';
import { PaymentCustomerClaimers } from '../../src/application/fraud/payment-customer-claimers.js';
import { ReviewDecisions } from '../../src/application/fraud/review-decisions.js';
import { CatalogQueries } from '../../src/application/queries/catalog-queries.js';
import { CodeResolver } from '../../src/application/queries/code-resolver.js';
import { ReferralReactions } from '../../src/application/reactions/referral-reactions.js';
import { ClaimSlots } from '../../src/application/shared-resources/claim-slots.js';
import { CodeRegistry } from '../../src/application/shared-resources/code-registry.js';
import type { Config } from '../../src/config.js';
import { DomainError } from '../../src/domain/domain-error.js';
import { streams } from '../../src/domain/events/index.js';
import { referralCountOf } from '../../src/domain/users/count-referral.js';
import { decideExpireRewards } from '../../src/domain/users/expire-rewards.js';
import { userEvolver } from '../../src/domain/users/user-state.js';
import type { Ids } from '../../src/ports/ids.js';
import { CommitGroups } from '../../scripts/generate/commit-groups.js';
import { CLIENT_ACTOR, days, SECRET_ACTOR } from '../../scripts/generate/generation-config.js';
import { Generator } from '../../scripts/generate/generator.js';
import type { JournalEntry } from '../../scripts/generate/simulated-service.js';
import { type ApplicationSpec, applicationSpec } from '../support/application-spec.js';

const CLAIM_WINDOW_DAYS = 7;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/**
 * A history with its random ids (request ids, claim ids, event ids and every id derived from
 * them) renamed in order of first appearance, stream by stream: two histories compare equal
 * when they are the same but for which random ids were drawn.
 */
function canonical(events: LoggedEvent[]): Record<string, unknown[]> {
  const names = new Map<string, string>();
  const rename = (text: string) =>
    text.replace(UUID, (id) => {
      if (!names.has(id)) names.set(id, `id-${names.size}`);
      return names.get(id)!;
    });
  const byStream = new Map<string, LoggedEvent[]>();
  for (const event of events) byStream.set(event.stream, [...(byStream.get(event.stream) ?? []), event]);
  const result: Record<string, unknown[]> = {};
  for (const stream of [...byStream.keys()].sort()) {
    result[stream] = byStream
      .get(stream)!
      .map((event) =>
        JSON.parse(
          rename(JSON.stringify({ id: event.id, type: event.type, data: event.data, actor: event.metadata.actor, operation_id: event.metadata.operation_id })),
        ),
      );
  }
  return result;
}

/** The service's handlers on the in-memory stores, with a clock the replay sets and the journal's referral codes. */
function serviceOn(app: ApplicationSpec, referralCodes: string[]) {
  let now = 0;
  const clock = { now: () => new Date(now) };
  const random = new RandomIds();
  const ids: Ids = {
    uuid: () => random.uuid(),
    derived: (...parts) => random.derived(...parts),
    referralCode: () => referralCodes.shift() ?? expect.fail('the service drew more referral codes than the generator'),
  };
  const config = { CLAIM_WINDOW_DAYS, CONVERSIONS_FROM: 'client' } as Config;
  const catalog = new CatalogQueries(app.readStore);
  const rules = new FraudRuleQueries(app.readStore);
  const resolver = new CodeResolver(catalog);
  const slots = new ClaimSlots(app.executor, app.log, app.readStore, app.consistency, ids);
  let recordAt = 0;
  // The generator records a claim a few ms after its slot is taken: so does the replay.
  const take = slots.take.bind(slots);
  slots.take = async (...args) => {
    const hold = await take(...args);
    now = recordAt;
    return hold;
  };
  return {
    setNow: (at: number) => {
      now = at;
    },
    setRecordAt: (at: number) => {
      recordAt = at;
    },
    upsert: new UpsertUserHandler(app.commands, catalog, resolver, new CodeRegistry(app.executor, app.log, ids), clock, config),
    claim: new ClaimCodeHandler(
      app.executor,
      resolver,
      slots,
      new ClaimFraudChecks(rules, new PaymentCustomerClaimers(app.executor, app.readStore, new MemoryKeyStore()), app.executor, ids),
      app.commands,
      clock,
      ids,
      config,
      { debug() {}, info() {}, warn() {}, error() {} },
    ),
    withdraw: new WithdrawCreditsHandler(app.commands, catalog, clock),
    grant: new GrantRewardHandler(app.commands, catalog, clock, ids),
    referrals: new ReferralReactions(app.executor, catalog, rules, clock, ids, new ReviewDecisions(app.executor, app.commands, app.readStore, clock, ids)),
  };
}

describe('generate-events writes histories the service would have written', function () {
  this.timeout(60_000);

  it('replaying its requests through the service handlers (in memory) appends the same events, ids included', async () => {
    // 1. A generated history, with the journal of the requests behind it.
    const generated = new MemoryEventStore();
    const journal: JournalEntry[] = [];
    const generator = new Generator(
      new EventLog(generated, new RandomIds()),
      new RandomIds(),
      { events: 500, users: 45, days: 20, seed: 11 },
      CLAIM_WINDOW_DAYS,
      new CommitGroups(null),
      () => {},
      (entry) => journal.push(entry),
    );
    await generator.setUp();
    const configuration = (await generated.readAll({ after: null, limit: 10_000 })).length;
    const summary = await generator.generate();
    expect(summary.claims, 'claims generated').to.be.greaterThan(5);
    expect(journal.filter((entry) => entry.kind === 'reaction' && !entry.skipped).length, 'referral reactions').to.be.greaterThan(0);
    const history = await new EventLog(generated, new RandomIds()).readAll(null, 100_000);

    // 2. The same requests through the service, on a store holding the same configuration.
    const app = await applicationSpec({ projections: defaultProjections });
    try {
      const setup = history.slice(0, configuration);
      const given: Record<string, LoggedEvent[]> = {};
      for (const event of setup) given[event.stream] = [...(given[event.stream] ?? []), event];
      await app.given(given);
      const service = serviceOn(
        app,
        journal.flatMap((entry) => (entry.kind === 'register' && entry.referralCode !== null ? [entry.referralCode] : [])),
      );
      const causes: LoggedEvent[] = [];
      const setupHead = (await app.store.headPosition()) ?? null;
      let seen = setupHead;
      const collectCauses = async () => {
        for (const event of await app.log.readAll(seen, 10_000)) {
          if (referralCountOf(event) !== null) causes.push(event);
          seen = event.position;
        }
      };
      for (const entry of journal) {
        service.setNow(entry.at);
        const context = { correlation_id: `replay-${entry.kind}`, causation_id: 'replay', actor: entry.kind === 'grant' ? SECRET_ACTOR : CLIENT_ACTOR };
        switch (entry.kind) {
          case 'register':
          case 'profile':
            await service.upsert.handle(entry.user, entry.fields, context);
            break;
          case 'claim': {
            service.setRecordAt(entry.recordAt ?? entry.at);
            const refused = await service.claim.handle(entry.user, entry.code, context).then(
              () => null,
              (error: unknown) => error,
            );
            const outcome = refused instanceof DomainError ? refused.code : refused;
            expect(outcome, `claim of ${entry.code} by ${entry.user}`).to.equal(entry.refused);
            break;
          }
          case 'withdraw':
            await service.withdraw.handle(entry.user, { key: entry.key, amount: entry.amount, operation_id: entry.operationId }, { ...context });
            break;
          case 'grant':
            await service.grant.handle(entry.user, { key: entry.key, operation_id: entry.operationId, deactivation: days(30) }, context);
            break;
          case 'sweep':
            await app.executor.execute(
              streams.user(entry.user),
              userEvolver,
              (state) => decideExpireRewards(state, new Date(entry.at)),
              sweepContext(new Date(entry.at)),
            );
            break;
          case 'reaction': {
            await collectCauses();
            const cause = causes.shift() ?? expect.fail('a reaction without a cause');
            if (!entry.skipped) {
              await service.referrals.handle(cause);
              const head = await app.store.headPosition();
              if (head !== null) await app.consistency.waitFor(head, 5_000);
            }
            break;
          }
        }
        await collectCauses();
      }

      // 3. After the configuration, the same events in every stream, but for which random ids were drawn.
      const replayed = await app.log.readAll(setupHead, 100_000);
      expect(replayed.length, 'events replayed').to.equal(history.length - configuration);
      const [actual, expected] = [canonical(replayed), canonical(history.slice(configuration))];
      for (const stream of Object.keys(expected)) expect(actual[stream], stream).to.deep.equal(expected[stream]);
      expect(actual).to.deep.equal(expected);
    } finally {
      await app.stop();
    }
  });
});
