import type { DomainEvent } from './events/index.js';

/** An event to append; `id` is given when it must be deterministic (idempotent reactions). */
export type NewDomainEvent = DomainEvent & { id?: string };

/** The pure fold of one stream type. `version` changes whenever `evolve` changes (snapshots). */
export interface Evolver<S> {
  name: string;
  version: number;
  initialState(): S;
  evolve(state: S, event: DomainEvent): S;
  /** Folds many events at once, where that is cheaper than evolving one by one (same result). */
  fold?(state: S, events: readonly DomainEvent[]): S;
}

export interface Decision<R> {
  events: NewDomainEvent[];
  result: R;
}
