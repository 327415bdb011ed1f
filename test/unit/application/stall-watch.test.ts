import { expect } from 'chai';
import { type ProjectionLag, STALL_MS, StallWatch } from '../../../src/application/projections/projection-lag.js';
import type { ProjectionStatus } from '../../../src/ports/read-consistency.js';

const lag = (checkpoint: bigint | null, behind: number): ProjectionLag => ({
  status: { name: 'users', checkpoint, failure: null } as unknown as ProjectionStatus,
  behind,
  caughtUp: true,
});

/** /readyz: a read model behind the log whose checkpoint does not move is stalled (no projector, or a hung one). */
describe('StallWatch', () => {
  it('calls a read model stalled once it has stayed behind the log at one checkpoint for STALL_MS', () => {
    const watch = new StallWatch();
    expect(watch.stalled(lag(5n, 2), 0)).to.equal(false);
    expect(watch.stalled(lag(5n, 2), STALL_MS - 1)).to.equal(false);
    expect(watch.stalled(lag(5n, 3), STALL_MS)).to.equal(true);
  });

  it('a moving checkpoint is never stalled, however long it stays behind', () => {
    const watch = new StallWatch();
    for (let step = 0n; step < 10n; step++) expect(watch.stalled(lag(step, 50), Number(step) * STALL_MS)).to.equal(false);
  });

  it('counts from the first look that finds it behind: a read model caught up until a moment ago is not stalled at once', () => {
    const watch = new StallWatch();
    expect(watch.stalled(lag(5n, 0), 0)).to.equal(false);
    // Minutes later, one event arrived a moment ago.
    expect(watch.stalled(lag(5n, 1), 10 * STALL_MS)).to.equal(false);
    expect(watch.stalled(lag(5n, 1), 11 * STALL_MS - 1)).to.equal(false);
    expect(watch.stalled(lag(5n, 1), 11 * STALL_MS)).to.equal(true);
    // Caught up again: the clock starts over.
    expect(watch.stalled(lag(6n, 0), 12 * STALL_MS)).to.equal(false);
    expect(watch.stalled(lag(6n, 1), 13 * STALL_MS)).to.equal(false);
  });
});
