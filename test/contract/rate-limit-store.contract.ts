import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { RateLimitStore } from '../../src/ports/rate-limit-store.js';
import type { ContractOptions, OpenContractSubject } from './contract-subject.js';

const T0 = Date.parse('2026-11-23T12:00:00.000Z');

/** What every RateLimitStore adapter must do: fixed windows, atomic under concurrency, shared by key. */
export function rateLimitStoreContract(name: string, open: OpenContractSubject<RateLimitStore>, _options: ContractOptions): void {
  describe(`RateLimitStore contract: ${name}`, () => {
    let store: RateLimitStore;
    let dispose: () => Promise<void>;
    let key: (label: string) => string;

    beforeEach(async () => {
      const subject = await open();
      store = subject.store;
      dispose = subject.dispose;
      const tag = randomUUID().slice(0, 8);
      key = (label) => `${tag}:${label}`;
    });
    afterEach(() => dispose());

    it('starts a window on the first hit and adds to it until it ends', async () => {
      expect(await store.hit(key('a'), 1, 60_000, T0)).to.deep.equal({ points: 1, resetAtMs: T0 + 60_000 });
      expect(await store.hit(key('a'), 4, 60_000, T0 + 10_000)).to.deep.equal({ points: 5, resetAtMs: T0 + 60_000 });
      expect(await store.hit(key('a'), 1, 60_000, T0 + 59_999)).to.deep.equal({ points: 6, resetAtMs: T0 + 60_000 });
    });

    it('starts a new window once the old one has ended', async () => {
      await store.hit(key('a'), 7, 60_000, T0);
      expect(await store.hit(key('a'), 2, 60_000, T0 + 60_000)).to.deep.equal({ points: 2, resetAtMs: T0 + 120_000 });
    });

    it('a window started while the clock was ahead (it ends more than a window from now) is no longer live: a clock stepped back locks no one out', async () => {
      await store.hit(key('a'), 9, 60_000, T0 + 3_600_000);
      expect(await store.hit(key('a'), 1, 60_000, T0)).to.deep.equal({ points: 1, resetAtMs: T0 + 60_000 });
      expect(await store.hit(key('a'), 1, 60_000, T0 + 1)).to.deep.equal({ points: 2, resetAtMs: T0 + 60_000 });
      // Another instance's clock a few seconds behind shares the window as it is.
      await store.hit(key('b'), 3, 60_000, T0 + 5_000);
      expect(await store.hit(key('b'), 1, 60_000, T0)).to.deep.equal({ points: 4, resetAtMs: T0 + 65_000 });
    });

    it('never takes a counter below 0 with a refund, nor gives a new window room with one', async () => {
      await store.hit(key('a'), 2, 60_000, T0);
      expect(await store.hit(key('a'), -4, 60_000, T0 + 1)).to.deep.equal({ points: 0, resetAtMs: T0 + 60_000 });
      expect(await store.hit(key('a'), 1, 60_000, T0 + 2)).to.deep.equal({ points: 1, resetAtMs: T0 + 60_000 });
      // Charged 5 in one window, refunded 4 in the next: the new window starts at 0.
      await store.hit(key('b'), 5, 60_000, T0);
      expect(await store.hit(key('b'), -4, 60_000, T0 + 60_000)).to.deep.equal({ points: 0, resetAtMs: T0 + 120_000 });
      expect(await store.hit(key('b'), 1, 60_000, T0 + 60_001)).to.deep.equal({ points: 1, resetAtMs: T0 + 120_000 });
      expect(await store.hit(key('fresh'), -3, 60_000, T0)).to.deep.equal({ points: 0, resetAtMs: T0 + 60_000 });
    });

    it('keeps keys apart', async () => {
      await store.hit(key('a'), 3, 60_000, T0);
      expect(await store.hit(key('b'), 1, 60_000, T0)).to.deep.equal({ points: 1, resetAtMs: T0 + 60_000 });
    });

    it('loses no hit when 50 arrive at once', async () => {
      const results = await Promise.all(Array.from({ length: 50 }, () => store.hit(key('burst'), 1, 60_000, T0)));
      expect(results.map((result) => result.points).sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 50 }, (_, i) => i + 1));
    });

    it('gives hits of different sizes at once the counts of one hit after the other', async () => {
      const sizes = [1, 2, 3, 4, 5, 6, 7, 8];
      const results = await Promise.all([...sizes.map((points) => store.hit(key('sizes'), points, 60_000, T0)), store.hit(key('other'), 9, 60_000, T0)]);
      const counts = results.slice(0, sizes.length).map((result) => result.points);
      // Each hit's count is the count before it (0 or another hit's count) plus its own points.
      expect(new Set(counts).size).to.equal(sizes.length);
      for (const [index, count] of counts.entries()) expect([0, ...counts]).to.include(count - sizes[index]!);
      expect(Math.max(...counts)).to.equal(36);
      expect(results.every((result) => result.resetAtMs === T0 + 60_000)).to.equal(true);
      expect(results[sizes.length]!.points).to.equal(9);
    });

    it('starts the new window for a hit after the old one ended, even among hits at once', async () => {
      const [, , late] = await Promise.all([
        store.hit(key('edge'), 3, 60_000, T0),
        store.hit(key('edge'), 2, 60_000, T0 + 1),
        store.hit(key('edge'), 4, 60_000, T0 + 60_000),
      ]);
      // Whatever order they land in, the late hit counts in the new window.
      expect(late!.resetAtMs).to.equal(T0 + 120_000);
      expect(late!.points).to.be.at.least(4);
    });

    it('removes only windows that have ended', async () => {
      await store.hit(key('old'), 1, 1_000, T0);
      await store.hit(key('live'), 1, 60_000, T0);
      expect(await store.removeExpired(T0 + 1_000)).to.be.at.least(1);
      expect(await store.hit(key('live'), 1, 60_000, T0 + 1_000)).to.deep.equal({ points: 2, resetAtMs: T0 + 60_000 });
      expect(await store.hit(key('old'), 1, 1_000, T0 + 1_000)).to.deep.equal({ points: 1, resetAtMs: T0 + 2_000 });
    });
  });
}
