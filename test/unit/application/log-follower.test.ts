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

  it('a hint that comes while a page is processed is not lost: it looks again at once instead of sleeping', async () => {
    let hint: () => void = () => {};
    const hinting = {
      watch: (listener: () => void) => {
        hint = listener;
        return () => {};
      },
    } as unknown as EventStore;
    class HintedMidPage extends LogFollower {
      pages = 0;
      constructor() {
        super(hinting, quiet);
      }
      protected async processPage(): Promise<boolean> {
        this.pages += 1;
        // Another process commits while the first page is being read (the store hints now).
        if (this.pages === 1) hint();
        return false;
      }
    }
    const follower = new HintedMidPage();
    follower.start();
    for (let turn = 0; turn < 10 && follower.pages < 2; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    const pages = follower.pages;
    await follower.stop();
    // Without the hint kept, it would sleep until its 250 ms poll after the first page.
    expect(pages).to.equal(2);
  });
});
