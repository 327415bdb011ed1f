import { LRUCache } from 'lru-cache';
import type { Clock } from '../../ports/clock.js';

/**
 * Values kept for a fixed time by the given clock (the service's, so tests can move it), at
 * most `capacity` of them (the least recently stored goes first, by lru-cache). Expired values
 * are dropped when read.
 */
export class TtlCache<V extends object> {
  private readonly entries: LRUCache<string, { value: V; expiresAt: number }>;

  constructor(
    private readonly ttlMs: number,
    private readonly clock: Clock,
    capacity = 1_000,
  ) {
    this.entries = new LRUCache({ max: capacity });
  }

  get(key: string): V | undefined {
    const entry = this.entries.peek(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.clock.now().getTime()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: V): void {
    this.entries.set(key, { value, expiresAt: this.clock.now().getTime() + this.ttlMs });
  }
}
