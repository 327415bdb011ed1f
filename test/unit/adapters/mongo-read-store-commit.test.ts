import { expect } from 'chai';
import { MongoBulkWriteError, MongoServerError } from 'mongodb';
import { MongoReadStore } from '../../../src/adapters/mongodb/mongo-read-store.js';

type Stored = { _id: string; position?: string | null; version?: number; switching?: true; doc?: unknown };
type Write = {
  replaceOne?: { filter: { _id: string; position: { $lt: string } }; replacement: Stored };
  deleteOne?: { filter: { _id: string; position: { $lt: string } } };
};

/**
 * A replica set's primary as a commit meets it, per the server and the driver (node_modules/mongodb
 * lib/bulk): a transaction's writes land together or not at all; a write error inside one
 * aborts it, and every later command in it fails with NoSuchTransaction (labelled transient).
 * A bulk is sent as commands of one kind each (ordered: consecutive runs; unordered: all
 * updates, then all deletes); an ordered bulk stops at a command with write errors and reports
 * them, an unordered one sends the rest, and a failed command replaces the error, write errors
 * and all. withTransaction runs the callback again after a transient error (for 120 s; here 20 rounds).
 */
function primary() {
  const collections = new Map<string, Map<string, Stored>>();
  let staged: Map<string, Map<string, Stored>> | null = null;
  let aborted = false;
  const data = () => staged ?? collections;
  const table = (name: string) => {
    if (!data().has(name)) data().set(name, new Map());
    return data().get(name)!;
  };
  const noSuchTransaction = () => {
    const error = new MongoServerError({ message: 'Transaction has been aborted', code: 251, errorLabels: ['TransientTransactionError'] });
    return Object.assign(Object.create(MongoBulkWriteError.prototype) as MongoBulkWriteError, error, {
      writeErrors: [],
      errorLabelSet: new Set(['TransientTransactionError']),
    });
  };
  const bulkWrite = (name: string) => async (writes: Write[], options: { ordered: boolean }) => {
    const indexed = writes.map((write, index) => ({ write, index }));
    const commands = options.ordered
      ? indexed.reduce<(typeof indexed)[]>((runs, op) => {
          const last = runs.at(-1);
          if (last && Boolean(last[0]!.write.deleteOne) === Boolean(op.write.deleteOne)) last.push(op);
          else runs.push([op]);
          return runs;
        }, [])
      : [indexed.filter((op) => op.write.replaceOne), indexed.filter((op) => op.write.deleteOne)].filter((command) => command.length > 0);
    const writeErrors: { index: number; code: number; errmsg: string }[] = [];
    for (const command of commands) {
      if (aborted) throw noSuchTransaction();
      for (const { write, index } of command) {
        const { filter } = write.replaceOne ?? write.deleteOne!;
        const current = table(name).get(filter._id);
        const older = current === undefined || (current.position ?? '') < filter.position.$lt;
        if (write.deleteOne) {
          if (current && older) table(name).delete(filter._id);
        } else if (older) {
          table(name).set(filter._id, { ...write.replaceOne!.replacement, _id: filter._id });
        } else {
          // The guarded upsert misses a newer document and its insert collides on _id.
          writeErrors.push({ index, code: 11000, errmsg: 'E11000 duplicate key error' });
          aborted = true;
          break;
        }
      }
      if (writeErrors.length > 0 && options.ordered) break;
    }
    if (writeErrors.length > 0) throw Object.assign(Object.create(MongoBulkWriteError.prototype) as MongoBulkWriteError, { message: 'E11000', writeErrors });
  };
  const checkpoints = {
    find: (query: { _id: { $in: string[] } }) => ({
      toArray: async () => query._id.$in.flatMap((id) => (table('checkpoints').has(id) ? [table('checkpoints').get(id)!] : [])),
    }),
    updateOne: async (filter: Stored & { switching?: unknown }, update: { $set: Stored }) => {
      const current = table('checkpoints').get(filter._id);
      const matches = current
        ? (current.position ?? null) === filter.position && (filter.version === undefined || current.version === filter.version) && !current.switching
        : filter.position === null;
      if (!matches && current) throw new MongoServerError({ message: 'E11000 duplicate key error', code: 11000 });
      table('checkpoints').set(filter._id, { ...current, ...update.$set, _id: filter._id });
    },
  };
  const db = { collection: (name: string) => (name === 'checkpoints' ? checkpoints : { bulkWrite: bulkWrite(name) }) };
  const client = {
    startSession: () => ({
      withTransaction: async (callback: () => Promise<void>) => {
        for (let round = 0; round < 20; round += 1) {
          staged = new Map([...collections].map(([name, docs]) => [name, new Map(docs)]));
          aborted = false;
          try {
            await callback();
          } catch (error) {
            staged = null;
            if ((error as { errorLabelSet?: Set<string> }).errorLabelSet?.has('TransientTransactionError')) continue;
            throw error;
          }
          for (const [name, docs] of staged) collections.set(name, docs);
          staged = null;
          return;
        }
        throw new Error('withTransaction gave up retrying a transient error');
      },
      endSession: async () => {},
    }),
  };
  const store = new (MongoReadStore as unknown as new (client: unknown, db: unknown) => MongoReadStore)(client, db);
  return { store, collections };
}

describe('MongoDB read store commit (a model of the server and driver): a document newer than the batch', () => {
  it('is skipped, and the rest of the commit lands, deletes of the same collection included', async () => {
    const { store, collections } = primary();
    await store.commitBatches([
      { projector: 'people', version: 1, position: 5n, after: null, changes: [{ op: 'put', collection: 'people', id: 'old', doc: { n: 1 } }] },
    ]);
    // A document already reflecting a later position (another writer got there first).
    collections.get('rm_people')!.set('newer', { _id: 'newer', position: '00000000000000000099', doc: { n: 'kept' } });
    await store.commitBatches([
      {
        projector: 'people',
        version: 1,
        position: 9n,
        after: 5n,
        changes: [
          { op: 'put', collection: 'people', id: 'newer', doc: { n: 'stale' } },
          { op: 'put', collection: 'people', id: 'fresh', doc: { n: 2 } },
          { op: 'delete', collection: 'people', id: 'old' },
        ],
      },
    ]);
    const people = collections.get('rm_people')!;
    expect(people.get('newer')!.doc).to.deep.equal({ n: 'kept' });
    expect(people.get('fresh')!.doc).to.deep.equal({ n: 2 });
    expect(people.has('old')).to.equal(false);
    expect(collections.get('checkpoints')!.get('people')!.position).to.equal('00000000000000000009');
  });
});
