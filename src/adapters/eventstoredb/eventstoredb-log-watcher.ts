import { type AllStreamSubscription, END, type EventStoreDBClient, excludeSystemEvents, type Position } from '@eventstore/db-client';
import { resubscribeDelayMs } from './eventstoredb-mapping.js';

export type SubscriptionDropped = (error: unknown, retryInMs: number) => void;

/** Runs `work` after `ms`; returns a cancel function. (Injectable so tests need no timers.) */
export type Scheduler = (work: () => void, ms: number) => () => void;

const realTimers: Scheduler = (work, ms) => {
  const timer = setTimeout(work, ms);
  timer.unref();
  return () => clearTimeout(timer);
};

export interface LogWatcherOptions {
  onDropped?: SubscriptionDropped;
  schedule?: Scheduler;
}

/**
 * The EventStore port's `watch()` on EventStoreDB: one live `$all` subscription (system events
 * filtered out on the server) shared by every listener. It starts at the end of the log,
 * remembers the last event or checkpoint it saw (`checkpointReached` moves it through stretches
 * the filter hides), and when the server drops it, re-subscribes from there with growing
 * back-off, forever. Listeners only get a hint; they always read the log themselves.
 */
export class EventStoreDbLogWatcher {
  private readonly listeners = new Set<() => void>();
  private subscription: AllStreamSubscription | null = null;
  private resumeFrom: Position | null = null;
  private attempt = 0;
  private cancelRetry: (() => void) | null = null;
  private closed = false;
  private readonly onDropped: SubscriptionDropped;
  private readonly schedule: Scheduler;

  constructor(
    private readonly client: EventStoreDBClient,
    options: LogWatcherOptions = {},
  ) {
    this.onDropped = options.onDropped ?? (() => {});
    this.schedule = options.schedule ?? realTimers;
  }

  add(listener: () => void): () => void {
    // A wrapper per call, so the same function registered twice is two listeners.
    const entry = () => listener();
    this.listeners.add(entry);
    if (this.listeners.size === 1) this.subscribe();
    return () => {
      if (!this.listeners.delete(entry)) return;
      if (this.listeners.size === 0) this.unsubscribe();
    };
  }

  close(): void {
    this.closed = true;
    this.listeners.clear();
    this.unsubscribe();
  }

  private subscribe(): void {
    if (this.closed || this.subscription !== null || this.listeners.size === 0) return;
    const subscription = this.client.subscribeToAll({
      fromPosition: this.resumeFrom ?? END,
      filter: excludeSystemEvents({
        checkpointReached: (_subscription, position) => {
          this.resumeFrom = position;
        },
      }),
    });
    this.subscription = subscription;
    // Confirmed: anything committed while we were not subscribed has been missed, so hint once.
    subscription.on('confirmation', () => {
      this.attempt = 0;
      this.notify();
    });
    subscription.on('data', (resolved) => {
      this.attempt = 0;
      if (resolved.event?.position) this.resumeFrom = resolved.event.position;
      this.notify();
    });
    subscription.on('error', (error) => this.dropped(subscription, error));
    subscription.on('end', () => this.dropped(subscription, new Error('subscription ended by the server')));
    subscription.on('close', () => this.dropped(subscription, new Error('subscription closed')));
  }

  private dropped(subscription: AllStreamSubscription, error: unknown): void {
    if (this.subscription !== subscription) return;
    this.subscription = null;
    void subscription.unsubscribe().catch(() => {});
    if (this.closed || this.listeners.size === 0) return;
    this.attempt += 1;
    const delay = resubscribeDelayMs(this.attempt);
    this.onDropped(error, delay);
    this.cancelRetry = this.schedule(() => {
      this.cancelRetry = null;
      this.subscribe();
    }, delay);
  }

  private unsubscribe(): void {
    this.cancelRetry?.();
    this.cancelRetry = null;
    const subscription = this.subscription;
    this.subscription = null;
    if (subscription !== null) void subscription.unsubscribe().catch(() => {});
  }

  private notify(): void {
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch {
        // A hint listener must not break the subscription for the others.
      }
    }
  }
}
