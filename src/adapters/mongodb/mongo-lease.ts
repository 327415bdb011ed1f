import { type Collection, type Db, type Document, MongoServerError } from 'mongodb';
import { DUPLICATE_KEY } from './mongo-mapping.js';

/**
 * A named lease in MongoDB: at most one owner holds it at a time, until it expires unless
 * renewed. Expiry is judged on the MongoDB server's clock (`$$NOW`), so clock skew between
 * projector hosts cannot make two of them hold it at once. The owner's own view of "held"
 * is conservative: measured from before its last successful renewal was sent.
 *
 * Used to keep a single projector process writing the read models: a second projector
 * waits (hot standby) and takes over once the first stops renewing.
 */
export interface LeaseDocument {
  _id: string;
  owner: string;
  expires_at: Date;
  acquired_at: Date;
  renewed_at: Date;
}

export interface LeaseOptions {
  /** Which lease (e.g. "projector"). */
  name: string;
  /** Unique per process (host, pid and a random part). */
  owner: string;
  /** How long a taken or renewed lease lasts without renewal. */
  ttlMs: number;
  /** Local monotonic clock in ms (injectable for tests). */
  now?: () => number;
}

const LEASES = 'leases';

/** The update pipeline of `tryAcquire`, judged entirely on the server's clock. */
export function takeOrRenew(owner: string, ttlMs: number): Document[] {
  const mayTake = {
    $or: [{ $eq: [{ $ifNull: ['$owner', null] }, null] }, { $eq: ['$owner', owner] }, { $lt: ['$expires_at', '$$NOW'] }],
  };
  return [
    { $set: { _may_take: mayTake } },
    {
      $set: {
        // Every expression of one stage sees the document as it entered the stage.
        owner: { $cond: ['$_may_take', owner, '$owner'] },
        expires_at: { $cond: ['$_may_take', { $add: ['$$NOW', ttlMs] }, '$expires_at'] },
        renewed_at: { $cond: ['$_may_take', '$$NOW', '$renewed_at'] },
        acquired_at: { $cond: [{ $and: ['$_may_take', { $ne: ['$owner', owner] }] }, '$$NOW', '$acquired_at'] },
      },
    },
    { $unset: '_may_take' },
  ];
}

export class MongoLease {
  private readonly leases: Collection<LeaseDocument>;
  private readonly now: () => number;
  private heldUntil = 0;

  constructor(
    db: Db,
    private readonly options: LeaseOptions,
  ) {
    this.leases = db.collection<LeaseDocument>(LEASES);
    // Monotonic: a wall clock set back would stretch the holder's own view of its lease.
    this.now = options.now ?? (() => performance.now());
  }

  get owner(): string {
    return this.options.owner;
  }

  /**
   * Takes the lease when it is free or expired, or renews it when this owner holds it.
   * Returns whether this owner holds it now.
   */
  async tryAcquire(): Promise<boolean> {
    const sentAt = this.now();
    const { name, owner, ttlMs } = this.options;
    let lease: LeaseDocument | null;
    try {
      // One atomic pipeline update (upserts may not use $expr filters): take the lease when it is
      // free, expired or already ours; otherwise leave it as it is. Then see who holds it.
      lease = await this.leases.findOneAndUpdate({ _id: name }, takeOrRenew(owner, ttlMs), { upsert: true, returnDocument: 'after' });
    } catch (error) {
      // Two first-time takers raced on the insert: the other one won this round.
      if (error instanceof MongoServerError && error.code === DUPLICATE_KEY) {
        this.heldUntil = 0;
        return false;
      }
      // Unknown outcome (e.g. network): not counted as a renewal. The lease last taken or renewed
      // still holds until its expiry (isHeld), which a later renewal may yet extend.
      throw error;
    }
    if (lease?.owner !== owner) {
      this.heldUntil = 0;
      return false;
    }
    this.heldUntil = sentAt + ttlMs;
    return true;
  }

  /** Whether this owner may still act as the holder (false once a renewal is overdue). */
  isHeld(): boolean {
    return this.now() < this.heldUntil;
  }

  /** Gives the lease up so a standby can take over at once. */
  async release(): Promise<void> {
    this.heldUntil = 0;
    await this.leases.deleteOne({ _id: this.options.name, owner: this.options.owner });
  }
}

/** What LeaseKeeper needs of a lease (MongoLease). */
export type Lease = Pick<MongoLease, 'owner' | 'tryAcquire' | 'isHeld' | 'release'>;

export interface LeaseKeeperHooks {
  /**
   * This process just became the holder: start the exclusive work. The lease is renewed while it
   * starts. When it fails, onLost stops what did start and the lease is given up, so this process
   * (next round) or a standby tries again.
   */
  onAcquired(): Promise<void> | void;
  /** The lease was lost (renewal failed or overdue): stop the exclusive work now. */
  onLost(reason: unknown): Promise<void> | void;
  /** A renewal attempt failed (the lease may still be held until it expires). */
  onError?(error: unknown): void;
}

/**
 * Keeps trying to hold a lease: renews it every `renewEveryMs` while held (ttl/3 is a good
 * value), retries taking it at the same pace while another owner holds it, and calls the hooks
 * on every change. Never gives up; `stop()` releases the lease.
 */
export class LeaseKeeper {
  private timer: NodeJS.Timeout | null = null;
  private holding = false;
  private running = false;
  private tick: Promise<void> = Promise.resolve();

  constructor(
    private readonly lease: Lease,
    private readonly hooks: LeaseKeeperHooks,
    private readonly renewEveryMs: number,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  /** Stops renewing, runs onLost if held, and releases the lease. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.tick;
    if (this.holding) {
      this.holding = false;
      await this.hooks.onLost(new Error('stopping'));
    }
    await this.lease.release().catch((error: unknown) => this.hooks.onError?.(error));
  }

  /** One round: try to take or renew, then react to a change. Exposed for tests. */
  async runOnce(): Promise<void> {
    let held = false;
    let failure: unknown = null;
    try {
      held = await this.lease.tryAcquire();
    } catch (error) {
      failure = error;
      this.hooks.onError?.(error);
      // A failed renewal does not end the lease yet; its expiry does.
      held = this.lease.isHeld();
    }
    if (held && !this.holding) {
      this.holding = true;
      await this.startWork();
    } else if (!held && this.holding) {
      this.holding = false;
      await this.hooks.onLost(failure ?? new Error(`lease taken over or expired (owner ${this.lease.owner})`));
    }
  }

  /**
   * onAcquired, renewing the lease meanwhile: starting may take longer than the lease (index
   * builds, the webhook feed's first scan), and a standby must not take over a starting holder.
   * A start that fails is not a holder: what did start is stopped and the lease given up.
   */
  private async startWork(): Promise<void> {
    const inFlight = new Set<Promise<unknown>>();
    const renewing = setInterval(() => {
      const renewal = this.lease.tryAcquire().catch((error: unknown) => this.hooks.onError?.(error));
      inFlight.add(renewal);
      void renewal.finally(() => inFlight.delete(renewal));
    }, this.renewEveryMs);
    let failure: { error: unknown } | null = null;
    try {
      await this.hooks.onAcquired();
    } catch (error) {
      failure = { error };
    }
    // No renewal may land after the lease is given up (it would take it again for a whole TTL).
    clearInterval(renewing);
    await Promise.all(inFlight);
    if (failure === null) return;
    this.holding = false;
    this.hooks.onError?.(failure.error);
    await Promise.resolve(this.hooks.onLost(failure.error)).catch((stopError: unknown) => this.hooks.onError?.(stopError));
    await this.lease.release().catch((releaseError: unknown) => this.hooks.onError?.(releaseError));
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      this.tick = this.runOnce()
        .catch((error: unknown) => this.hooks.onError?.(error))
        .finally(() => {
          if (this.running) this.schedule(this.renewEveryMs);
        });
    }, delayMs);
  }
}
