import { expect } from 'chai';
import { CATCH_UP_MIN_LAG, CatchUpGuard, VERDICT_MS } from '../../../src/application/projections/catch-up-guard.js';
import type { ReadAllOptions, RecordedEvent } from '../../../src/ports/event-store.js';
import { type ProjectionStatus, ReadModelsBehindError } from '../../../src/ports/read-consistency.js';

const HEAD = 50_000n;

/** A log whose head is HEAD, counting the events its readAll hands back. */
function log() {
  const read = { calls: 0, events: 0 };
  return {
    read,
    store: {
      headPosition: async () => HEAD,
      readAll: async ({ after, limit }: ReadAllOptions): Promise<RecordedEvent[]> => {
        const count = Math.min(limit, Number(HEAD - (after ?? 0n)));
        read.calls += 1;
        read.events += count;
        return Array.from({ length: count }, () => ({}) as RecordedEvent);
      },
    },
  };
}

const status = (name: string, checkpoint: bigint, failure: ProjectionStatus['failure'] = null): ProjectionStatus => ({
  name,
  version: 1,
  storedVersion: 1,
  checkpoint,
  failure,
});

const consistency = (statuses: ProjectionStatus[]) => ({ projections: async () => statuses, waitFor: async () => true });

describe('CatchUpGuard', () => {
  it('reads nothing while every read model stands at the head of the log', async () => {
    const { store, read } = log();
    await new CatchUpGuard(store, consistency([status('users', HEAD), status('codes', HEAD)]), 1_000).check();
    expect(read).to.deep.equal({ calls: 0, events: 0 });
  });

  it('refuses while a read model is more than max(READY_MAX_LAG, 1,000) events behind, reading at most that many + 1', async () => {
    const { store, read } = log();
    const guard = new CatchUpGuard(store, consistency([status('users', HEAD - 5_000n)]), 10);
    const refused = await guard.check().then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).to.be.instanceOf(ReadModelsBehindError);
    expect(read).to.deep.equal({ calls: 1, events: CATCH_UP_MIN_LAG + 1 });
    // A small backlog is ordinary load, whatever READY_MAX_LAG says.
    await new CatchUpGuard(log().store, consistency([status('users', HEAD - 500n)]), 0).check();
  });

  it('lets commands through within VERDICT_MS of the read models catching up (as /readyz turns ready), not a second later', async () => {
    const { store } = log();
    const users = status('users', HEAD - 5_000n);
    const guard = new CatchUpGuard(store, consistency([users]), 1_000);
    const refused = await guard.check().then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).to.be.instanceOf(ReadModelsBehindError);
    users.checkpoint = HEAD;
    await new Promise((resolve) => setTimeout(resolve, VERDICT_MS + 20));
    await guard.check();
  });

  it('neither counts nor reads the backlog of a read model held at a failing batch', async () => {
    const { store, read } = log();
    const held = status('webhooks', 1n, { position: '2', eventId: 'e', error: 'stuck' });
    await new CatchUpGuard(store, consistency([status('users', HEAD), held]), 1_000).check();
    expect(read).to.deep.equal({ calls: 0, events: 0 });
  });
});
