import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { CheckpointMovedError, type DocumentChange, type ProjectorBatch, type ReadStore } from '../../src/ports/read-store.js';
import type { ContractOptions, OpenContractSubject } from './contract-subject.js';
import { rejection } from '../support/rejection.js';

function tag(): string {
  return randomUUID().replace(/-/g, '').slice(0, 10);
}

type Doc = Record<string, unknown>;

function put(collection: string, id: string, doc: Doc): DocumentChange {
  return { op: 'put', collection, id, doc };
}

function remove(collection: string, id: string): DocumentChange {
  return { op: 'delete', collection, id };
}

/** A projector's batch continuing from checkpoint `after` up to `position`. */
function batch(projector: string, after: bigint | null, position: bigint, changes: DocumentChange[], version = 1): ProjectorBatch {
  return { projector, version, changes, position, after };
}

const PEOPLE: [string, Doc][] = [
  ['p1', { name: 'Ada', team: 'red', age: 36, active: true, joined_at: '2026-01-01T00:00:00.000Z', manager: null }],
  ['p2', { name: 'Bob', team: 'blue', age: 25, active: false, joined_at: '2026-01-03T00:00:00.000Z', manager: 'p1' }],
  ['p3', { name: 'Cy', team: 'red', age: 41, active: false, joined_at: '2026-01-02T00:00:00.000Z', manager: 'p1' }],
  ['p4', { name: 'Di', team: 'red', age: 25, active: true, joined_at: '2026-01-05T00:00:00.000Z' }],
  ['p5', { name: 'Ed', team: 'blue', age: 52, active: true, joined_at: '2026-01-04T00:00:00.000Z', manager: null }],
];

/**
 * The ReadStore port's contract, run against every adapter. Collections and projectors get
 * unique names per test, so adapters that share one server between tests stay isolated.
 */
export function readStoreContract(name: string, open: OpenContractSubject<ReadStore>, _options: ContractOptions): void {
  describe(`ReadStore contract: ${name}`, function () {
    let store: ReadStore;
    let dispose: () => Promise<void>;
    let people: string;
    let projector: string;

    beforeEach(async function () {
      const subject = await open();
      store = subject.store;
      dispose = subject.dispose;
      people = `people_${tag()}`;
      projector = `projector_${tag()}`;
    });

    afterEach(async function () {
      await dispose();
    });

    async function seedPeople(): Promise<void> {
      await store.ensureIndexes(people, ['team', 'age', 'active', 'joined_at']);
      await store.commitBatches([
        batch(
          projector,
          null,
          10n,
          PEOPLE.map(([id, doc]) => put(people, id, doc)),
        ),
      ]);
    }

    const ids = (docs: Doc[]) => docs.map((doc) => doc.name);

    describe('get and getMany', function () {
      it('returns null for a missing document and an empty map for missing ids', async function () {
        expect(await store.get(people, 'nobody')).to.equal(null);
        expect((await store.getMany(people, ['a', 'b'])).size).to.equal(0);
        expect((await store.getMany(people, [])).size).to.equal(0);
      });

      it('returns documents exactly as written (nested values, arrays, booleans, null, unicode)', async function () {
        const doc = {
          name: 'Zoë ✓',
          nested: { list: [1, 'two', null, false, { deep: true }], empty: {} },
          count: 0,
          ratio: 0.25,
          flag: false,
          nothing: null,
          '$odd.key': 'kept',
        };
        await store.commitBatches([batch(projector, null, 1n, [put(people, 'z', doc)])]);
        expect(await store.get(people, 'z')).to.deep.equal(doc);
      });

      it('getMany returns only the documents found, keyed by id (repeats are harmless)', async function () {
        await seedPeople();
        const found = await store.getMany<Doc>(people, ['p2', 'missing', 'p4', 'p2']);
        expect([...found.keys()].sort()).to.deep.equal(['p2', 'p4']);
        expect(found.get('p4')!.name).to.equal('Di');
      });

      it('keeps collections apart', async function () {
        const other = `other_${tag()}`;
        await store.commitBatches([batch(projector, null, 1n, [put(people, 'x', { side: 'people' }), put(other, 'x', { side: 'other' })])]);
        expect(await store.get(people, 'x')).to.deep.equal({ side: 'people' });
        expect(await store.get(other, 'x')).to.deep.equal({ side: 'other' });
      });
    });

    describe('find and count', function () {
      beforeEach(seedPeople);

      it('without a query returns every document in id order', async function () {
        expect(ids(await store.find(people))).to.deep.equal(['Ada', 'Bob', 'Cy', 'Di', 'Ed']);
      });

      it('matches equality on strings and numbers, several fields together', async function () {
        expect(ids(await store.find(people, { where: { team: 'red' } }))).to.deep.equal(['Ada', 'Cy', 'Di']);
        expect(ids(await store.find(people, { where: { age: 25 } }))).to.deep.equal(['Bob', 'Di']);
        expect(ids(await store.find(people, { where: { team: 'red', age: 25 } }))).to.deep.equal(['Di']);
        expect(await store.find(people, { where: { team: 'green' } })).to.deep.equal([]);
      });

      it('matches booleans', async function () {
        expect(ids(await store.find(people, { where: { active: true } }))).to.deep.equal(['Ada', 'Di', 'Ed']);
        expect(ids(await store.find(people, { where: { active: false } }))).to.deep.equal(['Bob', 'Cy']);
      });

      it('matches null against null and missing fields', async function () {
        expect(ids(await store.find(people, { where: { manager: null } }))).to.deep.equal(['Ada', 'Di', 'Ed']);
        expect(ids(await store.find(people, { where: { manager: 'p1' } }))).to.deep.equal(['Bob', 'Cy']);
      });

      it('filters a range with atMost (ISO dates as strings, numbers)', async function () {
        const byDate = await store.find(people, { atMost: { field: 'joined_at', value: '2026-01-03T00:00:00.000Z' } });
        expect(ids(byDate)).to.deep.equal(['Ada', 'Bob', 'Cy']);
        expect(ids(await store.find(people, { atMost: { field: 'age', value: 36 } }))).to.deep.equal(['Ada', 'Bob', 'Di']);
        expect(ids(await store.find(people, { where: { team: 'red' }, atMost: { field: 'age', value: 36 } }))).to.deep.equal(['Ada', 'Di']);
      });

      it('filters a range with atLeast, alone or with atMost on the same field (both ends included)', async function () {
        const since = await store.find(people, { atLeast: { field: 'joined_at', value: '2026-01-03T00:00:00.000Z' } });
        expect(ids(since)).to.deep.equal(['Bob', 'Di', 'Ed']);
        expect(ids(await store.find(people, { atLeast: { field: 'age', value: 30 }, atMost: { field: 'age', value: 41 } }))).to.deep.equal(['Ada', 'Cy']);
        expect(
          ids(await store.find(people, { where: { team: 'blue' }, atLeast: { field: 'age', value: 25 }, atMost: { field: 'age', value: 25 } })),
        ).to.deep.equal(['Bob']);
      });

      it('orders by a field, ties broken by id', async function () {
        const ascending = await store.find(people, { orderBy: { field: 'joined_at', direction: 'asc' } });
        expect(ids(ascending)).to.deep.equal(['Ada', 'Cy', 'Bob', 'Ed', 'Di']);
        const descending = await store.find(people, { orderBy: { field: 'joined_at', direction: 'desc' } });
        expect(ids(descending)).to.deep.equal(['Di', 'Ed', 'Bob', 'Cy', 'Ada']);
        const byAge = await store.find(people, { orderBy: { field: 'age', direction: 'asc' } });
        expect(ids(byAge)).to.deep.equal(['Bob', 'Di', 'Ada', 'Cy', 'Ed']);
      });

      it('null and missing fields sort first going up, last going down, and fall outside every range', async function () {
        expect(ids(await store.find(people, { orderBy: { field: 'manager', direction: 'asc' } }))).to.deep.equal(['Ada', 'Di', 'Ed', 'Bob', 'Cy']);
        expect(ids(await store.find(people, { orderBy: { field: 'manager', direction: 'desc' } }))).to.deep.equal(['Bob', 'Cy', 'Ada', 'Di', 'Ed']);
        expect(ids(await store.find(people, { atMost: { field: 'manager', value: 'p9' } }))).to.deep.equal(['Bob', 'Cy']);
        expect(ids(await store.find(people, { atLeast: { field: 'manager', value: '' } }))).to.deep.equal(['Bob', 'Cy']);
      });

      it('limits results, also with a range and an order', async function () {
        expect(ids(await store.find(people, { limit: 2 }))).to.deep.equal(['Ada', 'Bob']);
        const due = await store.find(people, {
          atMost: { field: 'joined_at', value: '2026-01-04T00:00:00.000Z' },
          orderBy: { field: 'joined_at', direction: 'asc' },
          limit: 2,
        });
        expect(ids(due)).to.deep.equal(['Ada', 'Cy']);
      });

      it('pages by id with afterId', async function () {
        const first = await store.find(people, { limit: 2 });
        const second = await store.find(people, { afterId: 'p2', limit: 2 });
        const third = await store.find(people, { afterId: 'p4', limit: 2 });
        expect(ids([...first, ...second, ...third])).to.deep.equal(['Ada', 'Bob', 'Cy', 'Di', 'Ed']);
        expect(await store.find(people, { afterId: 'p5' })).to.deep.equal([]);
        expect(ids(await store.find(people, { where: { team: 'red' }, afterId: 'p1' }))).to.deep.equal(['Cy', 'Di']);
      });

      it('counts all documents or those matching equality', async function () {
        expect(await store.count(people)).to.equal(5);
        expect(await store.count(people, { team: 'blue' })).to.equal(2);
        expect(await store.count(people, { active: true, team: 'red' })).to.equal(2);
        expect(await store.count(people, { manager: null })).to.equal(3);
        expect(await store.count(`empty_${tag()}`)).to.equal(0);
      });
    });

    describe('commitBatches and checkpoints', function () {
      it('a projector without a checkpoint starts from nothing at version 0', async function () {
        expect(await store.checkpoint(projector)).to.deep.equal({ projector, position: null, version: 0 });
      });

      it('stores documents together with the checkpoint and its version', async function () {
        await store.commitBatches([batch(projector, null, 7n, [put(people, 'a', { n: 1 })], 3)]);
        expect(await store.checkpoint(projector)).to.deep.equal({ projector, position: 7n, version: 3 });
        expect(await store.get(people, 'a')).to.deep.equal({ n: 1 });
      });

      it('a batch without changes still advances the checkpoint', async function () {
        await store.commitBatches([batch(projector, null, 5n, [])]);
        expect((await store.checkpoint(projector)).position).to.equal(5n);
      });

      it('applies the batches of several projectors in one call', async function () {
        const other = `projector_${tag()}`;
        const things = `things_${tag()}`;
        await store.commitBatches([batch(projector, null, 4n, [put(people, 'a', { n: 1 })]), batch(other, null, 6n, [put(things, 't', { kind: 'thing' })], 2)]);
        expect(await store.checkpoint(projector)).to.deep.equal({ projector, position: 4n, version: 1 });
        expect(await store.checkpoint(other)).to.deep.equal({ projector: other, position: 6n, version: 2 });
        expect(await store.get(things, 't')).to.deep.equal({ kind: 'thing' });
      });

      it('later batches replace documents, delete them and move the checkpoint on', async function () {
        await store.commitBatches([batch(projector, null, 1n, [put(people, 'a', { n: 1 }), put(people, 'b', { n: 2 })])]);
        await store.commitBatches([batch(projector, 1n, 2n, [put(people, 'a', { n: 10 }), remove(people, 'b')])]);
        expect(await store.get(people, 'a')).to.deep.equal({ n: 10 });
        expect(await store.get(people, 'b')).to.equal(null);
        expect(await store.count(people)).to.equal(1);
        expect((await store.checkpoint(projector)).position).to.equal(2n);
      });

      it('changes to one document within a batch apply in order: the last one stands', async function () {
        await store.commitBatches([batch(projector, null, 1n, [put(people, 'a', { n: 1 }), put(people, 'a', { n: 2 }), put(people, 'b', { n: 1 })])]);
        await store.commitBatches([
          batch(projector, 1n, 2n, [remove(people, 'b'), put(people, 'b', { n: 3 }), put(people, 'a', { n: 4 }), remove(people, 'a')]),
        ]);
        expect(await store.get(people, 'a')).to.equal(null);
        expect(await store.get(people, 'b')).to.deep.equal({ n: 3 });
        expect((await store.checkpoint(projector)).position).to.equal(2n);
      });

      it('deleting a document that does not exist is harmless', async function () {
        await store.commitBatches([batch(projector, null, 3n, [remove(people, 'ghost')])]);
        expect(await store.get(people, 'ghost')).to.equal(null);
        expect((await store.checkpoint(projector)).position).to.equal(3n);
      });

      it('refuses a batch that does not continue from the stored checkpoint, and lands nothing of the commit', async function () {
        await store.commitBatches([batch(projector, null, 8n, [put(people, 'a', { n: 1 })])]);
        const other = `projector_${tag()}`;
        const error = await rejection(() =>
          store.commitBatches([
            batch(other, null, 9n, [put(people, 'other', { n: 3 })]),
            // Stale: another process (or a replay) already moved this projector to 8.
            batch(projector, 4n, 9n, [put(people, 'a', { n: 2 }), put(people, 'b', { n: 2 })]),
          ]),
        );
        expect(error).to.be.instanceOf(CheckpointMovedError);
        expect((error as CheckpointMovedError).projector).to.equal(projector);
        expect(await store.find(people)).to.deep.equal([{ n: 1 }]);
        expect(await store.checkpoint(projector)).to.deep.equal({ projector, position: 8n, version: 1 });
        expect((await store.checkpoint(other)).position).to.equal(null);
      });

      it('several projectors moving alike advance together; if one of them moved meanwhile, it is named and nothing lands', async function () {
        const names = [projector, `projector_${tag()}`, `projector_${tag()}`];
        await store.commitBatches(names.map((name) => batch(name, null, 5n, [])));
        await store.commitBatches(names.map((name, index) => batch(name, 5n, 7n, [put(people, `p${index}`, { n: index })])));
        for (const name of names) expect((await store.checkpoint(name)).position).to.equal(7n);
        // Another process moved the second one on to 9.
        await store.commitBatches([batch(names[1]!, 7n, 9n, [])]);
        const error = await rejection(() => store.commitBatches(names.map((name) => batch(name, 7n, 10n, [put(people, 'late', { n: 99 })]))));
        expect(error).to.be.instanceOf(CheckpointMovedError);
        expect((error as CheckpointMovedError).projector).to.equal(names[1]);
        expect(await store.find(people)).to.deep.equal([{ n: 0 }, { n: 1 }, { n: 2 }]);
        expect((await store.checkpoint(names[0]!)).position).to.equal(7n);
        expect((await store.checkpoint(names[2]!)).position).to.equal(7n);
      });

      it('refuses a batch that continues the position of a checkpoint of another version (a replay switched a read model in), and lands nothing', async function () {
        const rebuilt = `${people}__rebuild`;
        await store.commitBatches([batch(projector, null, 8n, [put(people, 'a', { n: 1 })])]);
        // A replay of version 2 reached the same position and was switched in.
        await store.commitBatches([batch(`replay:${projector}`, null, 8n, [put(rebuilt, 'a', { n: 1, shape: 2 })], 2)]);
        await store.swapIn(projector, `replay:${projector}`, 2, [[people, rebuilt]]);
        const error = await rejection(() => store.commitBatches([batch(projector, 8n, 9n, [put(people, 'a', { n: 2 })])]));
        expect(error).to.be.instanceOf(CheckpointMovedError);
        expect(await store.get(people, 'a')).to.deep.equal({ n: 1, shape: 2 });
        expect(await store.checkpoint(projector)).to.deep.equal({ projector, position: 8n, version: 2 });
        // Continuing with the stored version lands.
        await store.commitBatches([batch(projector, 8n, 9n, [put(people, 'a', { n: 2, shape: 2 })], 2)]);
        expect(await store.checkpoint(projector)).to.deep.equal({ projector, position: 9n, version: 2 });
      });

      it('committing the same batch twice (a replay after a crash) is refused the second time', async function () {
        const first = batch(projector, null, 8n, [put(people, 'a', { n: 1 }), put(people, 'b', { n: 2 })]);
        await store.commitBatches([first]);
        expect(await rejection(() => store.commitBatches([first]))).to.be.instanceOf(CheckpointMovedError);
        expect(await store.find(people)).to.deep.equal([{ n: 1 }, { n: 2 }]);
        expect(await store.checkpoint(projector)).to.deep.equal({ projector, position: 8n, version: 1 });
      });

      it('after a reset the projector starts again from no checkpoint', async function () {
        await store.commitBatches([batch(projector, null, 3n, [put(people, 'a', { n: 1 })])]);
        expect(await rejection(() => store.commitBatches([batch(projector, null, 5n, [])]))).to.be.instanceOf(CheckpointMovedError);
        await store.reset(projector, [people]);
        await store.commitBatches([batch(projector, null, 5n, [put(people, 'a', { n: 5 })])]);
        expect(await store.get(people, 'a')).to.deep.equal({ n: 5 });
      });

      it('a batch with an invalid change does not land half-way', async function () {
        const circular: Doc = { name: 'loop' };
        circular.self = circular;
        await store.commitBatches([batch(projector, null, 1n, [put(people, 'kept', { n: 0 })])]);
        const other = `projector_${tag()}`;
        const error = await rejection(() =>
          store.commitBatches([
            batch(other, null, 2n, [put(people, 'earlier', { n: 1 })]),
            batch(projector, 1n, 3n, [put(people, 'valid', { n: 2 }), put(people, 'broken', circular), remove(people, 'kept')]),
          ]),
        );
        expect(error).to.be.instanceOf(Error);
        // The failing batch: neither its documents nor its checkpoint.
        expect(await store.get(people, 'valid')).to.equal(null);
        expect(await store.get(people, 'broken')).to.equal(null);
        expect(await store.get(people, 'kept')).to.deep.equal({ n: 0 });
        expect((await store.checkpoint(projector)).position).to.equal(1n);
        // An earlier batch of the same call landed completely or not at all.
        const earlierCheckpoint = (await store.checkpoint(other)).position;
        const earlierDoc = await store.get(people, 'earlier');
        expect(earlierCheckpoint === null ? earlierDoc === null : earlierCheckpoint === 2n && earlierDoc !== null).to.equal(true);
      });

      it('keeps checkpoint positions exact beyond 2^53', async function () {
        const large = 2n ** 62n + 1n;
        await store.commitBatches([batch(projector, null, large, [put(people, 'a', { n: 1 })])]);
        expect((await store.checkpoint(projector)).position).to.equal(large);
        await store.commitBatches([batch(projector, large, large + 2n, [put(people, 'a', { n: 2 })])]);
        expect((await store.checkpoint(projector)).position).to.equal(large + 2n);
        expect(await store.get(people, 'a')).to.deep.equal({ n: 2 });
      });
    });

    describe('collections created by a commit that fails', function () {
      it('leave nothing behind: reads of them still answer empty', async function () {
        const fresh = `fresh_${tag()}`;
        await store.commitBatches([batch(projector, null, 5n, [put(people, 'a', { n: 1 })])]);
        // The second batch does not continue from its checkpoint: the whole commit is refused.
        const error = await rejection(() =>
          store.commitBatches([batch(`${projector}_b`, null, 3n, [put(fresh, 'x', { n: 1 })]), batch(projector, 4n, 6n, [])]),
        );
        expect(error).to.be.instanceOf(CheckpointMovedError);
        expect(await store.get(fresh, 'x')).to.equal(null);
        expect(await store.find(fresh)).to.deep.equal([]);
        expect(await store.count(fresh)).to.equal(0);
        await store.commitBatches([batch(`${projector}_b`, null, 3n, [put(fresh, 'x', { n: 2 })])]);
        expect(await store.get(fresh, 'x')).to.deep.equal({ n: 2 });
      });
    });

    describe('reset', function () {
      it('drops the documents of the given collections and the checkpoint, nothing else', async function () {
        const other = `other_${tag()}`;
        const otherProjector = `projector_${tag()}`;
        await store.commitBatches([
          batch(projector, null, 5n, [put(people, 'a', { n: 1 }), put(people, 'b', { n: 2 })]),
          batch(otherProjector, null, 5n, [put(other, 'x', { n: 3 })]),
        ]);
        await store.reset(projector, [people]);
        expect(await store.count(people)).to.equal(0);
        expect(await store.checkpoint(projector)).to.deep.equal({ projector, position: null, version: 0 });
        expect(await store.get(other, 'x')).to.deep.equal({ n: 3 });
        expect((await store.checkpoint(otherProjector)).position).to.equal(5n);
      });

      it('lets a projector rebuild from the beginning after a reset', async function () {
        await store.commitBatches([batch(projector, null, 50n, [put(people, 'a', { n: 1 })])]);
        await store.reset(projector, [people]);
        await store.commitBatches([batch(projector, null, 2n, [put(people, 'a', { n: 2 })], 2)]);
        expect(await store.get(people, 'a')).to.deep.equal({ n: 2 });
        expect(await store.checkpoint(projector)).to.deep.equal({ projector, position: 2n, version: 2 });
      });
    });

    describe('swapIn (blue/green rebuild)', function () {
      it('replaces the live documents with the rebuilt ones and hands over the checkpoint', async function () {
        const rebuilt = `people_next_${tag()}`;
        const rebuilder = `${projector}_next`;
        await store.ensureIndexes(people, ['team']);
        await store.commitBatches([batch(projector, null, 5n, [put(people, 'old', { team: 'red' }), put(people, 'both', { v: 1 })])]);
        await store.commitBatches([batch(rebuilder, null, 9n, [put(rebuilt, 'both', { v: 2, team: 'blue' }), put(rebuilt, 'new', { team: 'blue' })], 2)]);
        await store.swapIn(projector, rebuilder, 2, [[people, rebuilt]]);
        expect(await store.find(people)).to.deep.equal([{ v: 2, team: 'blue' }, { team: 'blue' }]);
        expect(await store.count(people, { team: 'blue' })).to.equal(2);
        expect(await store.count(rebuilt)).to.equal(0);
        expect(await store.checkpoint(projector)).to.deep.equal({ projector, position: 9n, version: 2 });
        expect(await store.checkpoint(rebuilder)).to.deep.equal({ projector: rebuilder, position: null, version: 0 });
        // The projector carries on from the handed-over checkpoint.
        await store.commitBatches([batch(projector, 9n, 10n, [put(people, 'later', { team: 'red' })], 2)]);
        expect(await store.count(people)).to.equal(3);
      });

      it('keeps the live indexes and leaves the rebuilt collection empty and reusable', async function () {
        const rebuilt = `people_next_${tag()}`;
        const rebuilder = `${projector}_next`;
        await store.ensureIndexes(people, [['team', 'age']]);
        await store.commitBatches([batch(projector, null, 5n, [put(people, 'old', { team: 'red', age: 1 })])]);
        await store.commitBatches([
          batch(
            rebuilder,
            null,
            9n,
            PEOPLE.map(([id, doc]) => put(rebuilt, id, doc)),
          ),
        ]);
        await store.swapIn(projector, rebuilder, 2, [[people, rebuilt]]);
        const reds = await store.find(people, { where: { team: 'red' }, orderBy: { field: 'age', direction: 'desc' }, limit: 2 });
        expect(ids(reds)).to.deep.equal(['Cy', 'Ada']);
        expect(await store.count(rebuilt)).to.equal(0);
        await store.commitBatches([batch(rebuilder, null, 12n, [put(rebuilt, 'again', { n: 1 })])]);
        expect(await store.get(rebuilt, 'again')).to.deep.equal({ n: 1 });
        expect(await store.get(people, 'again')).to.equal(null);
      });

      it('an empty rebuild empties the live collection', async function () {
        const rebuilder = `${projector}_next`;
        await store.commitBatches([batch(projector, null, 5n, [put(people, 'old', { n: 1 })])]);
        await store.commitBatches([batch(rebuilder, null, 6n, [])]);
        await store.swapIn(projector, rebuilder, 3, [[people, `people_next_${tag()}`]]);
        expect(await store.count(people)).to.equal(0);
        expect(await store.checkpoint(projector)).to.deep.equal({ projector, position: 6n, version: 3 });
      });

      it('refuses to swap in a rebuild that has no checkpoint', async function () {
        await store.commitBatches([batch(projector, null, 5n, [put(people, 'old', { n: 1 })])]);
        expect(await rejection(() => store.swapIn(projector, `missing_${tag()}`, 2, [[people, `people_next_${tag()}`]]))).to.be.instanceOf(Error);
        expect(await store.get(people, 'old')).to.deep.equal({ n: 1 });
        expect((await store.checkpoint(projector)).position).to.equal(5n);
      });
    });

    describe('putAux', function () {
      it('stores and replaces side-channel documents, readable with get', async function () {
        const aux = `aux_${tag()}`;
        await store.putAux(aux, 'user-1', { version: 1, state: { credits: 5 } });
        expect(await store.get(aux, 'user-1')).to.deep.equal({ version: 1, state: { credits: 5 } });
        await store.putAux(aux, 'user-1', { version: 2, state: { credits: 3 } });
        expect(await store.get(aux, 'user-1')).to.deep.equal({ version: 2, state: { credits: 3 } });
      });

      it('lists its documents with find, like any collection (the held projections are read so)', async function () {
        const aux = `aux_${tag()}`;
        await store.putAux(aux, 'a', { projection: 'a', failure: null });
        await store.putAux(aux, 'b', { projection: 'b', failure: { position: '7' } });
        const found = await store.find<{ projection: string }>(aux);
        expect(found.sort((x, y) => x.projection.localeCompare(y.projection))).to.deep.equal([
          { projection: 'a', failure: null },
          { projection: 'b', failure: { position: '7' } },
        ]);
        expect(await store.find(`aux_${tag()}`), 'a collection never written').to.deep.equal([]);
      });

      it('is not held back by projector checkpoints', async function () {
        const aux = `aux_${tag()}`;
        await store.commitBatches([batch(projector, null, 100n, [put(aux, 'k', { from: 'batch' })])]);
        await store.putAux(aux, 'k', { from: 'aux' });
        expect(await store.get(aux, 'k')).to.deep.equal({ from: 'aux' });
        expect((await store.checkpoint(projector)).position).to.equal(100n);
      });
    });

    describe('ensureIndexes', function () {
      it('is idempotent and queries keep working', async function () {
        await store.ensureIndexes(people, ['team', 'age']);
        await store.ensureIndexes(people, ['team', 'age']);
        await store.ensureIndexes(people, ['age', 'joined_at']);
        await store.ensureIndexes(people, []);
        await seedPeople();
        expect(ids(await store.find(people, { where: { team: 'blue' }, orderBy: { field: 'age', direction: 'desc' } }))).to.deep.equal(['Ed', 'Bob']);
      });
    });

    describe('names', function () {
      it('every backend refuses the same collection and field names (a name one accepts, all accept)', async function () {
        for (const collection of [`${people}-x`, `${people}.x`, '', `${people} x`]) {
          expect(await rejection(() => store.get(collection, 'p1')), collection).to.be.instanceOf(Error);
          expect(await rejection(() => store.commitBatches([batch(projector, null, 1n, [put(collection, 'p1', { n: 1 })])])), collection).to.be.instanceOf(
            Error,
          );
        }
        for (const field of ['a.b', '$where', '1a', 'a-b', '']) {
          expect(await rejection(() => store.find(people, { where: { [field]: 1 } })), field).to.be.instanceOf(Error);
          expect(await rejection(() => store.ensureIndexes(people, [field])), field).to.be.instanceOf(Error);
        }
        expect((await store.checkpoint(projector)).position).to.equal(null);
      });
    });
  });
}
