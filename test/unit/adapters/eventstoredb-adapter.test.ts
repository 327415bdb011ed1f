import { randomUUID } from 'node:crypto';
import { DeadlineExceededError, UnavailableError } from '@eventstore/db-client';
import { expect } from 'chai';
import { EventStoreDbEventStore } from '../../../src/adapters/eventstoredb/eventstoredb-event-store.js';
import { readFilteredPage } from '../../../src/adapters/eventstoredb/eventstoredb-filtered-read.js';
import { EventStoreDbLogWatcher } from '../../../src/adapters/eventstoredb/eventstoredb-log-watcher.js';
import { type NewEvent, StoreUnavailableError, WrongExpectedRevisionError } from '../../../src/ports/event-store.js';
import { FakeEventStoreDbClient, type FakeSubscription } from './fake-eventstoredb-client.js';
import { rejection } from '../../support/rejection.js';

function newEvent(type = 'ThingHappened'): NewEvent {
  return {
    id: randomUUID(),
    type,
    data: { n: 1 },
    metadata: { correlation_id: 'c', causation_id: 'c', actor: 'test', schema_version: 1 },
  };
}

/** The adapter's own logic against a fake client; the real server is covered by `npm run test:docker`. */
describe('EventStoreDB adapter logic (fake client)', function () {
  let fake: FakeEventStoreDbClient;
  let store: EventStoreDbEventStore;

  beforeEach(function () {
    fake = new FakeEventStoreDbClient();
    store = new EventStoreDbEventStore(fake.asClient());
  });

  describe('append', function () {
    it('returns the revision and the position of the last event written, not of the write', async function () {
      const result = await store.append('user-1', [newEvent(), newEvent(), newEvent()], 'no_stream');
      expect(result).to.deep.equal({ nextExpectedRevision: 2, position: fake.log[2]!.position });
    });

    it('maps a conflict to WrongExpectedRevisionError with the actual revision', async function () {
      await store.append('user-1', [newEvent(), newEvent()], 'no_stream');
      const error = await rejection(() => store.append('user-1', [newEvent()], 0));
      expect(error).to.be.instanceOf(WrongExpectedRevisionError);
      expect(error).to.deep.include({ stream: 'user-1', expected: 0, actual: 1 });
    });

    it('a conflict the client answers instead of throwing (throwOnAppendFailure=false in the URL) is still a WrongExpectedRevisionError, never a write', async function () {
      fake.throwOnAppendFailure = false;
      await store.append('user-1', [newEvent(), newEvent(), newEvent()], 'no_stream');
      const stale = await rejection(() => store.append('user-1', [newEvent()], 0));
      expect(stale).to.be.instanceOf(WrongExpectedRevisionError);
      expect(stale).to.deep.include({ stream: 'user-1', expected: 0 });
      const missing = await rejection(() => store.append('user-2', [newEvent()], 4));
      expect(missing).to.be.instanceOf(WrongExpectedRevisionError);
      expect(fake.log).to.have.length(3);
    });

    it('a server timeout after which the events did land is the write, answered as such: a retry would decide it a second time', async function () {
      await store.append('user-1', [newEvent()], 'no_stream');
      fake.failAfterAppend = new DeadlineExceededError();
      const result = await store.append('user-1', [newEvent(), newEvent()], 0);
      expect(result).to.deep.equal({ nextExpectedRevision: 2, position: fake.log[2]!.position });
      expect(fake.log).to.have.length(3);
    });

    it('a server timeout after which the events are not there is StoreUnavailableError (a retry decides again)', async function () {
      await store.append('user-1', [newEvent()], 'no_stream');
      fake.failNext = new DeadlineExceededError();
      expect(await rejection(() => store.append('user-1', [newEvent()], 0))).to.be.instanceOf(StoreUnavailableError);
      expect(fake.log).to.have.length(1);
    });

    it('maps an unreachable server to StoreUnavailableError', async function () {
      fake.failNext = new UnavailableError();
      expect(await rejection(() => store.append('user-1', [newEvent()], 'any'))).to.be.instanceOf(StoreUnavailableError);
    });

    it('refuses an empty append without calling the server', async function () {
      expect(await rejection(() => store.append('user-1', [], 'any'))).to.be.instanceOf(Error);
      expect(fake.log).to.have.length(0);
    });
  });

  describe('readStream', function () {
    it('answers [] for a missing stream', async function () {
      expect(await store.readStream('user-404')).to.deep.equal([]);
      expect(await store.readStream('user-404', { direction: 'backwards', maxCount: 1 })).to.deep.equal([]);
    });

    it('maps an unreachable server to StoreUnavailableError', async function () {
      fake.failNext = new UnavailableError();
      expect(await rejection(() => store.readStream('user-1'))).to.be.instanceOf(StoreUnavailableError);
    });

    it('a page after a log position reads log(stream) events to find its start, then only the page', async function () {
      for (let index = 0; index < 1_000; index += 1) await store.append(index % 2 === 0 ? 'user-1' : 'user-2', [newEvent()], 'any');
      const all = await store.readStream('user-1');
      expect(all).to.have.length(500);
      fake.streamRecordsRead = 0;
      const page = await store.readStream('user-1', { afterPosition: all[480]!.position, maxCount: 5 });
      expect(page.map((event) => event.revision)).to.deep.equal([481, 482, 483, 484, 485]);
      expect(fake.streamRecordsRead).to.be.at.most(20);
      // A position between two of its events, before the first, past the last; with fromRevision.
      expect((await store.readStream('user-1', { afterPosition: all[10]!.position + 1n, maxCount: 2 })).map((event) => event.revision)).to.deep.equal([11, 12]);
      expect((await store.readStream('user-1', { afterPosition: 0n, maxCount: 2 })).map((event) => event.revision)).to.deep.equal([0, 1]);
      expect(await store.readStream('user-1', { afterPosition: all[499]!.position })).to.deep.equal([]);
      expect(
        (await store.readStream('user-1', { afterPosition: all[10]!.position, fromRevision: 100, maxCount: 1 })).map((event) => event.revision),
      ).to.deep.equal([100]);
      expect(await store.readStream('user-404', { afterPosition: 0n })).to.deep.equal([]);
    });

    it('a newest-first page before a log position reads log(stream) events to find its start, then only the page', async function () {
      for (let index = 0; index < 1_000; index += 1) await store.append(index % 2 === 0 ? 'user-1' : 'user-2', [newEvent()], 'any');
      const all = await store.readStream('user-1');
      const backwards = { direction: 'backwards' } as const;
      fake.streamRecordsRead = 0;
      const page = await store.readStream('user-1', { ...backwards, beforePosition: all[480]!.position, maxCount: 5 });
      expect(page.map((event) => event.revision)).to.deep.equal([479, 478, 477, 476, 475]);
      expect(fake.streamRecordsRead).to.be.at.most(20);
      // A position between two of its events, at the first, past the last; with fromRevision.
      expect(
        (await store.readStream('user-1', { ...backwards, beforePosition: all[10]!.position + 1n, maxCount: 2 })).map((event) => event.revision),
      ).to.deep.equal([10, 9]);
      expect(await store.readStream('user-1', { ...backwards, beforePosition: all[0]!.position })).to.deep.equal([]);
      expect(
        (await store.readStream('user-1', { ...backwards, beforePosition: all[499]!.position + 10n, maxCount: 1 })).map((event) => event.revision),
      ).to.deep.equal([499]);
      expect(
        (await store.readStream('user-1', { ...backwards, beforePosition: all[480]!.position, fromRevision: 100, maxCount: 1 })).map((event) => event.revision),
      ).to.deep.equal([100]);
      expect(await store.readStream('user-404', { ...backwards, beforePosition: 10n })).to.deep.equal([]);
    });

    it("answers an idempotent repeat as the server does, and says when another writer's events were already there (their metadata differs)", async function () {
      const events = [newEvent(), newEvent()];
      const original = await store.append('user-1', events, 'no_stream');
      expect(original).to.not.have.property('writtenByAnother');
      // The same writer trying again: the same write.
      expect(await store.append('user-1', events, 'no_stream')).to.deep.equal(original);
      // Another request with the same deterministic ids: nothing written, and said so.
      const other = events.map((event) => ({ ...event, metadata: { ...event.metadata, correlation_id: 'another-request' } }));
      expect(await store.append('user-1', other, 'no_stream')).to.deep.equal({ ...original, writtenByAnother: true });
      expect(await store.readStream('user-1')).to.have.length(2);
      // A copied event (migrate-events) keeps its recording time in the stored metadata: still this writer's (review).
      const copied = { ...newEvent(), recordedAt: new Date('2020-01-01T00:00:00Z') };
      expect(await store.append('user-2', [copied], 'no_stream')).to.not.have.property('writtenByAnother');
      expect(await store.append('user-2', [copied], 'no_stream')).to.not.have.property('writtenByAnother');
    });

    it('reads backwards from a revision with a count', async function () {
      await store.append('user-1', [newEvent(), newEvent(), newEvent()], 'no_stream');
      const read = await store.readStream('user-1', { direction: 'backwards', fromRevision: 1, maxCount: 5 });
      expect(read.map((event) => event.revision)).to.deep.equal([1, 0]);
    });
  });

  describe('readAll without a filter', function () {
    it('skips system events and treats `after` as exclusive', async function () {
      fake.record('$stats-node', '$statsCollected');
      const a = fake.record('user-1', 'UserRegistered');
      fake.record('$$user-1', '$metadata');
      const b = fake.record('user-2', 'UserRegistered');
      const all = await store.readAll({ after: null, limit: 10 });
      expect(all.map((event) => event.id)).to.deep.equal([a.id, b.id]);
      const afterA = await store.readAll({ after: a.position, limit: 10 });
      expect(afterA.map((event) => event.id)).to.deep.equal([b.id]);
      expect(await store.readAll({ after: b.position, limit: 10 })).to.deep.equal([]);
    });

    it('keeps reading past long stretches of system events until the page is full', async function () {
      const ours = [fake.record('user-1', 'A')];
      for (let index = 0; index < 700; index += 1) fake.record('$stats-node', '$statsCollected');
      ours.push(fake.record('user-1', 'B'), fake.record('user-2', 'C'));
      const page = await store.readAll({ after: null, limit: 2 });
      expect(page.map((event) => event.id)).to.deep.equal([ours[0]!.id, ours[1]!.id]);
      const rest = await store.readAll({ after: page[1]!.position, limit: 2 });
      expect(rest.map((event) => event.id)).to.deep.equal([ours[2]!.id]);
    });

    it('returns at most `limit` events', async function () {
      for (let index = 0; index < 10; index += 1) fake.record(`user-${index}`, 'A');
      expect(await store.readAll({ after: null, limit: 3 })).to.have.length(3);
      expect(await store.readAll({ after: null, limit: 0 })).to.deep.equal([]);
    });
  });

  describe('headPosition', function () {
    it('is the last non-system event, past trailing system events', async function () {
      expect(await store.headPosition()).to.equal(null);
      const last = fake.record('user-1', 'A');
      for (let index = 0; index < 600; index += 1) fake.record('$stats-node', '$statsCollected');
      expect(await store.headPosition()).to.equal(last.position);
    });

    it('is null when the log holds only system events', async function () {
      for (let index = 0; index < 300; index += 1) fake.record('$stats-node', '$statsCollected');
      expect(await store.headPosition()).to.equal(null);
    });
  });

  describe('filtered pages (catch-up subscription)', function () {
    function start(request: Parameters<typeof readFilteredPage>[1]) {
      const page = readFilteredPage(fake.asClient(), request);
      return { page, subscription: fake.subscriptions[fake.subscriptions.length - 1]! };
    }

    it('subscribes from `after` with a server-side prefix filter and stops at the limit', async function () {
      const records = [fake.record('user-1', 'A'), fake.record('user-2', 'A'), fake.record('user-3', 'A')];
      const { page, subscription } = start({ after: 50n, limit: 2, filter: { streamPrefixes: ['user-'] }, head: records[2]!.position });
      expect(subscription.options.fromPosition).to.deep.equal({ commit: 50n, prepare: 50n });
      expect(subscription.options.filter).to.deep.include({ filterOn: 'streamName', prefixes: ['user-'] });
      for (const record of records) subscription.deliver(record);
      expect((await page).events.map((event) => event.id)).to.deep.equal([records[0]!.id, records[1]!.id]);
      expect(subscription.unsubscribed).to.equal(true);
    });

    it('skips the event at exactly `after`', async function () {
      const first = fake.record('user-1', 'A');
      const second = fake.record('user-1', 'A');
      const { page, subscription } = start({ after: first.position, limit: 10, filter: { streamPrefixes: ['user-'] }, head: second.position });
      subscription.deliver(first);
      subscription.deliver(second);
      expect((await page).events.map((event) => event.id)).to.deep.equal([second.id]);
    });

    it('ends when a checkpoint passes the head (long filtered-out stretch)', async function () {
      const wanted = fake.record('user-1', 'A');
      const { page, subscription } = start({ after: null, limit: 10, filter: { streamPrefixes: ['user-'] }, head: 10_000n });
      subscription.deliver(wanted);
      await subscription.checkpoint(5_000n);
      await subscription.checkpoint(10_000n);
      expect((await page).events.map((event) => event.id)).to.deep.equal([wanted.id]);
    });

    it('ends when the subscription has caught up', async function () {
      const wanted = fake.record('user-1', 'A');
      const { page, subscription } = start({ after: null, limit: 10, filter: { types: ['A'] }, head: 10_000n });
      expect(subscription.options.filter).to.deep.include({ filterOn: 'eventType', regex: '^(?:A)$' });
      subscription.deliver(wanted);
      subscription.emit('caughtUp');
      expect((await page).events.map((event) => event.id)).to.deep.equal([wanted.id]);
    });

    it('applies the type filter on the client when the server filters by prefix', async function () {
      const a = fake.record('user-1', 'A');
      const b = fake.record('user-1', 'B');
      const { page, subscription } = start({ after: null, limit: 10, filter: { streamPrefixes: ['user-'], types: ['B'] }, head: b.position });
      subscription.deliver(a);
      subscription.deliver(b);
      expect((await page).events.map((event) => event.id)).to.deep.equal([b.id]);
    });

    it("a follower's page that has not reached the head in time ends where the read got to, with what it found", async function () {
      const wanted = fake.record('user-1', 'A');
      const { page, subscription } = start({ after: null, limit: 10, filter: { types: ['A'] }, head: 1_000_000n, partialAfterMs: 30 });
      subscription.deliver(wanted);
      await subscription.checkpoint(400_000n);
      const ended = await page;
      expect(ended).to.deep.include({ through: 400_000n, complete: false });
      expect(ended.events.map((event) => event.id)).to.deep.equal([wanted.id]);
      expect(subscription.unsubscribed).to.equal(true);
    });

    it('a follower whose read has not moved when the time is up looks again, and ends as soon as it has', async function () {
      const wanted = fake.record('user-1', 'A');
      const { page, subscription } = start({ after: null, limit: 10, filter: { types: ['A'] }, head: 1_000_000n, partialAfterMs: 10 });
      await new Promise((resolve) => setTimeout(resolve, 35));
      subscription.deliver(wanted);
      const ended = await page;
      expect(ended).to.deep.include({ through: wanted.position, complete: false });
    });

    it('a page without partialAfterMs (readAll) waits for the head; a follower with no progress yet keeps waiting too', async function () {
      const { page, subscription } = start({ after: 5n, limit: 10, filter: { types: ['A'] }, head: 1_000n, partialAfterMs: 10 });
      await new Promise((resolve) => setTimeout(resolve, 40));
      await subscription.checkpoint(1_000n);
      expect(await page).to.deep.equal({ events: [], through: 1_000n, complete: true });
    });

    it('the store hands a partial page to its follower as `through` with `more`, so the next page goes on from there', async function () {
      const store = new EventStoreDbEventStore(fake.asClient(), {}, 20);
      for (let index = 0; index < 3; index += 1) await store.append(`user-${index}`, [newEvent('A')], 'no_stream');
      const [first] = await store.readAll({ after: null, limit: 1 });
      const reading = store.readPage({ after: null, limit: 10, types: ['A'] });
      await new Promise((resolve) => setTimeout(resolve, 5));
      const subscription = fake.subscriptions[fake.subscriptions.length - 1]!;
      const record = fake.log.find((candidate) => candidate.id === first!.id)!;
      subscription.deliver(record);
      expect(await reading).to.deep.equal({ events: [first], through: first!.position, more: true });
    });

    it('a page that holds an event appended after the head was read ends past that event, never before it', async function () {
      const store = new EventStoreDbEventStore(fake.asClient(), {}, 60_000);
      await store.append('user-1', [newEvent('A')], 'no_stream');
      await store.append('other-1', [newEvent('B')], 'no_stream');
      const reading = store.readPage({ after: null, limit: 10, types: ['A'] });
      await new Promise((resolve) => setTimeout(resolve, 5));
      // Appended once the page had read the head (B): the subscription delivers it too.
      await store.append('user-2', [newEvent('A')], 'no_stream');
      const subscription = fake.subscriptions[fake.subscriptions.length - 1]!;
      const [first, , late] = fake.log;
      subscription.deliver(first!);
      subscription.deliver(late!);
      const page = await reading;
      expect(page.events.map((event) => event.position)).to.deep.equal([first!.position, late!.position]);
      expect(page).to.deep.include({ through: late!.position, more: false });
    });

    it('fails with the port error when the subscription fails', async function () {
      const { page, subscription } = start({ after: null, limit: 10, filter: { types: ['A'] }, head: 100n });
      subscription.emit('error', new UnavailableError());
      expect(await rejection(() => page)).to.be.instanceOf(StoreUnavailableError);
      expect(subscription.unsubscribed).to.equal(true);
    });

    it('a subscription that ends before the page is read fails the page: the events after the last delivered are not skipped', async function () {
      const store = new EventStoreDbEventStore(fake.asClient());
      await store.append('user-1', [newEvent('A')], 'no_stream');
      await store.append('user-2', [newEvent('A')], 'no_stream');
      const reading = store.readPage({ after: null, limit: 10, types: ['A'] });
      await new Promise((resolve) => setTimeout(resolve, 5));
      const subscription = fake.subscriptions[fake.subscriptions.length - 1]!;
      subscription.deliver(fake.log[0]!);
      subscription.emit('end');
      expect(await rejection(() => reading)).to.be.instanceOf(StoreUnavailableError);
    });

    it('a long read fails only when it stops moving, not after a time in all', async function () {
      // A checkpoint every 10 ms for 60 steps: the read takes longer in all than the stall limit, and
      // no gap between two checkpoints comes near it, even on a busy machine whose timers run late.
      const STALL_LIMIT_MS = 400;
      const moving = start({ after: null, limit: 10, filter: { types: ['A'] }, head: 6_000n, stallLimitMs: STALL_LIMIT_MS });
      const started = performance.now();
      for (let position = 100n; position <= 6_000n; position += 100n) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        await moving.subscription.checkpoint(position);
      }
      expect(performance.now() - started).to.be.greaterThan(STALL_LIMIT_MS);
      expect(await moving.page).to.deep.equal({ events: [], through: 6_000n, complete: true });
      const stuck = start({ after: null, limit: 10, filter: { types: ['A'] }, head: 1_000n, stallLimitMs: STALL_LIMIT_MS });
      await stuck.subscription.checkpoint(100n);
      expect(await rejection(() => stuck.page)).to.be.instanceOf(StoreUnavailableError);
      expect(stuck.subscription.unsubscribed).to.equal(true);
    });

    it('does not subscribe when `after` is already at the head', async function () {
      expect(await readFilteredPage(fake.asClient(), { after: 500n, limit: 10, filter: { types: ['A'] }, head: 500n })).to.deep.equal({
        events: [],
        through: 500n,
        complete: true,
      });
      expect(fake.subscriptions).to.have.length(0);
    });
  });

  describe('watch (live subscription)', function () {
    let scheduled: { work: () => void; ms: number; cancelled: boolean }[];
    let dropped: { error: unknown; retryInMs: number }[];
    let watcher: EventStoreDbLogWatcher;

    beforeEach(function () {
      scheduled = [];
      dropped = [];
      watcher = new EventStoreDbLogWatcher(fake.asClient(), {
        onDropped: (error, retryInMs) => dropped.push({ error, retryInMs }),
        schedule: (work, ms) => {
          const entry = { work, ms, cancelled: false };
          scheduled.push(entry);
          return () => (entry.cancelled = true);
        },
      });
    });

    const current = (): FakeSubscription => fake.subscriptions[fake.subscriptions.length - 1]!;

    it('subscribes once, from the end, without system events, and hints every listener', function () {
      let first = 0;
      let second = 0;
      watcher.add(() => (first += 1));
      watcher.add(() => (second += 1));
      expect(fake.subscriptions).to.have.length(1);
      expect(current().options.fromPosition).to.equal('end');
      expect(current().options.filter).to.deep.include({ filterOn: 'eventType', regex: '^[^$].*' });
      current().deliver(fake.record('user-1', 'A'));
      expect([first, second]).to.deep.equal([1, 1]);
    });

    it('hints on confirmation, since events may have been committed before it', function () {
      let calls = 0;
      watcher.add(() => (calls += 1));
      current().emit('confirmation');
      expect(calls).to.equal(1);
    });

    it('re-subscribes after a drop with growing back-off, from the last position seen', async function () {
      watcher.add(() => {});
      const seen = fake.record('user-1', 'A');
      current().deliver(seen);
      current().emit('error', new UnavailableError());
      expect(dropped).to.have.length(1);
      expect(scheduled).to.have.length(1);
      scheduled[0]!.work();
      expect(fake.subscriptions).to.have.length(2);
      expect(current().options.fromPosition).to.deep.equal({ commit: seen.position, prepare: seen.position });

      await current().checkpoint(9_000n);
      current().emit('end');
      scheduled[1]!.work();
      expect(current().options.fromPosition).to.deep.equal({ commit: 9_000n, prepare: 9_000n });
      expect(scheduled[1]!.ms).to.be.greaterThan(scheduled[0]!.ms * 1.2);

      for (let attempt = 0; attempt < 30; attempt += 1) {
        current().emit('error', new UnavailableError());
        scheduled[scheduled.length - 1]!.work();
      }
      expect(fake.subscriptions).to.have.length(33);
      expect(scheduled[scheduled.length - 1]!.ms).to.be.at.most(30_000);
    });

    it('resets the back-off once the subscription works again', function () {
      watcher.add(() => {});
      for (let attempt = 0; attempt < 5; attempt += 1) {
        current().emit('error', new UnavailableError());
        scheduled[scheduled.length - 1]!.work();
      }
      current().emit('confirmation');
      current().emit('error', new UnavailableError());
      expect(dropped[dropped.length - 1]!.retryInMs).to.be.at.most(100);
    });

    it('stops subscribing when the last listener leaves, and cancels a pending retry', function () {
      const stop = watcher.add(() => {});
      current().emit('error', new UnavailableError());
      stop();
      expect(scheduled[0]!.cancelled).to.equal(true);
      const stopAgain = watcher.add(() => {});
      expect(fake.subscriptions).to.have.length(2);
      stopAgain();
      expect(current().unsubscribed).to.equal(true);
      stopAgain();
    });

    it('keeps hinting the other listeners when one throws', function () {
      let calls = 0;
      watcher.add(() => {
        throw new Error('listener bug');
      });
      watcher.add(() => (calls += 1));
      current().deliver(fake.record('user-1', 'A'));
      expect(calls).to.equal(1);
    });

    it('the store closes its watcher and the client', async function () {
      store.watch(() => {});
      const subscription = current();
      await store.close();
      expect(subscription.unsubscribed).to.equal(true);
      expect(fake.disposed).to.equal(true);
    });
  });
});
