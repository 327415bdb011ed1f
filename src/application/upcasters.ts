import type { RecordedEvent } from '../ports/event-store.js';

/**
 * Old event versions are upcast on read, never rewritten. When an event's shape changes,
 * bump SCHEMA_VERSION and register here a function that lifts version N data to N + 1.
 */
type Upcaster = (data: Record<string, unknown>) => Record<string, unknown>;

const upcasters: Record<string, Record<number, Upcaster>> = {
  // v2 (SPEC §5.3, credit entries accumulate): before it every grant was its own entry.
  // v3 (SPEC §11, clawback): grants before it carry no clawback policy, i.e. none.
  RewardGranted: { 1: (data) => ({ ...data, entry_id: data.grant_id }), 2: (data) => ({ ...data, clawback: 'none' }) },
  // v3 (SPEC §11, CONVERSIONS_FROM): every conversion before it was counted from the client.
  UserConverted: { 1: (data) => data, 2: (data) => ({ ...data, source: 'client', purchase: null, program_id: null }) },
  // v4 (analytics by program): churns before it did not name the claim's program.
  UserChurned: { 1: (data) => data, 2: (data) => data, 3: (data) => ({ ...data, program_id: null }) },
  // v5: a waiting grant's expires_at (absent before it was kept: never) and grant_position (none before v5: first in line).
  PoolCodeRequested: { 1: v5PoolRequest, 2: v5PoolRequest, 3: v5PoolRequest, 4: v5PoolRequest },
  // v6: a rejection whose payload was read (signed for another app) names its notification; none before v6 did.
  NotificationRejected: { 1: v6Rejection, 2: v6Rejection, 3: v6Rejection, 4: v6Rejection, 5: v6Rejection },
};

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
  for (let step = version; upcasters[type]?.[step]; step += 1) current = upcasters[type]![step]!(current);
  return current;
}
