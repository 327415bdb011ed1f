import { CLAIM_SLOTS, claimSlotsProjection } from '../../../projections/claim-slots.js';
import 'reflect-metadata';
import { expect } from 'chai';
import { RandomIds } from '../../../src/adapters/system/random-ids.js';
import { ClaimSlots } from '../../../src/application/shared-resources/claim-slots.js';
import { EventLog } from '../../../src/application/event-log.js';
import { StreamExecutor } from '../../../src/application/stream-executor.js';
import type { DomainError } from '../../../src/domain/domain-error.js';
import { streams } from '../../../src/domain/events/index.js';
import { type EventStore, StoreUnavailableError, WrongExpectedRevisionError } from '../../../src/ports/event-store.js';
import type { ReadStore } from '../../../src/ports/read-store.js';
import { type ApplicationSpec, applicationSpec } from '../../support/application-spec.js';
import { codeClaimed, event, registered } from '../../support/events.js';
import { rejection } from '../../support/rejection.js';

const CODE = 'HOT123';
const codeStream = streams.code(CODE);
const contextOf = (request: string) => ({ correlation_id: request, causation_id: request, actor: 'client:spec' });

/** Counts the appends to the code's stream (one per commit) and how many events each carried. */
function countingAppends(inner: EventStore, batches: number[]): EventStore {
  const store: EventStore = Object.create(inner);
  store.append = async (stream, events, expected) => {
    if (stream === codeStream) batches.push(events.length);
    return inner.append(stream, events, expected);
  };
  return store;
}

/** `count` takes on the code at once, without waiting between them; each outcome settled. */
function takeAtOnce(slots: ClaimSlots, count: number, limit: number, from = 0) {
  return Promise.allSettled(
    Array.from({ length: count }, (_, index) => slots.take(CODE, `claim-${from + index}`, `user-${from + index}`, limit, contextOf(`request-${from + index}`))),
  );
}

function slotsOf(app: ApplicationSpec) {
  return new ClaimSlots(app.executor, app.log, app.readStore, app.consistency, new RandomIds());
}

describe('ClaimSlots (in memory): requests on one code are batched, the limit holds', () => {
  it('takes arriving while an append is in flight are decided together and appended in one commit, each with its own metadata', async () => {
    const batches: number[] = [];
    const app = await applicationSpec({ store: (inner) => countingAppends(inner, batches) });
    const outcome = await app.when(() => takeAtOnce(slotsOf(app), 5, 0));
    const settled = outcome.thenAppended({
      [codeStream]: [0, 1, 2, 3, 4].map((index) => event('ClaimSlotTaken', { claim_id: `claim-${index}`, claimer: `user-${index}`, taken: index + 1 })),
    });
    expect(settled.map((result) => result.status)).to.deep.equal(Array(5).fill('fulfilled'));
    // The first take goes alone; the four queued behind it share the next commit.
    expect(batches).to.deep.equal([1, 4]);
    expect(outcome.appended.get(codeStream)!.map((recorded) => recorded.metadata.correlation_id)).to.deep.equal(
      [0, 1, 2, 3, 4].map((index) => `request-${index}`),
    );
    await app.stop();
  });

  it('a limit of 3 admits exactly 3 of 10 concurrent takes; the others get CLAIM.LIMIT_REACHED', async () => {
    const app = await applicationSpec();
    const settled = await takeAtOnce(slotsOf(app), 10, 3);
    expect(settled.map((result) => (result.status === 'fulfilled' ? 'ok' : (result.reason as DomainError).code))).to.deep.equal([
      'ok',
      'ok',
      'ok',
      ...Array(7).fill('CLAIM.LIMIT_REACHED'),
    ]);
    const written = await app.events(codeStream);
    expect(written.map((recorded) => recorded.type)).to.deep.equal(Array(3).fill('ClaimSlotTaken'));
    await app.stop();
  });

  it('two processes on one log: conflicts are retried and the limit still holds exactly', async () => {
    const app = await applicationSpec();
    // A second process: its own executor, queue and memory, the same log.
    let conflicts = 0;
    const otherStore: EventStore = Object.create(app.store);
    otherStore.append = (stream, events, expected) =>
      app.store.append(stream, events, expected).catch((error: unknown) => {
        if (error instanceof WrongExpectedRevisionError) conflicts += 1;
        throw error;
      });
    const otherLog = new EventLog(otherStore, new RandomIds());
    const other = new ClaimSlots(new StreamExecutor(otherLog, app.readStore), otherLog, app.readStore, app.consistency, new RandomIds());
    const settled = (await Promise.all([takeAtOnce(slotsOf(app), 6, 4), takeAtOnce(other, 6, 4, 6)])).flat();
    expect(conflicts, 'the second process lost a race and retried').to.be.greaterThan(0);
    expect(settled.filter((result) => result.status === 'fulfilled')).to.have.length(4);
    for (const result of settled) if (result.status === 'rejected') expect((result.reason as DomainError).code).to.equal('CLAIM.LIMIT_REACHED');
    const written = await app.events(codeStream);
    expect(written.map((recorded) => (recorded.data as { taken: number }).taken)).to.deep.equal([1, 2, 3, 4]);
    await app.stop();
  });

  it('abandoning a claim that was never recorded releases its slot, so another claimer can take it', async () => {
    const app = await applicationSpec({ projections: [claimSlotsProjection] });
    await app.given({ [streams.user('ann')]: [registered('ann')] });
    const slots = slotsOf(app);
    await slots.take(CODE, 'claim-a', 'ann', 1, contextOf('take-a'));
    const full = await rejection(slots.take(CODE, 'claim-b', 'bob', 1, contextOf('take-b')));
    expect((full as DomainError).code).to.equal('CLAIM.LIMIT_REACHED');

    const outcome = await app.when(() => slots.abandon(CODE, 'claim-a', 'ann', contextOf('abandon-a')));
    expect(
      outcome.thenAppended({
        [streams.user('ann')]: [event('ClaimAbandoned', { claim_id: 'claim-a', code: CODE })],
        [codeStream]: [event('ClaimSlotReleased', { claim_id: 'claim-a', claimer: 'ann', taken: 0 })],
      }),
    ).to.equal('abandoned');
    await slots.take(CODE, 'claim-b', 'bob', 1, contextOf('take-b-again'));
    expect((await app.events(codeStream)).map((recorded) => (recorded.data as { taken: number }).taken)).to.deep.equal([1, 0, 1]);
    await app.stop();
  });

  // The release's event id is derived from the claim, so a second release could never be
  // appended: the claim-slots index tells a slot already released, and a concurrent abandon of
  // the same claim joins the release in flight.
  it('abandoning a claim a second time releases nothing and fails nothing', async () => {
    const app = await applicationSpec({ projections: [claimSlotsProjection] });
    await app.given({ [streams.user('ann')]: [registered('ann')] });
    const slots = slotsOf(app);
    await slots.take(CODE, 'claim-a', 'ann', 1, contextOf('take-a'));
    await slots.abandon(CODE, 'claim-a', 'ann', contextOf('abandon-a'));
    (await app.when(() => slots.abandon(CODE, 'claim-a', 'ann', contextOf('abandon-a-again')))).thenNothing();
    const [first, second] = await Promise.all([
      slots.abandon(CODE, 'claim-a', 'ann', contextOf('again-1')),
      slots.abandon(CODE, 'claim-a', 'ann', contextOf('again-2')),
    ]);
    expect([first, second]).to.deep.equal(['abandoned', 'abandoned']);
    expect((await app.events(codeStream)).map((recorded) => recorded.type)).to.deep.equal(['ClaimSlotTaken', 'ClaimSlotReleased']);
    await app.stop();
  });

  it('a second process abandoning the claim on a stale claim-slots index releases no second slot: the release id, derived from the claim, is the guard', async () => {
    const app = await applicationSpec({ projections: [claimSlotsProjection] });
    await app.given({ [streams.user('ann')]: [registered('ann')] });
    const slots = slotsOf(app);
    await slots.take(CODE, 'claim-a', 'ann', 2, contextOf('take-a'));
    await slots.take(CODE, 'claim-d', 'dan', 2, contextOf('take-d'));
    await app.given({}); // waits for the read models to fold what is in the log
    // The other process reads an index that still shows claim-a's slot as held (its read model behind).
    const stale: ReadStore = Object.create(app.readStore);
    const held = await app.readStore.get(CLAIM_SLOTS, 'claim-a');
    expect(held).to.not.equal(null);
    stale.get = (async (collection: string, id: string) =>
      collection === CLAIM_SLOTS && id === 'claim-a' ? held : app.readStore.get(collection, id)) as ReadStore['get'];
    const otherLog = new EventLog(app.store, new RandomIds());
    const other = new ClaimSlots(new StreamExecutor(otherLog, app.readStore), otherLog, stale, app.consistency, new RandomIds());
    expect(await slots.abandon(CODE, 'claim-a', 'ann', contextOf('abandon-here'))).to.equal('abandoned');
    // Its release is decided again on the code's counts, but its event id is the first release's: it
    // can never be appended a second time (the store refuses it; the repair tries again later).
    await other.abandon(CODE, 'claim-a', 'ann', contextOf('abandon-there')).catch(() => 'refused');
    const written = await app.events(codeStream);
    expect(written.map((recorded) => [recorded.type, (recorded.data as { taken: number }).taken])).to.deep.equal([
      ['ClaimSlotTaken', 1],
      ['ClaimSlotTaken', 2],
      ['ClaimSlotReleased', 1],
    ]);
    await app.stop();
  });

  it('an append that fails rejects every take queued in its batch: none is left waiting', async () => {
    let failing = false;
    const app = await applicationSpec({
      store: (inner) => {
        const store: EventStore = Object.create(inner);
        store.append = (stream, events, expected) =>
          failing && stream === codeStream ? Promise.reject(new StoreUnavailableError('disk full')) : inner.append(stream, events, expected);
        return store;
      },
    });
    failing = true;
    // A take left waiting would hang: give up after 5 s instead.
    const hung = new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 5_000).unref());
    const settled = await Promise.race([takeAtOnce(slotsOf(app), 5, 0), hung]);
    expect(settled).to.not.equal('hung');
    if (settled === 'hung') return;
    expect(settled.map((result) => (result.status === 'rejected' ? (result.reason as Error).name : 'fulfilled'))).to.deep.equal(
      Array(5).fill('StoreUnavailableError'),
    );
    failing = false;
    expect((await takeAtOnce(slotsOf(app), 1, 0, 5)).map((result) => result.status)).to.deep.equal(['fulfilled']);
    await app.stop();
  });

  it('a claim already recorded in the claimer stream keeps its slot', async () => {
    const app = await applicationSpec();
    await app.given({ [streams.user('ann')]: [registered('ann'), codeClaimed({ claim_id: 'claim-a', code: CODE })] });
    const slots = slotsOf(app);
    await slots.take(CODE, 'claim-a', 'ann', 1, contextOf('take-a'));
    const outcome = await app.when(() => slots.abandon(CODE, 'claim-a', 'ann', contextOf('abandon-a')));
    expect(outcome.thenNothing()).to.equal('claimed');
    await app.stop();
  });
});
