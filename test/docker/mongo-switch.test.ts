import { expect } from 'chai';
import { MongoClient } from 'mongodb';
import { MongoReadStore } from '../../src/adapters/mongodb/mongo-read-store.js';
import { CheckpointMovedError } from '../../src/ports/read-store.js';
import { rejection } from '../support/rejection.js';
import { backendContainers } from './containers.setup.js';

// MongoDB switches a rebuilt read model in collection by collection (renames cannot run in a
// transaction). Both checkpoints are marked `switching` first: no live commit lands meanwhile,
// and a switch interrupted half-way is finished by the next swapIn (the next replay run).
describe('MongoDB read store: switching a rebuilt read model in (testcontainers)', () => {
  const tag = `${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  const [people, pets] = [`people_${tag}`, `pets_${tag}`];
  const projector = `switch_${tag}`;
  const from = `replay:${projector}`;
  const collections: [string, string][] = [
    [people, `${people}__rebuild`],
    [pets, `${pets}__rebuild`],
  ];

  it('refuses live commits while switching, and a second swapIn finishes a switch interrupted after its first rename', async () => {
    const { mongoUrl } = backendContainers();
    const store = await MongoReadStore.connect(mongoUrl, 'switch_tests');
    const client = new MongoClient(mongoUrl);
    try {
      await store.commitBatches([
        { projector, version: 1, position: 5n, after: null, changes: [{ op: 'put', collection: people, id: 'a', doc: { n: 'live' } }] },
      ]);
      await store.commitBatches([
        {
          projector: from,
          version: 2,
          position: 9n,
          after: null,
          changes: [
            { op: 'put', collection: `${people}__rebuild`, id: 'a', doc: { n: 'rebuilt' } },
            { op: 'put', collection: `${pets}__rebuild`, id: 'p', doc: { n: 'rebuilt' } },
          ],
        },
      ]);
      // What an interrupted swapIn leaves: both checkpoints marked, the first collection renamed.
      const db = client.db('switch_tests');
      await db.collection('checkpoints').updateMany({ _id: { $in: [projector, from] } } as never, { $set: { switching: true } });
      await db.renameCollection(`rm_${people}__rebuild`, `rm_${people}`, { dropTarget: true });

      expect(await store.checkpoint(from)).to.deep.include({ position: 9n, version: 2, switching: true });
      const live = await rejection(() =>
        store.commitBatches([{ projector, version: 1, position: 6n, after: 5n, changes: [{ op: 'put', collection: people, id: 'a', doc: { n: 'late' } }] }]),
      );
      expect(live).to.be.instanceOf(CheckpointMovedError);

      await store.swapIn(projector, from, 2, collections);
      expect(await store.get(people, 'a')).to.deep.equal({ n: 'rebuilt' });
      expect(await store.get(pets, 'p')).to.deep.equal({ n: 'rebuilt' });
      expect(await store.checkpoint(projector)).to.deep.equal({ projector, position: 9n, version: 2 });
      expect(await store.checkpoint(from)).to.deep.equal({ projector: from, position: null, version: 0 });
      await store.commitBatches([
        { projector, version: 2, position: 10n, after: 9n, changes: [{ op: 'put', collection: people, id: 'a', doc: { n: 'next' } }] },
      ]);
      expect(await store.get(people, 'a')).to.deep.equal({ n: 'next' });
    } finally {
      await client.close();
      await store.close();
    }
  });
});
