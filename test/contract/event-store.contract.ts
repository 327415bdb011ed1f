import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { type EventStore, type ExpectedRevision, type NewEvent, type RecordedEvent, WrongExpectedRevisionError } from '../../src/ports/event-store.js';
import type { ContractOptions, OpenContractSubject } from './contract-subject.js';

/** A short random tag: streams, types and prefixes of one test never collide with another's. */
function tag(): string {
  return randomUUID().replace(/-/g, '').slice(0, 10);
}

function newEvent(type = 'ThingHappened', data: Record<string, unknown> = {}): NewEvent {
  return {
    id: randomUUID(),
    type,
    data,
    metadata: { correlation_id: randomUUID(), causation_id: randomUUID(), actor: 'contract-test', schema_version: 1 },
  };
}

function events(count: number, type = 'ThingHappened'): NewEvent[] {
  return Array.from({ length: count }, (_, index) => newEvent(type, { index }));
}

async function appendFails(
  store: EventStore,
  stream: string,
  expected: ExpectedRevision,
  batch: NewEvent[] = [newEvent()],
): Promise<WrongExpectedRevisionError> {
  try {
    await store.append(stream, batch, expected);
  } catch (error) {
    expect(error).to.be.instanceOf(WrongExpectedRevisionError);
    return error as WrongExpectedRevisionError;
  }
  throw new Error(`append to ${stream} with expected ${String(expected)} should have failed`);
}

/** Every event after `after`, page by page (the way projectors read). */
async function readEverythingAfter(store: EventStore, after: bigint | null, pageSize: number, filter?: Parameters<EventStore['readAll']>[0]['filter']) {
  const all: RecordedEvent[] = [];
  let cursor = after;
  for (;;) {
    const page = await store.readAll({ after: cursor, limit: pageSize, filter });
    all.push(...page);
    if (page.length < pageSize) return all;
    cursor = page[page.length - 1]!.position;
  }
}

function summary(event: RecordedEvent) {
  return { id: event.id, stream: event.stream, revision: event.revision, type: event.type, position: event.position };
}

/**
 * The EventStore port's contract. Run against every adapter: this is where the backends are
 * proven equivalent (EventStoreDB conventions: first revision 0, no stream = -1).
 */
export function eventStoreContract(name: string, open: OpenContractSubject<EventStore>, options: ContractOptions): void {
  describe(`EventStore contract: ${name}`, function () {
    let store: EventStore;
    let dispose: () => Promise<void>;
    let prefix: string;

    beforeEach(async function () {
      const subject = await open();
      store = subject.store;
      dispose = subject.dispose;
      prefix = `c${tag()}`;
    });

    afterEach(async function () {
      await dispose();
    });

    const streamName = (kind = 'thing') => `${prefix}${kind}-${tag()}`;

    describe('append and expected revisions', function () {
      it('creates a stream with no_stream; its first event has revision 0', async function () {
        const stream = streamName();
        const result = await store.append(stream, [newEvent()], 'no_stream');
        expect(result.nextExpectedRevision).to.equal(0);
        const [recorded] = await store.readStream(stream);
        expect(recorded!.revision).to.equal(0);
        expect(result.position).to.equal(recorded!.position);
      });

      it('numbers the events of one append consecutively and reports the last', async function () {
        const stream = streamName();
        const result = await store.append(stream, events(3), 'no_stream');
        expect(result.nextExpectedRevision).to.equal(2);
        const recorded = await store.readStream(stream);
        expect(recorded.map((event) => event.revision)).to.deep.equal([0, 1, 2]);
        expect(result.position).to.equal(recorded[2]!.position);
      });

      it('appends with the exact expected revision', async function () {
        const stream = streamName();
        await store.append(stream, events(2), 'no_stream');
        const result = await store.append(stream, [newEvent()], 1);
        expect(result.nextExpectedRevision).to.equal(2);
        expect((await store.readStream(stream)).map((event) => event.revision)).to.deep.equal([0, 1, 2]);
      });

      it('rejects a stale exact revision with the actual revision', async function () {
        const stream = streamName();
        await store.append(stream, events(3), 'no_stream');
        const error = await appendFails(store, stream, 0);
        expect(error.stream).to.equal(stream);
        expect(error.expected).to.equal(0);
        expect(error.actual).to.equal(2);
        expect(await store.readStream(stream)).to.have.length(3);
      });

      it('rejects an exact revision ahead of the stream', async function () {
        const stream = streamName();
        await store.append(stream, [newEvent()], 'no_stream');
        const error = await appendFails(store, stream, 5);
        expect(error.actual).to.equal(0);
      });

      it('rejects an exact revision on a missing stream with actual -1', async function () {
        const stream = streamName();
        const error = await appendFails(store, stream, 0);
        expect(error.actual).to.equal(-1);
        expect(await store.readStream(stream)).to.deep.equal([]);
      });

      it('rejects no_stream when the stream exists', async function () {
        const stream = streamName();
        await store.append(stream, events(2), 'no_stream');
        const error = await appendFails(store, stream, 'no_stream');
        expect(error.expected).to.equal('no_stream');
        expect(error.actual).to.equal(1);
      });

      it('accepts stream_exists only when the stream exists', async function () {
        const stream = streamName();
        const error = await appendFails(store, stream, 'stream_exists');
        expect(error.expected).to.equal('stream_exists');
        expect(error.actual).to.equal(-1);
        await store.append(stream, [newEvent()], 'no_stream');
        const result = await store.append(stream, [newEvent()], 'stream_exists');
        expect(result.nextExpectedRevision).to.equal(1);
      });

      it('accepts any on a new and on an existing stream', async function () {
        const stream = streamName();
        expect((await store.append(stream, [newEvent()], 'any')).nextExpectedRevision).to.equal(0);
        expect((await store.append(stream, events(2), 'any')).nextExpectedRevision).to.equal(2);
      });

      it('rejects an empty append', async function () {
        let failed = false;
        try {
          await store.append(streamName(), [], 'any');
        } catch {
          failed = true;
        }
        expect(failed).to.equal(true);
      });

      it('gives later appends higher positions, across streams', async function () {
        const first = await store.append(streamName('a'), [newEvent()], 'no_stream');
        const second = await store.append(streamName('b'), events(2), 'no_stream');
        const third = await store.append(streamName('a'), [newEvent()], 'any');
        expect(second.position > first.position).to.equal(true);
        expect(third.position > second.position).to.equal(true);
      });
    });

    it('a store that writes reports no write failure (writeFailure, where the store has it, is null)', async function () {
      await store.append(streamName(), [newEvent()], 'no_stream');
      expect(store.writeFailure?.() ?? null).to.equal(null);
    });

    describe('idempotent re-append', function () {
      it('repeating an append with the same ids at the same exact revision returns the original result and writes nothing', async function () {
        const stream = streamName();
        await store.append(stream, [newEvent()], 'no_stream');
        const batch = events(2);
        const original = await store.append(stream, batch, 0);
        const head = await store.headPosition();
        const repeated = await store.append(stream, batch, 0);
        expect(repeated).to.deep.equal(original);
        expect(await store.readStream(stream)).to.have.length(3);
        expect(await store.headPosition()).to.equal(head);
      });

      it('repeating a no_stream append with the same ids returns the original result', async function () {
        const stream = streamName();
        const batch = events(2);
        const original = await store.append(stream, batch, 'no_stream');
        const repeated = await store.append(stream, batch, 'no_stream');
        expect(repeated).to.deep.equal(original);
        expect(await store.readStream(stream)).to.have.length(2);
      });

      it("says when the events were already appended by another writer (same ids, other metadata): nothing written, the other's result", async function () {
        const stream = streamName();
        const batch = events(2);
        const original = await store.append(stream, batch, 'no_stream');
        expect(original).to.not.have.property('writtenByAnother');
        const other = batch.map((event) => ({ ...event, metadata: { ...event.metadata, correlation_id: 'another-request' } }));
        expect(await store.append(stream, other, 'no_stream')).to.deep.equal({ ...original, writtenByAnother: true });
        expect((await store.readStream(stream)).map((event) => event.metadata)).to.deep.equal(batch.map((event) => event.metadata));
      });

      it('a retry after the stream moved on still answers with the original result', async function () {
        const stream = streamName();
        const batch = [newEvent()];
        const original = await store.append(stream, batch, 'no_stream');
        await store.append(stream, [newEvent()], 0);
        const repeated = await store.append(stream, batch, 'no_stream');
        expect(repeated).to.deep.equal(original);
        expect(await store.readStream(stream)).to.have.length(2);
      });

      it('appends made together stay apart: the one that conflicts fails alone, the others are written whole', async function () {
        const taken = streamName();
        await store.append(taken, [newEvent()], 'no_stream');
        const fresh = streamName();
        const several = streamName();
        const [first, conflicting, third] = await Promise.allSettled([
          store.append(fresh, [newEvent()], 'no_stream'),
          store.append(taken, events(2), 'no_stream'),
          store.append(several, events(3), 'no_stream'),
        ]);
        expect(first.status).to.equal('fulfilled');
        expect(conflicting.status).to.equal('rejected');
        expect((conflicting as PromiseRejectedResult).reason).to.be.instanceOf(WrongExpectedRevisionError);
        expect(third.status).to.equal('fulfilled');
        expect((await store.readStream(fresh)).map((event) => event.revision)).to.deep.equal([0]);
        expect(await store.readStream(taken)).to.have.length(1);
        expect((await store.readStream(several)).map((event) => event.revision)).to.deep.equal([0, 1, 2]);
      });

      it('written ids repeated at another expected revision are a conflict, not a repeat: nothing written', async function () {
        const stream = streamName();
        await store.append(stream, [newEvent()], 'no_stream');
        const second = [newEvent()];
        await store.append(stream, second, 0);
        // `second` stands at revision 1: right after revision 0, not at the stream's start nor past its end.
        expect((await appendFails(store, stream, 'no_stream', second)).actual).to.equal(1);
        expect((await appendFails(store, stream, 4, second)).actual).to.equal(1);
        expect(await store.readStream(stream)).to.have.length(2);
      });

      it('new ids at a stale revision are still a conflict', async function () {
        const stream = streamName();
        await store.append(stream, [newEvent()], 'no_stream');
        await store.append(stream, [newEvent()], 0);
        const error = await appendFails(store, stream, 0, [newEvent()]);
        expect(error.actual).to.equal(1);
      });
    });

    describe('readStream', function () {
      it('returns [] for a stream that does not exist, in both directions', async function () {
        const stream = streamName();
        expect(await store.readStream(stream)).to.deep.equal([]);
        expect(await store.readStream(stream, { direction: 'backwards' })).to.deep.equal([]);
        expect(await store.readStream(stream, { fromRevision: 3, maxCount: 2 })).to.deep.equal([]);
      });

      it('returns what was appended: id, type, data, metadata, stream, revision, position and time', async function () {
        const stream = streamName();
        const event: NewEvent = {
          id: randomUUID(),
          type: 'UserRegistered',
          data: { name: 'Zoë ✓', nested: { list: [1, 'two', null, true], empty: {} }, amount: 12.5, flag: false, nothing: null },
          metadata: {
            correlation_id: 'req-1',
            causation_id: 'req-1',
            actor: 'secret:abc',
            schema_version: 2,
            operation_id: 'op-42',
          },
        };
        const before = Date.now();
        const result = await store.append(stream, [event], 'no_stream');
        const [recorded] = await store.readStream(stream);
        expect(recorded).to.deep.include({ id: event.id, type: event.type, stream, revision: 0, position: result.position });
        expect(recorded!.data).to.deep.equal(event.data);
        expect(recorded!.metadata).to.deep.equal(event.metadata);
        expect(recorded!.recordedAt).to.be.instanceOf(Date);
        expect(Number.isNaN(recorded!.recordedAt.getTime())).to.equal(false);
        // Clocks of a store server and this process may differ a little; a day is no timing claim.
        expect(Math.abs(recorded!.recordedAt.getTime() - before)).to.be.lessThan(86_400_000);
      });

      it('keeps the recordedAt of a copied event (a migration), with the metadata as given, in every read', async function () {
        const stream = streamName();
        const firstRecorded = new Date('2024-02-29T23:59:58.123Z');
        const copied: NewEvent = { ...newEvent('Copied', { n: 1 }), recordedAt: firstRecorded };
        const fresh = newEvent('Fresh');
        const before = Date.now();
        const head = await store.headPosition();
        await store.append(stream, [copied], 'no_stream');
        await store.append(stream, [fresh], 0);
        const [again, now] = await store.readStream(stream);
        expect(again!.recordedAt.toISOString()).to.equal(firstRecorded.toISOString());
        expect(again!.metadata).to.deep.equal(copied.metadata);
        expect(Math.abs(now!.recordedAt.getTime() - before)).to.be.lessThan(86_400_000);
        const fromLog = (await store.readAll({ after: head, limit: 10, filter: { streamPrefixes: [stream] } })).find((event) => event.id === copied.id)!;
        expect(fromLog.recordedAt.toISOString()).to.equal(firstRecorded.toISOString());
        expect(fromLog.metadata).to.deep.equal(copied.metadata);
        if (store.readAllJson) {
          const json = (await store.readAllJson({ after: head, limit: 10, filter: { streamPrefixes: [stream] } })).find((event) => event.id === copied.id)!;
          expect(json.recordedAtIso).to.equal(firstRecorded.toISOString());
        }
      });

      it('reads forwards from a revision, with a maximum count', async function () {
        const stream = streamName();
        await store.append(stream, events(5), 'no_stream');
        const tail = await store.readStream(stream, { fromRevision: 2 });
        expect(tail.map((event) => event.revision)).to.deep.equal([2, 3, 4]);
        const window = await store.readStream(stream, { fromRevision: 1, maxCount: 2 });
        expect(window.map((event) => event.revision)).to.deep.equal([1, 2]);
        const head = await store.readStream(stream, { maxCount: 1 });
        expect(head.map((event) => event.revision)).to.deep.equal([0]);
        expect(await store.readStream(stream, { fromRevision: 5 })).to.deep.equal([]);
        expect(await store.readStream(stream, { maxCount: 50 })).to.have.length(5);
      });

      it('reads forwards after a log position: after an event of its own, of another stream, with a maximum count', async function () {
        const stream = streamName();
        const other = streamName('other');
        const first = await store.append(stream, events(3), 'no_stream');
        const between = await store.append(other, events(1), 'no_stream');
        await store.append(stream, events(3), first.nextExpectedRevision);
        const all = await store.readStream(stream);
        const revisions = (events: RecordedEvent[]) => events.map((event) => event.revision);
        // After its own third event (a page's next_after): the rest, or the next two.
        expect(revisions(await store.readStream(stream, { afterPosition: first.position }))).to.deep.equal([3, 4, 5]);
        expect(revisions(await store.readStream(stream, { afterPosition: first.position, maxCount: 2 }))).to.deep.equal([3, 4]);
        expect(revisions(await store.readStream(stream, { afterPosition: all[0]!.position, maxCount: 2 }))).to.deep.equal([1, 2]);
        // After another stream's event, or before the stream began: by position.
        expect(revisions(await store.readStream(stream, { afterPosition: between.position }))).to.deep.equal([3, 4, 5]);
        expect(revisions(await store.readStream(stream, { afterPosition: 0n, maxCount: 4 }))).to.deep.equal([0, 1, 2, 3]);
        expect(await store.readStream(stream, { afterPosition: all[5]!.position })).to.deep.equal([]);
        expect(await store.readStream(streamName('missing'), { afterPosition: 0n })).to.deep.equal([]);
        expect(await store.readStream(stream, { afterPosition: all[1]!.position })).to.deep.equal(all.slice(2));
      });

      it('reads backwards from the end or from a revision', async function () {
        const stream = streamName();
        await store.append(stream, events(5), 'no_stream');
        const all = await store.readStream(stream, { direction: 'backwards' });
        expect(all.map((event) => event.revision)).to.deep.equal([4, 3, 2, 1, 0]);
        const last = await store.readStream(stream, { direction: 'backwards', maxCount: 1 });
        expect(last.map((event) => event.revision)).to.deep.equal([4]);
        const fromTwo = await store.readStream(stream, { direction: 'backwards', fromRevision: 2 });
        expect(fromTwo.map((event) => event.revision)).to.deep.equal([2, 1, 0]);
        const window = await store.readStream(stream, { direction: 'backwards', fromRevision: 3, maxCount: 2 });
        expect(window.map((event) => event.revision)).to.deep.equal([3, 2]);
      });

      it('reads backwards before a log position: before an event of its own, of another stream, with a maximum count', async function () {
        const stream = streamName();
        const other = streamName('other');
        const first = await store.append(stream, events(3), 'no_stream');
        const between = await store.append(other, events(1), 'no_stream');
        await store.append(stream, events(3), first.nextExpectedRevision);
        const all = await store.readStream(stream);
        const revisions = (events: RecordedEvent[]) => events.map((event) => event.revision);
        const backwards = { direction: 'backwards' } as const;
        // Before its own fifth event (a newest-first page's next_after): the older ones, or the next two.
        expect(revisions(await store.readStream(stream, { ...backwards, beforePosition: all[4]!.position }))).to.deep.equal([3, 2, 1, 0]);
        expect(revisions(await store.readStream(stream, { ...backwards, beforePosition: all[4]!.position, maxCount: 2 }))).to.deep.equal([3, 2]);
        expect(revisions(await store.readStream(stream, { ...backwards, beforePosition: all[4]!.position, fromRevision: 1 }))).to.deep.equal([1, 0]);
        // Before another stream's event, or past the stream's end: by position.
        expect(revisions(await store.readStream(stream, { ...backwards, beforePosition: between.position }))).to.deep.equal([2, 1, 0]);
        expect(revisions(await store.readStream(stream, { ...backwards, beforePosition: all[5]!.position + 1000n, maxCount: 2 }))).to.deep.equal([5, 4]);
        expect(await store.readStream(stream, { ...backwards, beforePosition: all[0]!.position })).to.deep.equal([]);
        expect(await store.readStream(streamName('missing'), { ...backwards, beforePosition: 1000n })).to.deep.equal([]);
        expect(await store.readStream(stream, { ...backwards, beforePosition: all[2]!.position })).to.deep.equal(all.slice(0, 2).reverse());
      });

      it('keeps streams apart', async function () {
        const first = streamName();
        const second = streamName();
        await store.append(first, events(2), 'no_stream');
        await store.append(second, events(3), 'no_stream');
        expect(await store.readStream(first)).to.have.length(2);
        expect((await store.readStream(second)).every((event) => event.stream === second)).to.equal(true);
      });
    });

    describe('readAll', function () {
      it('returns events in commit order, interleaved across streams, after a position', async function () {
        const head = await store.headPosition();
        const a = streamName('a');
        const b = streamName('b');
        const first = events(2);
        const second = events(1);
        const third = events(2);
        await store.append(a, first, 'no_stream');
        await store.append(b, second, 'no_stream');
        await store.append(a, third, 1);
        const read = await store.readAll({ after: head, limit: 100 });
        expect(read.map((event) => event.id)).to.deep.equal([...first, ...second, ...third].map((event) => event.id));
        expect(read.map((event) => `${event.stream === a ? 'a' : 'b'}${event.revision}`)).to.deep.equal(['a0', 'a1', 'b0', 'a2', 'a3']);
        for (let index = 1; index < read.length; index += 1) {
          expect(read[index]!.position > read[index - 1]!.position).to.equal(true);
        }
      });

      it('returns the same events, positions and contents as readStream', async function () {
        const head = await store.headPosition();
        const stream = streamName();
        await store.append(stream, events(3), 'no_stream');
        const fromLog = await store.readAll({ after: head, limit: 10 });
        const fromStream = await store.readStream(stream);
        expect(fromLog.map((event) => ({ ...event, recordedAt: event.recordedAt.toISOString() }))).to.deep.equal(
          fromStream.map((event) => ({ ...event, recordedAt: event.recordedAt.toISOString() })),
        );
      });

      it('readAllJson (where offered) returns the same page as readAll, data and metadata as their JSON text', async function () {
        if (!store.readAllJson) this.skip();
        const head = await store.headPosition();
        const prefixHere = `${prefix}json-${tag()}-`;
        await store.append(
          `${prefixHere}a`,
          [newEvent('JsonThing', { text: 'é "quoted"\n', n: 1.5, nested: { list: [1, null, true] }, ['__proto__']: 1 }), newEvent('Other')],
          'no_stream',
        );
        await store.append(`${prefixHere}b`, events(2), 'no_stream');
        for (const filter of [undefined, { streamPrefixes: [prefixHere] }, { types: ['JsonThing'] }]) {
          const parsed = await store.readAll({ after: head, limit: 3, filter });
          const json = await store.readAllJson!({ after: head, limit: 3, filter });
          expect(
            json.map(({ dataJson, metadataJson, recordedAtIso, ...rest }) => ({
              ...rest,
              data: JSON.parse(dataJson),
              metadata: JSON.parse(metadataJson),
              recordedAt: new Date(recordedAtIso),
            })),
          ).to.deep.equal(parsed);
          expect(json.map((event) => event.recordedAtIso)).to.deep.equal(parsed.map((event) => event.recordedAt.toISOString()));
          expect(json.map((event) => event.dataJson)).to.deep.equal(parsed.map((event) => JSON.stringify(event.data)));
        }
      });

      it('treats `after` as exclusive', async function () {
        const head = await store.headPosition();
        const stream = streamName();
        await store.append(stream, events(3), 'no_stream');
        const [first, second, third] = await store.readAll({ after: head, limit: 3 });
        const afterFirst = await store.readAll({ after: first!.position, limit: 10 });
        expect(afterFirst.map(summary)).to.deep.equal([second!, third!].map(summary));
        expect(await store.readAll({ after: third!.position, limit: 10 })).to.deep.equal([]);
      });

      it('limits a page and pages through without gaps or repeats', async function () {
        const head = await store.headPosition();
        const written: string[] = [];
        for (let index = 0; index < 4; index += 1) {
          const batch = events(3);
          written.push(...batch.map((event) => event.id));
          await store.append(streamName(), batch, 'no_stream');
        }
        const page = await store.readAll({ after: head, limit: 5 });
        expect(page).to.have.length(5);
        const all = await readEverythingAfter(store, head, 5);
        expect(all.map((event) => event.id)).to.deep.equal(written);
      });

      it('returns [] at the head of the log', async function () {
        await store.append(streamName(), [newEvent()], 'no_stream');
        const head = await store.headPosition();
        expect(await store.readAll({ after: head, limit: 10 })).to.deep.equal([]);
      });

      it('filters by stream prefix (prefix, not substring)', async function () {
        const head = await store.headPosition();
        const users = `${prefix}user-`;
        const codes = `${prefix}code-`;
        const wanted: string[] = [];
        const u1 = events(2);
        await store.append(`${users}${tag()}`, u1, 'no_stream');
        await store.append(`x${users}${tag()}`, events(2), 'no_stream');
        const c1 = events(1);
        await store.append(`${codes}${tag()}`, c1, 'no_stream');
        await store.append(`${prefix}other-${tag()}`, events(2), 'no_stream');
        const u2 = events(1);
        await store.append(`${users}${tag()}`, u2, 'no_stream');
        wanted.push(...u1.map((event) => event.id), ...u2.map((event) => event.id));

        const onlyUsers = await store.readAll({ after: head, limit: 100, filter: { streamPrefixes: [users] } });
        expect(onlyUsers.map((event) => event.id)).to.deep.equal(wanted);
        const usersAndCodes = await store.readAll({ after: head, limit: 100, filter: { streamPrefixes: [users, codes] } });
        expect(usersAndCodes.map((event) => event.id)).to.deep.equal([...u1, ...c1, ...u2].map((event) => event.id));
        const fromStart = await store.readAll({ after: null, limit: 100, filter: { streamPrefixes: [users] } });
        expect(fromStart.map((event) => event.id)).to.deep.equal(wanted);
      });

      it('filters by event type, and by prefix and type together', async function () {
        const head = await store.headPosition();
        const created = `Created${tag()}`;
        const removed = `Removed${tag()}`;
        const a = `${prefix}a-${tag()}`;
        const b = `${prefix}b-${tag()}`;
        const aCreated = newEvent(created);
        const aRemoved = newEvent(removed);
        const bCreated = newEvent(created);
        const bOther = newEvent(`${created}Later`);
        await store.append(a, [aCreated, aRemoved], 'no_stream');
        await store.append(b, [bCreated, bOther], 'no_stream');

        const createdOnly = await store.readAll({ after: head, limit: 100, filter: { types: [created] } });
        expect(createdOnly.map((event) => event.id)).to.deep.equal([aCreated.id, bCreated.id]);
        const both = await store.readAll({ after: head, limit: 100, filter: { types: [removed, created] } });
        expect(both.map((event) => event.id)).to.deep.equal([aCreated.id, aRemoved.id, bCreated.id]);
        const createdInB = await store.readAll({ after: head, limit: 100, filter: { streamPrefixes: [`${prefix}b-`], types: [created] } });
        expect(createdInB.map((event) => event.id)).to.deep.equal([bCreated.id]);
      });

      it('pages a filtered read with a limit and an exclusive `after`', async function () {
        const head = await store.headPosition();
        const wanted = `${prefix}want-`;
        const ids: string[] = [];
        for (let index = 0; index < 5; index += 1) {
          const batch = events(2);
          ids.push(...batch.map((event) => event.id));
          await store.append(`${wanted}${tag()}`, batch, 'no_stream');
          await store.append(`${prefix}skip-${tag()}`, events(3), 'no_stream');
        }
        const firstPage = await store.readAll({ after: head, limit: 3, filter: { streamPrefixes: [wanted] } });
        expect(firstPage.map((event) => event.id)).to.deep.equal(ids.slice(0, 3));
        const all = await readEverythingAfter(store, head, 3, { streamPrefixes: [wanted] });
        expect(all.map((event) => event.id)).to.deep.equal(ids);
      });
    });

    describe("readPage (a follower's page)", function () {
      /** Appends `counted, released, counted, released, released` to five streams: their positions. */
      async function fiveEvents(counted: string, released: string): Promise<bigint[]> {
        const positions: bigint[] = [];
        for (const type of [counted, released, counted, released, released])
          positions.push((await store.append(streamName(), [newEvent(type)], 'no_stream')).position);
        return positions;
      }

      it('a short page holds only the asked types and was read through the head, past the others after it', async function () {
        const before = await store.headPosition();
        const [counted, released] = [`Counted${tag()}`, `Released${tag()}`];
        const positions = await fiveEvents(counted, released);
        const page = await store.readPage({ after: before, limit: 10, types: [counted] });
        expect(page.events.map((event) => event.position)).to.deep.equal([positions[0], positions[2]]);
        expect(page.events.map((event) => event.type)).to.deep.equal([counted, counted]);
        expect(page.through).to.equal(positions[4]);
        expect(page.more).to.equal(false);
      });

      it('a full page was read through its last event only; the next one goes on from there', async function () {
        const before = await store.headPosition();
        const [counted, released] = [`Counted${tag()}`, `Released${tag()}`];
        const positions = await fiveEvents(counted, released);
        const page = await store.readPage({ after: before, limit: 2, types: [released] });
        expect(page.events.map((event) => event.position)).to.deep.equal([positions[1], positions[3]]);
        expect(page.through).to.equal(positions[3]);
        expect(page.more, 'a full page: more may be waiting').to.equal(true);
        const next = await store.readPage({ after: page.through, limit: 2, types: [released] });
        expect(next.events.map((event) => event.position)).to.deep.equal([positions[4]]);
        expect(next.through).to.equal(positions[4]);
        expect(next.more).to.equal(false);
      });

      it('no types reads nothing and moves through the head; a checkpoint at the head stays there', async function () {
        const [counted, released] = [`Counted${tag()}`, `Released${tag()}`];
        const positions = await fiveEvents(counted, released);
        const atHead = { events: [], through: positions[4], more: false };
        expect(await store.readPage({ after: positions[0]!, limit: 10, types: [] })).to.deep.equal(atHead);
        expect(await store.readPage({ after: positions[4]!, limit: 10, types: [counted] })).to.deep.equal(atHead);
        expect(await store.readPage({ after: positions[2]!, limit: 10, types: [counted] })).to.deep.equal(atHead);
      });

      it('paged from a checkpoint to the head, yields exactly the events of its types, in order, each page within what it read', async function () {
        const before = await store.headPosition();
        const [wanted, other] = [`Wanted${tag()}`, `Other${tag()}`];
        const expected: string[] = [];
        for (let round = 0; round < 6; round += 1) {
          const batch = [...events(round % 3, wanted), ...events(4, other)];
          expected.push(...batch.filter((event) => event.type === wanted).map((event) => event.id));
          await store.append(streamName(), batch, 'no_stream');
        }
        const head = await store.headPosition();
        const seen: string[] = [];
        let cursor = before;
        for (let pages = 0, more = true; more; pages += 1) {
          expect(pages, 'pages never reach the head').to.be.below(100);
          const page = await store.readPage({ after: cursor, limit: 2, types: [wanted] });
          expect(page.through! > (cursor ?? -1n), 'a page moves forward').to.equal(true);
          expect(page.through! <= head!).to.equal(true);
          for (const event of page.events) expect(event.position > (cursor ?? -1n) && event.position <= page.through!).to.equal(true);
          seen.push(...page.events.map((event) => event.id));
          cursor = page.through;
          more = page.more;
        }
        expect(cursor, 'no more once the head is reached').to.equal(head);
        expect(seen).to.deep.equal(expected);
      });

      if (options.freshStorePerTest) {
        it('on an empty log reads nothing and stays where it was', async function () {
          expect(await store.readPage({ after: null, limit: 10, types: ['Anything'] })).to.deep.equal({ events: [], through: null, more: false });
        });
      }
    });

    describe('headPosition', function () {
      if (options.freshStorePerTest) {
        it('is null while the log is empty', async function () {
          expect(await store.headPosition()).to.equal(null);
          expect(await store.readAll({ after: null, limit: 10 })).to.deep.equal([]);
        });
      }

      it('is the position of the last appended event', async function () {
        await store.append(streamName(), events(2), 'no_stream');
        const last = await store.append(streamName(), events(3), 'no_stream');
        expect(await store.headPosition()).to.equal(last.position);
      });

      it('does not move on a conflict or an idempotent repeat', async function () {
        const stream = streamName();
        const batch = [newEvent()];
        await store.append(stream, batch, 'no_stream');
        const head = await store.headPosition();
        await appendFails(store, stream, 'no_stream');
        await store.append(stream, batch, 'no_stream');
        expect(await store.headPosition()).to.equal(head);
      });
    });

    describe('watch', function () {
      it('calls the listener after an append', async function () {
        let stop: () => void = () => {};
        const called = new Promise<void>((resolve) => {
          stop = store.watch(() => resolve());
        });
        await store.append(streamName(), [newEvent()], 'no_stream');
        await called;
        stop();
      });

      it('calls every listener, and each can unsubscribe', async function () {
        const stops: (() => void)[] = [];
        const calls = [0, 1].map(
          () =>
            new Promise<void>((resolve) => {
              stops.push(store.watch(() => resolve()));
            }),
        );
        await store.append(streamName(), [newEvent()], 'no_stream');
        await Promise.all(calls);
        for (const stop of stops) stop();
        // Unsubscribing twice is harmless.
        for (const stop of stops) stop();
      });
    });
  });
}
