import { expect } from 'chai';
import { type Db, MongoNetworkError } from 'mongodb';
import { type Lease, LeaseKeeper, MongoLease } from '../../../src/adapters/mongodb/mongo-lease.js';

/** A lease always free for this owner; counts its calls. */
class FreeLease implements Lease {
  readonly owner = 'me';
  acquires = 0;
  releases = 0;
  async tryAcquire() {
    this.acquires += 1;
    return true;
  }
  isHeld() {
    return this.releases === 0;
  }
  async release() {
    this.releases += 1;
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The projector's lease on the external backend (one projector at a time, a standby takes over). */
describe('LeaseKeeper: holding a lease and the work it guards', () => {
  it('a start that fails is not a holder: what started is stopped, the lease given up, and the next round starts again', async () => {
    const lease = new FreeLease();
    const calls: string[] = [];
    let failures = 1;
    const keeper = new LeaseKeeper(
      lease,
      {
        onAcquired: () => {
          calls.push('start');
          if (failures-- > 0) throw new Error('store blip while starting');
        },
        onLost: () => {
          calls.push('stop');
        },
        onError: () => calls.push('error'),
      },
      1_000,
    );
    await keeper.runOnce();
    expect(calls).to.deep.equal(['start', 'error', 'stop']);
    expect(lease.releases).to.equal(1);
    await keeper.runOnce();
    expect(calls).to.deep.equal(['start', 'error', 'stop', 'start']);
    // Held and started: a later round only renews.
    await keeper.runOnce();
    expect(calls.filter((call) => call === 'start')).to.have.length(2);
  });

  it('renews the lease while the work starts, however long that takes', async () => {
    const lease = new FreeLease();
    const keeper = new LeaseKeeper(lease, { onAcquired: () => sleep(120), onLost: () => {} }, 20);
    await keeper.runOnce();
    // One take, then renewals every 20 ms during the 120 ms start.
    expect(lease.acquires).to.be.at.least(4);
    const after = lease.acquires;
    await sleep(60);
    expect(lease.acquires, 'no renewal left running after the start').to.equal(after);
  });

  it('after a failed start, no renewal still in flight takes the lease back once it is given up', async () => {
    /** A lease in a store with a round trip: takes land 15 ms after they are sent. */
    let holder: string | null = null;
    const lease: Lease = {
      owner: 'me',
      tryAcquire: async () => {
        await sleep(15);
        holder = 'me';
        return true;
      },
      isHeld: () => holder === 'me',
      release: async () => {
        holder = null;
      },
    };
    const keeper = new LeaseKeeper(
      lease,
      {
        onAcquired: async () => {
          await sleep(50);
          throw new Error('failed to start');
        },
        onLost: () => {},
        onError: () => {},
      },
      20,
    );
    await keeper.runOnce();
    await sleep(40);
    expect(holder, 'given up, and nobody took it back').to.equal(null);
  });
});

describe('MongoLease: a failed renewal does not end the lease before its expiry', () => {
  /** A leases collection whose findOneAndUpdate answers from `replies`, in turn. */
  function leasesAnswering(replies: (() => unknown)[]): Db {
    const collection = {
      findOneAndUpdate: async () => {
        const reply = replies.shift();
        if (!reply) throw new Error('no more replies');
        return reply();
      },
    };
    return { collection: () => collection } as unknown as Db;
  }

  it('a renewal that fails (network) keeps the holder until the last renewal expires, and the keeper goes on working', async () => {
    let now = 0;
    const ours = () => ({ _id: 'projector', owner: 'me', expires_at: new Date() });
    const network = () => {
      throw new MongoNetworkError('connection reset');
    };
    const lease = new MongoLease(leasesAnswering([ours, network, network, ours]), { name: 'projector', owner: 'me', ttlMs: 15_000, now: () => now });
    const seen: string[] = [];
    const keeper = new LeaseKeeper(lease, { onAcquired: () => void seen.push('acquired'), onLost: () => void seen.push('lost') }, 60_000);
    await keeper.runOnce();
    now = 5_000;
    await keeper.runOnce();
    expect(lease.isHeld()).to.equal(true);
    now = 10_000;
    await keeper.runOnce();
    now = 12_000;
    await keeper.runOnce();
    expect(seen).to.deep.equal(['acquired']);
    expect(lease.isHeld()).to.equal(true);
    await keeper.stop();
  });

  it('once the last renewal has expired, a failing renewal ends it: the work stops', async () => {
    let now = 0;
    const ours = () => ({ _id: 'projector', owner: 'me', expires_at: new Date() });
    const network = () => {
      throw new MongoNetworkError('connection reset');
    };
    const lease = new MongoLease(leasesAnswering([ours, network]), { name: 'projector', owner: 'me', ttlMs: 15_000, now: () => now });
    const seen: string[] = [];
    const keeper = new LeaseKeeper(lease, { onAcquired: () => void seen.push('acquired'), onLost: () => void seen.push('lost') }, 60_000);
    await keeper.runOnce();
    now = 15_000;
    await keeper.runOnce();
    expect(seen).to.deep.equal(['acquired', 'lost']);
    expect(lease.isHeld()).to.equal(false);
  });
});
