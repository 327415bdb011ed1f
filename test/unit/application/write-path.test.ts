import 'reflect-metadata';
import { expect } from 'chai';
import { RandomIds } from '../../../src/adapters/system/random-ids.js';
import { EventLog } from '../../../src/application/event-log.js';
import { CodeRegistry } from '../../../src/application/shared-resources/code-registry.js';
import { WRITE_ATTEMPTS } from '../../../src/application/write-retries.js';
import { streams } from '../../../src/domain/events/index.js';
import { userEvolver } from '../../../src/domain/users/user-state.js';
import type { Ids } from '../../../src/ports/ids.js';
import { type EventStore, WrongExpectedRevisionError } from '../../../src/ports/event-store.js';
import { type ApplicationSpec, applicationSpec } from '../../support/application-spec.js';
import { event, registered, T0 } from '../../support/events.js';

const context = { correlation_id: 'spec', causation_id: 'spec', actor: 'process:spec' };
const reserved = (code: string, type: 'referral' | 'promo' | 'affiliate', owner: string) => event('CodeReserved', { code, type, owner_id: owner });

/** Counts reads of a stream's latest event and the appends tried, delegating to `inner`. */
function counting(inner: EventStore) {
  const counts = { latestReads: 0, appends: 0 };
  const store: EventStore = Object.create(inner);
  store.readStream = async (stream, options) => {
    if (options?.direction === 'backwards') counts.latestReads += 1;
    return inner.readStream(stream, options);
  };
  store.append = async (stream, events, expected) => {
    counts.appends += 1;
    return inner.append(stream, events, expected);
  };
  return { store, counts };
}

/** Ids whose referral codes are `codes`, in order. */
function drawing(codes: string[]): Ids {
  const random = new RandomIds();
  return { uuid: () => random.uuid(), derived: (...parts) => random.derived(...parts), referralCode: () => codes.shift() ?? 'ZZZZZZ' };
}

describe('the write path (in memory): executeOnLatest, the code registry, after-commit work', () => {
  let app: ApplicationSpec;
  afterEach(() => app.stop());

  describe('StreamExecutor.executeOnLatest', () => {
    it('decides on the latest event; a conflict re-reads it and decides again', async () => {
      let raced = false;
      app = await applicationSpec({
        store: (inner) => {
          const racing: EventStore = Object.create(inner);
          racing.append = async (stream, events, expected) => {
            if (!raced) {
              raced = true;
              await new EventLog(inner, new RandomIds()).append(
                stream,
                [event('ClaimSlotTaken', { claim_id: 'other', claimer: 'bob', taken: 1 })],
                expected,
                context,
              );
            }
            return inner.append(stream, events, expected);
          };
          return racing;
        },
      });
      await app.given({ [streams.code('HOT')]: [reserved('HOT', 'promo', 'HOT')] });
      const decidedOn: string[] = [];
      const outcome = await app.when(() =>
        app.executor.executeOnLatest(
          streams.code('HOT'),
          (latest) => {
            decidedOn.push(latest?.type ?? 'none');
            const taken = latest?.type === 'ClaimSlotTaken' ? latest.data.taken : 0;
            return { events: [event('ClaimSlotTaken', { claim_id: 'mine', claimer: 'ann', taken: taken + 1 })], result: taken + 1 };
          },
          context,
        ),
      );
      const { result } = outcome.thenAppended({
        [streams.code('HOT')]: [
          event('ClaimSlotTaken', { claim_id: 'other', claimer: 'bob', taken: 1 }),
          event('ClaimSlotTaken', { claim_id: 'mine', claimer: 'ann', taken: 2 }),
        ],
      });
      expect(decidedOn).to.deep.equal(['CodeReserved', 'ClaimSlotTaken']);
      expect(result).to.equal(2);
    });

    it(`gives up after ${WRITE_ATTEMPTS} conflicting attempts, like execute (one retry policy)`, async () => {
      let appends = 0;
      app = await applicationSpec({
        store: (inner) => {
          const conflicting: EventStore = Object.create(inner);
          conflicting.append = async (stream, _events, expected) => {
            appends += 1;
            throw new WrongExpectedRevisionError(stream, expected, 99);
          };
          return conflicting;
        },
      });
      const outcome = await app.when(() =>
        app.executor.executeOnLatest(streams.code('HOT'), () => ({ events: [reserved('HOT', 'promo', 'HOT')], result: null }), context),
      );
      expect(() => outcome.thenNothing()).to.throw(/WrongExpectedRevision|expected revision/i);
      expect(appends).to.equal(WRITE_ATTEMPTS);
    });
  });

  describe('CodeRegistry (the shared code namespace, through the write path)', () => {
    it('a free code is reserved with one append and no read', async () => {
      let counts = { latestReads: 0, appends: 0 };
      app = await applicationSpec({
        store: (inner) => {
          const counted = counting(inner);
          counts = counted.counts;
          return counted.store;
        },
      });
      const registry = new CodeRegistry(app.executor, app.log, new RandomIds());
      const outcome = await app.when(() => registry.reserve('SPRING', 'promo', 'SPRING', context));
      outcome.thenAppended({ [streams.code('SPRING')]: [reserved('SPRING', 'promo', 'SPRING')] });
      expect(counts).to.deep.equal({ latestReads: 0, appends: 1 });
    });

    it('reserving again for the same owner changes nothing; for another owner it is CODE.TAKEN', async () => {
      app = await applicationSpec();
      const registry = new CodeRegistry(app.executor, app.log, new RandomIds());
      await app.given({ [streams.code('SPRING')]: [reserved('SPRING', 'promo', 'SPRING')] });
      (await app.when(() => registry.reserve('SPRING', 'promo', 'SPRING', context))).thenNothing();
      (await app.when(() => registry.reserve('SPRING', 'affiliate', 'acme', context, '/codes/0'))).thenError('CODE.TAKEN');
    });

    it('a referral code drawn twice is drawn again: the user gets the next free one', async () => {
      app = await applicationSpec();
      const registry = new CodeRegistry(app.executor, app.log, drawing(['TAKEN1', 'TAKEN2', 'FREE33']));
      await app.given({ [streams.code('TAKEN1')]: [reserved('TAKEN1', 'referral', 'bob')], [streams.code('TAKEN2')]: [reserved('TAKEN2', 'promo', 'TAKEN2')] });
      const outcome = await app.when(() => registry.reserveReferralCode('ann', context));
      expect(outcome.thenAppended({ [streams.code('FREE33')]: [reserved('FREE33', 'referral', 'ann')] })).to.equal('FREE33');
    });
  });

  describe('CommandExecutor (the write of a request)', () => {
    it('a pooled reward granted by a command asks its pool for a code before the answer; other kinds do not', async () => {
      app = await applicationSpec();
      await app.given({
        [streams.user('ann')]: [registered('ann')],
        [streams.pool('vip-codes')]: [event('PoolCodesAdded', { codes: [{ value: 'CODE-1', link: null, expires_at: '2099-01-01T00:00:00.000Z' }] })],
      });
      const granted = (key: string, kind: 'offer_code' | 'basic') => ({
        grant_id: `${key}/0`,
        entry_id: `${key}/0`,
        reward_key: key,
        kind,
        credits: null,
        granted_at: T0.toISOString(),
        expires_at: null,
        cause: { type: 'manual' as const, operation_id: null },
        clawback: 'none' as const,
        balance_after: null,
      });
      const outcome = await app.when(() =>
        app.commands.execute(
          streams.user('ann'),
          userEvolver,
          () => {
            const events = [event('RewardGranted', granted('vip-codes', 'offer_code')), event('RewardGranted', granted('week', 'basic'))];
            return { events, result: { granted: events.map((grant) => grant.data) } };
          },
          context,
          { granted: (result) => result.granted },
        ),
      );
      const appended = outcome.appended;
      expect(appended.get(streams.pool('vip-codes'))?.map((logged) => logged.type)).to.deep.equal(['PoolCodeAssigned']);
      expect(appended.get(streams.user('ann'))?.map((logged) => logged.type)).to.deep.equal(['RewardGranted', 'RewardGranted', 'RewardValueAssigned']);
      expect(appended.get(streams.pool('week'))).to.equal(undefined);
    });
  });
});
