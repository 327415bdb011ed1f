import type { LoggedEvent } from '../src/application/event-log.js';
import type { Evolver } from '../src/domain/decider.js';
import type { EventType } from '../src/domain/events/index.js';
import type { IndexSpec } from '../src/ports/read-store.js';

export type Doc = Record<string, unknown>;

/** A log position zero-padded to 20 digits (2^64 - 1 has 20): sorts like the number, as a string, in every store. */
export function sortablePosition(position: bigint | string): string {
  return position.toString().padStart(20, '0');
}

/**
 * The UTC day of a time the service recorded, the day analytics and attribution count a figure
 * on: a claim's `claimed_at`, a conversion's `converted_at`, a churn's `churned_at`, a purchase's
 * or refund's `recorded_at` (not the provider's `occurred_at`). These are the service's clock when
 * it appended the event; unlike the log's own timestamp they travel with the data when the log is
 * migrated to another store.
 */
export const utcDayOf = (time: string): string =>
  // A UTC time in ISO form (what the service writes) starts with its day; anything else is parsed.
  time[10] === 'T' && time.endsWith('Z') ? time.slice(0, 10) : new Date(time).toISOString().slice(0, 10);

export interface DocumentRef {
  collection: string;
  id: string;
}

/**
 * A read model: which documents an event touches and how each one changes. Pure — no I/O.
 * Bump `version` whenever `evolve` changes what it writes; the service then asks for a replay.
 * A projection that folds with a command-side evolver derives its version from it
 * (`foldsWith`), so changing that evolver asks for a replay too.
 */
export interface Projection {
  name: string;
  version: number;
  /** The command-side evolvers `evolve` folds with (their versions are part of `version`). */
  evolvers?: readonly Pick<Evolver<unknown>, 'name' | 'version'>[];
  collections: { name: string; indexes: IndexSpec[] }[];
  eventTypes: readonly EventType[];
  targets(event: LoggedEvent): DocumentRef[];
  /** The new document; null deletes it. */
  evolve(ref: DocumentRef, doc: Doc | null, event: LoggedEvent): Doc | null;
}

/**
 * `version` and `evolvers` of a projection that folds with command-side evolvers: its own
 * revision (changes to the projection's code) plus each evolver's version.
 */
export function foldsWith(ownRevision: number, evolvers: readonly Pick<Evolver<unknown>, 'name' | 'version'>[]): Pick<Projection, 'version' | 'evolvers'> {
  return { version: evolvers.reduce((sum, evolver) => sum + evolver.version, ownRevision), evolvers };
}
