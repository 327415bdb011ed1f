import type { Backend } from '../../src/backends/backend.js';

/** What the application asked of its stores: rows and JSON bytes read and written, calls. */
export interface StoreCounts {
  /** Writes, and reads that found something. */
  calls: number;
  rows_read: number;
  bytes_read: number;
  rows_written: number;
  bytes_written: number;
}

const zeroCounts = (): StoreCounts => ({ calls: 0, rows_read: 0, bytes_read: 0, rows_written: 0, bytes_written: 0 });

/** Methods that change a store; every other method is a read. */
const WRITES = /^(append|commit|put|write|save|insert|update|delete|remove|swap|reset|record|release|acquire)/i;
/** Methods outside the data path (subscriptions, lifecycle). */
const IGNORED = new Set(['watch', 'close', 'constructor', 'then']);

function bytesOf(value: unknown): number {
  if (value === undefined) return 0;
  return (
    JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? item.toString() : item instanceof Map ? Object.fromEntries(item) : item))
      ?.length ?? 0
  );
}

function rowsOf(value: unknown): number {
  if (value === null || value === undefined) return 0;
  if (Array.isArray(value)) return value.length;
  if (value instanceof Map || value instanceof Set) return value.size;
  return typeof value === 'object' ? 1 : 0;
}

/** What a read found: a follower's page (EventStore#readPage) found its events; its cursor is not a row. */
function foundBy(result: unknown): unknown {
  return typeof result === 'object' && result !== null && 'events' in result && 'through' in result ? (result as { events: unknown }).events : result;
}

/** Rows a write method writes: events of an append, changes of projector batches, else 1 per argument object. */
function rowsWritten(method: string, args: unknown[]): number {
  if (method === 'append') return rowsOf(args[1]);
  if (method === 'commitBatches') return (args[0] as { changes: unknown[] }[]).reduce((sum, batch) => sum + batch.changes.length, 0);
  return args.filter((arg) => typeof arg === 'object' && arg !== null).reduce<number>((sum, arg) => sum + Math.max(1, rowsOf(arg)), 0);
}

/**
 * Wraps an object of a store port so every call is counted into `counts` (while `enabled`),
 * whatever methods the port has now or later: a read counts the rows and JSON bytes it
 * returns, a write the rows and JSON bytes it is given.
 */
function counting<T extends object>(target: T, counter: StoreCounter, store: StoreName): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      const value = Reflect.get(object, property, receiver) as unknown;
      if (typeof value !== 'function' || typeof property !== 'string' || IGNORED.has(property)) return value;
      return (...args: unknown[]) => {
        const result = (value as (...parameters: unknown[]) => unknown).apply(object, args);
        if (WRITES.test(property)) {
          counter.wrote(store, property, args);
          return result;
        }
        if (!(result instanceof Promise)) {
          counter.read(store, result);
          return result;
        }
        return result.then((resolved: unknown) => {
          counter.read(store, resolved);
          return resolved;
        });
      };
    },
  });
}

export type StoreName = 'event_store' | 'read_store';

/** Counts in all, and for each store. */
export interface CountsByStore {
  total: StoreCounts;
  event_store: StoreCounts;
  read_store: StoreCounts;
}

const zeroByStore = (): CountsByStore => ({ total: zeroCounts(), event_store: zeroCounts(), read_store: zeroCounts() });

export class StoreCounter {
  enabled = false;
  byStore = zeroByStore();

  /** Counts of both stores together. */
  get counts(): StoreCounts {
    return this.byStore.total;
  }

  /** Store calls that found or wrote something, counted even while not counting (cheap). */
  activity = 0;

  /**
   * A read that found something. Reads that find nothing are not counted, not even as calls:
   * the log followers poll the log a few times a second while idle.
   */
  read(store: StoreName, result: unknown): void {
    const found = foundBy(result);
    const rows = rowsOf(found);
    if (rows === 0) return;
    this.activity += 1;
    if (!this.enabled) return;
    const bytes = bytesOf(found);
    for (const counts of [this.byStore.total, this.byStore[store]]) {
      counts.calls += 1;
      counts.rows_read += rows;
      counts.bytes_read += bytes;
    }
  }

  wrote(store: StoreName, method: string, args: unknown[]): void {
    this.activity += 1;
    if (!this.enabled) return;
    const rows = rowsWritten(method, args);
    const bytes = bytesOf(args);
    for (const counts of [this.byStore.total, this.byStore[store]]) {
      counts.calls += 1;
      counts.rows_written += rows;
      counts.bytes_written += bytes;
    }
  }

  /** Starts counting from zero. */
  start(): void {
    this.byStore = zeroByStore();
    this.enabled = true;
  }

  stop(): CountsByStore {
    this.enabled = false;
    return this.byStore;
  }

  /** The backend with both stores counted. */
  wrap(backend: Backend): Backend {
    return {
      ...backend,
      eventStore: counting(backend.eventStore, this, 'event_store'),
      readStore: counting(backend.readStore, this, 'read_store'),
      close: () => backend.close(),
    };
  }
}
