import { injectable } from 'tsyringe';
import { KeyedLock } from '../keyed-lock.js';
import { customerSubject } from './personal-data-cipher.js';

/**
 * Orders, within this process, the erasure of a user and the receipt of a notification naming
 * one of its payment customer ids. A notification is matched and kept either before the erasure
 * destroys that customer's key (its copy goes with the key) or after the read models dropped the
 * user's link to the customer (it is kept unmatched, under a new key, like any notification of an
 * unknown customer). Without this, one matched through the old link in between was kept under a
 * fresh key of the customer: readable after the erasure, and linked to the erased user.
 * One instance per service (src/composition-root.ts).
 */
@injectable()
export class CustomerErasureLock {
  private readonly lock = new KeyedLock();
  private readonly erasures = new KeyedLock();

  /**
   * Erasures run one at a time in this process, so only one holds customer locks at any moment:
   * one that finds more customers on a retry can take their locks too without risking a
   * deadlock with another erasure. (Notifications take one lock each, never waiting while holding.)
   */
  oneErasureAtATime<T>(work: () => Promise<T>): Promise<T> {
    return this.erasures.run('erasure', work);
  }

  /** Holds the customers' locks, in one order (two erasures sharing customers cannot deadlock). */
  async acquire(customerIds: readonly string[]): Promise<() => void> {
    const releases: (() => void)[] = [];
    for (const subject of [...new Set(customerIds.map(customerSubject))].sort()) releases.push(await this.lock.acquire(subject));
    return () => {
      for (const release of releases.reverse()) release();
    };
  }

  async run<T>(customerIds: readonly string[], work: () => Promise<T>): Promise<T> {
    const release = await this.acquire(customerIds);
    try {
      return await work();
    } finally {
      release();
    }
  }
}
