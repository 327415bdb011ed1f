import { expect } from 'chai';
import { describe, it } from 'mocha';
import { LogFollower } from '../../../src/application/log-follower.js';
import type { EventStore } from '../../../src/ports/event-store.js';
import type { Logger } from '../../../src/ports/logger.js';

const quiet = { error() {}, warn() {}, info() {}, debug() {} } as unknown as Logger;
const store = { watch: () => () => {} } as unknown as EventStore;

/** A follower whose pages are always full and answered synchronously, like the embedded store's. */
class Busy extends LogFollower {
  pages = 0;
  constructor(private readonly total: number) {
    super(store, quiet);
  }
  protected async processPage(): Promise<boolean> {
    this.pages += 1;
    return this.pages < this.total;
  }
}

describe('LogFollower', () => {
  it('lets timers and I/O run between full pages while it catches up', async () => {
    const follower = new Busy(100_000);
    let pagesWhenTimerRan = -1;
    const timer = new Promise<void>((resolve) =>
      setTimeout(() => {
        pagesWhenTimerRan = follower.pages;
        resolve();
      }, 0),
    );
    follower.start();
    await timer;
    await follower.stop();
    expect(pagesWhenTimerRan).to.be.below(100_000);
  });
});
