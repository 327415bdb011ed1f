import { expect } from 'chai';
import { ReplayGate } from '../../../src/application/projections/replay-gate.js';
import { type ProjectionStatus, ReadModelsBehindError } from '../../../src/ports/read-consistency.js';
import { rejection } from '../../support/rejection.js';

const status = (name: string, storedVersion: number): ProjectionStatus => ({ name, version: 2, storedVersion, checkpoint: 10n, failure: null });

describe('ReplayGate', () => {
  it('refuses while a read model was built by another version, naming it, and lets requests through once none is', async () => {
    let statuses = [status('users', 1), status('codes', 2)];
    const gate = new ReplayGate({ projections: async () => statuses });
    const refused = await rejection(() => gate.check());
    expect(refused).to.be.instanceOf(ReadModelsBehindError);
    expect((refused as Error).message)
      .to.contain('need a replay (users)')
      .and.contain('npm run replay');
    statuses = [status('users', 2), status('codes', 2)];
    await new Promise((resolve) => setTimeout(resolve, 300));
    await gate.check();
  });

  it('refuses a read model built by a newer version too (a rollback): this one cannot read it either', async () => {
    const gate = new ReplayGate({ projections: async () => [status('users', 3), status('codes', 2)] });
    expect((await rejection(() => gate.check())) as Error).to.be.instanceOf(ReadModelsBehindError);
  });

  it('reads the statuses once for all the requests that arrive while they are read', async () => {
    let reads = 0;
    let release!: () => void;
    const gate = new ReplayGate({
      projections: () => {
        reads += 1;
        return new Promise<ProjectionStatus[]>((resolve) => (release = () => resolve([status('users', 2)])));
      },
    });
    const checks = Array.from({ length: 50 }, () => gate.check());
    release();
    await Promise.all(checks);
    expect(reads).to.equal(1);
  });
});
