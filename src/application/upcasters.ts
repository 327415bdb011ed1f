import type { RecordedEvent } from '../ports/event-store.js';

/**
 * Old event versions are upcast on read, never rewritten. When an event's shape changes,
 * bump SCHEMA_VERSION and register here a function that lifts version N data to N + 1.
 */
type Upcaster = (data: Record<string, unknown>) => Record<string, unknown>;

/** Per event type: what an older version lacks (for analysts reading the log as stored), and the steps that lift it. */
interface TypeUpcasters {
  older: string;
  steps: Record<number, Upcaster>;
}

const upcasters: Record<string, TypeUpcasters> = {
  RewardGranted: {
    // v2 (SPEC §5.3, credit entries accumulate): before it every grant was its own entry.
    // v3 (SPEC §11, clawback): grants before it carry no clawback policy, i.e. none.
    older: 'before version 2 no `entry_id` (each grant was its own entry: read as `grant_id`); before version 3 no `clawback` (read as `"none"`)',
    steps: { 1: (data) => ({ ...data, entry_id: data.grant_id }), 2: (data) => ({ ...data, clawback: 'none' }) },
  },
  UserConverted: {
    // v3 (SPEC §11, CONVERSIONS_FROM): every conversion before it was counted from the client.
    older: 'before version 3 no `source`, `purchase` or `program_id` (read as `"client"`, null, null)',
    steps: { 1: (data) => data, 2: (data) => ({ ...data, source: 'client', purchase: null, program_id: null }) },
  },
  UserChurned: {
    // v4 (analytics by program): churns before it did not name the claim's program.
    older: 'before version 4 no `program_id` (read as null)',
    steps: { 1: (data) => data, 2: (data) => data, 3: (data) => ({ ...data, program_id: null }) },
  },
  PoolCodeRequested: {
    // v5: a waiting grant's expires_at (absent before it was kept: never) and grant_position (none before v5: first in line).
    older: 'before version 5 no `grant_position` (read as null) and possibly no `expires_at` (read as null: never)',
    steps: { 1: v5PoolRequest, 2: v5PoolRequest, 3: v5PoolRequest, 4: v5PoolRequest },
  },
  PurchaseRecorded: {
    // v7: a purchase recorded after a later expiry of its subscription says so; none before v7 was.
    older: 'before version 7 no `expired_before` (read as false)',
    steps: { 1: v7Recorded, 2: v7Recorded, 3: v7Recorded, 4: v7Recorded, 5: v7Recorded, 6: v7Recorded },
  },
  RenewalRecorded: {
    older: 'before version 7 no `expired_before` (read as false)',
    steps: { 1: v7Recorded, 2: v7Recorded, 3: v7Recorded, 4: v7Recorded, 5: v7Recorded, 6: v7Recorded },
  },
  NotificationRejected: {
    // v6: a rejection whose payload was read (signed for another app) names its notification; none before v6 did.
    older: 'before version 6 no `notification_id` (read as null)',
    steps: { 1: v6Rejection, 2: v6Rejection, 3: v6Rejection, 4: v6Rejection, 5: v6Rejection },
  },
};

/** For the event catalogue (docs/events.md): each type written differently by older versions, and what those lack. */
export function olderVersionNotes(): { type: string; older: string }[] {
  return Object.entries(upcasters).map(([type, { older }]) => ({ type, older }));
}

function v7Recorded(data: Record<string, unknown>): Record<string, unknown> {
  return { ...data, expired_before: false };
}

function v6Rejection(data: Record<string, unknown>): Record<string, unknown> {
  return { ...data, notification_id: null };
}

function v5PoolRequest(data: Record<string, unknown>): Record<string, unknown> {
  return { ...data, expires_at: data.expires_at ?? null, grant_position: null };
}

/** A stored event's data at the current version, lifted from the version its metadata names. */
export function upcastRecord(record: Pick<RecordedEvent, 'type' | 'data' | 'metadata'>): Record<string, unknown> {
  return upcast(record.type, Number(record.metadata.schema_version ?? 1), record.data);
}

function upcast(type: string, version: number, data: Record<string, unknown>): Record<string, unknown> {
  let current = data;
  for (let step = version; upcasters[type]?.steps[step]; step += 1) current = upcasters[type]!.steps[step]!(current);
  return current;
}
