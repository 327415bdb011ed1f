import type { Backend } from '../../src/backends/backend.js';
import { StoreUnavailableError } from '../../src/ports/event-store.js';

/**
 * Wraps a real backend so a test can make it fail on demand: `unavailable` throws the
 * port's StoreUnavailableError, `broken` throws a plain error (a bug) — from the next call on.
 */
export class FaultSwitch {
  mode: 'ok' | 'unavailable' | 'broken' = 'ok';
  /** Only calls for which this returns true fail (all by default). */
  when: (method: string, args: unknown[]) => boolean = () => true;

  check(method: string, args: unknown[]): void {
    if (this.mode === 'ok' || !this.when(method, args)) return;
    if (this.mode === 'unavailable') throw new StoreUnavailableError(`injected: ${method} unavailable`);
    throw new Error(`injected bug in ${method}: secret internals /var/lib/db`);
  }
}

function guard<T extends object>(target: T, faults: FaultSwitch, methods: string[]): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      const value = Reflect.get(object, property, receiver) as unknown;
      if (typeof value !== 'function' || !methods.includes(String(property))) return typeof value === 'function' ? value.bind(object) : value;
      return async (...args: unknown[]) => {
        faults.check(String(property), args);
        return (value as (...a: unknown[]) => unknown).apply(object, args);
      };
    },
  });
}

export function faultyBackend(faults: FaultSwitch) {
  return (backend: Backend): Backend => ({
    ...backend,
    eventStore: guard(backend.eventStore, faults, ['append', 'readStream']),
    readStore: guard(backend.readStore, faults, ['get', 'getMany', 'find', 'commitBatches']),
  });
}
