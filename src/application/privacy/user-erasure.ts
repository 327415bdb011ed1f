import { inject, injectable } from 'tsyringe';
import { streams } from '../../domain/events/index.js';
import { decideEraseUser } from '../../domain/privacy/erase-user.js';
import { personalFieldsOf } from '../../domain/privacy/personal-fields.js';
import { valueAt } from '../../domain/json-object.js';
import { userEvolver } from '../../domain/users/user-state.js';
import type { Clock } from '../../ports/clock.js';
import type { KeyStore } from '../../ports/key-store.js';
import type { Logger } from '../../ports/logger.js';
import { TOKENS } from '../../ports/tokens.js';
import { type CommandContext, EventLog } from '../event-log.js';
import { CommandExecutor } from '../command-executor.js';
import { StreamExecutor } from '../stream-executor.js';
import { CustomerErasureLock } from './customer-erasure-lock.js';
import { ExportErasureGate } from './export-erasure-gate.js';
import { customerSubject, forgetKeysOf, keyIdOf, userSubject } from './personal-data-cipher.js';

/**
 * DELETE /admin/users/{app_user_id} (SPEC §13): crypto-shredding. Destroys the data keys of
 * every payment customer id the user ever had, then the user's, then records `UserErased` so the read
 * models null the fields; then asks the store to drop copies of what was overwritten. A user
 * already erased, with nothing personal received since, is left as it is (`erased: false`).
 *
 * Both happen under the stream's lock, as one attempt of the erasure: an update arriving
 * meanwhile is appended either before (its key is destroyed with the others) or after
 * `UserErased` (under a new key). Had the keys gone before the lock, an update in between would
 * have made a new key and landed before `UserErased`, readable after the erasure. A writer in
 * another process that slips in makes the append conflict, and the retry destroys again: the
 * user's key (a new one, if that writer made one) and the customer keys of the ids it can still
 * read (an id sealed under the key the first attempt destroyed can no longer be read, so its own
 * key, if that writer made one, survives: a second DELETE cannot find it either). A user found
 * already erased is found so under the same lock (`destroyRestoredKeys`).
 */
@injectable()
export class UserErasure {
  constructor(
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(EventLog) private readonly log: EventLog,
    @inject(TOKENS.KeyStore) private readonly keys: KeyStore,
    @inject(TOKENS.PurgeOverwritten) private readonly purgeOverwritten: () => Promise<void>,
    @inject(CommandExecutor) private readonly commands: CommandExecutor,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Logger) private readonly logger: Logger,
    @inject(CustomerErasureLock) private readonly customerLock: CustomerErasureLock,
    @inject(ExportErasureGate) private readonly exports: ExportErasureGate,
  ) {}

  /** The user's exports under way are cut short, and new ones wait for it (ExportErasureGate). */
  erase(appUserId: string, context: CommandContext): Promise<{ erased: boolean }> {
    return this.exports.erasing(appUserId, () => this.eraseWithin(appUserId, context));
  }

  private async eraseWithin(appUserId: string, context: CommandContext): Promise<{ erased: boolean }> {
    const stream = streams.user(appUserId);
    // Unknown → NOT_FOUND.USER before any lock is taken: the decider says so.
    decideEraseUser((await this.executor.load(stream, userEvolver)).state, this.clock.now(), []);
    // Once a key is destroyed, the purge runs even if what follows fails (a retried DELETE finds
    // the user erased and would not purge).
    const progress = { destroyed: false };
    try {
      return await this.customerLock.oneErasureAtATime(() => this.eraseLocked(appUserId, stream, context, progress));
    } finally {
      if (progress.destroyed) await this.purge();
    }
  }

  /**
   * An erasure repeated after a restore (README, Personal data): the log says erased, but a key
   * store restored from a backup older than the erasure holds the keys again. They are destroyed
   * again (the customers' first: their ids are sealed under the user's key). Runs under the
   * stream's lock, as every write to the stream does: a key found here is not one an update
   * racing this DELETE has just made for data it is about to append (SPEC §13: data sent after
   * an erasure is kept, under a new key). That update has either landed, and the user is then
   * erased again as usual, or not asked for its key yet. Whether keys were destroyed.
   */
  private async destroyRestoredKeys(appUserId: string, stream: string): Promise<boolean> {
    // Without the user's key nothing can be back: the customers' ids are sealed under it. One
    // look-up, so a repeated DELETE costs the same for a user with a long history; the stream is
    // read only when a restore brought the key back.
    const userKey = await this.keys.existingKey(userSubject(appUserId));
    if (userKey === null) return false;
    const held = await this.personalValues(stream);
    // A restored key sealed values the last erasure erased. One that sealed none was made after
    // it, for data still to be appended: by a writer in another process, which this lock does
    // not hold back (or by a write that failed after making it).
    if (!held.erasedKeyIds.has(userKey.id)) return false;
    let destroyed = 0;
    for (const subject of [...held.customerIds.map(customerSubject), userSubject(appUserId)]) {
      destroyed += await this.keys.destroy(subject);
      forgetKeysOf(subject);
    }
    if (destroyed === 0) return false;
    this.logger.warn(
      { app_user_id: appUserId, keys: destroyed },
      'erasure: keys of an erased user were back (a key store restored from an older backup); destroyed again',
    );
    return true;
  }

  private async purge(): Promise<void> {
    try {
      await this.purgeOverwritten();
    } catch (error) {
      this.logger.warn({ err: error }, 'erasure: the store could not drop overwritten copies now; it drops them as soon as it can');
    }
  }

  /**
   * Notifications naming the user's customers wait from before their keys go until the read models
   * have dropped the user's links to them (src/application/privacy/customer-erasure-lock.ts); the
   * purge of overwritten pages comes after, without holding them.
   */
  private async eraseLocked(appUserId: string, stream: string, context: CommandContext, progress: { destroyed: boolean }): Promise<{ erased: boolean }> {
    const releases: (() => void)[] = [];
    const locked = new Set<string>();
    try {
      const executed = await this.executor.execute(
        stream,
        userEvolver,
        (current, held: { eventIds: string[] }) => decideEraseUser(current, this.clock.now(), held.eventIds),
        context,
        {
          prepare: async ({ state }) => {
            // Already erased, nothing personal received since: nothing to record (the decider
            // says so), only keys a restore may have brought back to destroy.
            if (state.erased) {
              if (await this.destroyRestoredKeys(appUserId, stream)) progress.destroyed = true;
              return { eventIds: [] };
            }
            const held = await this.personalValues(stream);
            if (held.clearEvents > 0) {
              this.logger.warn(
                { app_user_id: appUserId, events: held.clearEvents },
                'erasure: events of this user hold personal values in the clear (written before encryption): they stay in the log; migrate it with npm run migrate-events (README, Personal data)',
              );
            }
            // A retry may find customers a writer in another process added: they are locked too
            // (no other erasure holds customer locks meanwhile, so the order cannot deadlock).
            const customers = held.customerIds.filter((id) => !locked.has(id));
            releases.push(await this.customerLock.acquire(customers));
            for (const id of customers) locked.add(id);
            // Keys before `UserErased`: if this request dies after them, the retry finds the user
            // not erased yet and finishes; the other order could record an erasure whose key
            // survives. The customers' keys before the user's: the retry finds the customer ids
            // only while the user's key exists (they are sealed under it).
            for (const subject of [...held.customerIds.map(customerSubject), userSubject(appUserId)]) {
              progress.destroyed = true;
              await this.keys.destroy(subject);
              forgetKeysOf(subject);
            }
            return held;
          },
        },
      );
      // Already erased (the decider's `erased: false`): nothing was recorded, no snapshot to rewrite.
      if (!executed.result.erased) return executed.result;
      // The snapshot is rewritten (the one before may hold the personal values) before the request's after-commit work.
      await this.executor.snapshotAfterErasure(stream, userEvolver, executed);
      await this.commands.afterCommit(executed.position, context, appUserId);
      return executed.result;
    } finally {
      for (const release of releases.reverse()) release();
    }
  }

  /**
   * The user's events that hold a personal value, every payment customer id among them (decrypted
   * while the keys exist), and the ids of the keys that sealed a value the last erasure erased.
   * Read a page at a time: a referrer's stream can hold 100,000 events.
   */
  private async personalValues(stream: string): Promise<{ eventIds: string[]; customerIds: string[]; erasedKeyIds: Set<string>; clearEvents: number }> {
    const eventIds: string[] = [];
    // Events whose personal value the log holds in the clear (no key to destroy), not sealed.
    let clearEvents = 0;
    const customerIds = new Set<string>();
    const keyIds = new Set<string>();
    let erasedKeyIds = new Set<string>();
    for await (const page of this.log.readStreamPages(stream)) {
      for (const event of page) {
        if (event.type === 'UserErased') erasedKeyIds = new Set(keyIds);
        for (const envelope of Object.values(event.sealed ?? {})) keyIds.add(keyIdOf(envelope));
        const present = personalFieldsOf(event.type)
          .filter((field) => {
            const value = valueAt(event.data, field.path);
            return value !== undefined && value !== null;
          })
          .map((field) => field.path.join('.'));
        if (present.length > 0) eventIds.push(event.id);
        if (present.some((path) => !event.sealed?.[path] && !event.erased?.includes(path))) clearEvents += 1;
        const customer =
          event.type === 'UserRegistered'
            ? event.data.payment_customer_id
            : event.type === 'UserProfileUpdated'
              ? event.data.changes.payment_customer_id
              : null;
        if (customer) customerIds.add(customer);
      }
    }
    return { eventIds, customerIds: [...customerIds], erasedKeyIds, clearEvents };
  }
}
