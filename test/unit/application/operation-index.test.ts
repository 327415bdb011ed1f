import 'reflect-metadata';
import { expect } from 'chai';
import { OperationIndex } from '../../../src/application/operation-index.js';
import { toApiError } from '../../../src/http/errors.js';
import { ReadModelsBehindError, type ReadConsistency } from '../../../src/ports/read-consistency.js';
import type { ReadStore } from '../../../src/ports/read-store.js';

/** A read store no lookup may reach: the index is consulted only once it has caught up. */
const untouchable = new Proxy({} as ReadStore, {
  get: () => () => {
    throw new Error('read before the index caught up');
  },
});

const consistency = (reached: boolean): ReadConsistency => ({ waitFor: async () => reached, projections: async () => [] });

describe('OperationIndex', () => {
  it('refuses a lookup the index cannot catch up for: a 503 saying nothing was done, not "a store is unavailable"', async () => {
    const index = new OperationIndex(untouchable, consistency(false));
    const error = await index.lookup('ann', { id: 'op-1', kind: 'withdraw' }, 7n).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).to.be.instanceOf(ReadModelsBehindError);
    const answer = toApiError(error)!;
    expect(answer.status).to.equal(503);
    expect(answer.code).to.equal('SERVICE_UNAVAILABLE');
    expect(answer.message).to.equal('The operations index is behind the log; nothing was done, retry the request');
  });

  it('needs no index without an operation_id or a stream', async () => {
    const index = new OperationIndex(untouchable, consistency(false));
    expect(await index.lookup('ann', null, 7n)).to.equal(null);
    expect(await index.lookup('ann', { id: 'op-1', kind: 'grant' }, null)).to.equal(null);
  });
});
