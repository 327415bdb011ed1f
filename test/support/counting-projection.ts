import type { Projection } from '../../projections/projection.js';

export const COUNTS = 'event_counts';

/** A read model of one document per stream: how many of its UserRegistered events were folded. */
export const counting: Projection = {
  name: 'event_counts',
  version: 1,
  collections: [{ name: COUNTS, indexes: [] }],
  eventTypes: ['UserRegistered'],
  targets: (event) => [{ collection: COUNTS, id: event.stream }],
  evolve: (_ref, doc) => ({ count: ((doc?.count as number | undefined) ?? 0) + 1 }),
};
