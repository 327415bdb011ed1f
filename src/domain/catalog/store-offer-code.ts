import { isDeepStrictEqual } from 'node:util';
import type { Decision, Evolver } from '../decider.js';
import type { StoreOfferCodeEntry } from '../events/store-events.js';

/** The `offer-code-{id}` stream folds to its latest catalog entry (null before the first). */
export const storeOfferCodeEvolver: Evolver<StoreOfferCodeEntry | null> = {
  name: 'store-offer-code',
  version: 1,
  initialState: () => null,
  evolve: (state, event) => (event.type === 'StoreOfferCodeCreated' || event.type === 'StoreOfferCodeUpdated' ? event.data : state),
};

export interface UpsertOutcome {
  /** true when the stream had no entry before. */
  created: boolean;
  entry: StoreOfferCodeEntry;
}

/**
 * PUT of a catalog entry: Created for a new id, Updated when anything differs, nothing when
 * the same entry is stored again (each change is an event; a repeat is not a change).
 */
export function decideUpsertStoreOfferCode(state: StoreOfferCodeEntry | null, entry: StoreOfferCodeEntry): Decision<UpsertOutcome> {
  if (state === null) return { events: [{ type: 'StoreOfferCodeCreated', data: entry }], result: { created: true, entry } };
  if (isDeepStrictEqual(state, entry)) return { events: [], result: { created: false, entry: state } };
  return { events: [{ type: 'StoreOfferCodeUpdated', data: entry }], result: { created: false, entry } };
}
