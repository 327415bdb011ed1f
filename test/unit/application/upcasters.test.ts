import { expect } from 'chai';
import { eventSchemas, SCHEMA_VERSION } from '../../../src/domain/events/index.js';
import { toLogged } from '../../../src/application/event-log.js';
import { replayedEvent } from '../../../src/application/projections/projection-replay.js';
import type { RecordedEvent } from '../../../src/ports/event-store.js';
import { revenueNotification } from '../../support/events.js';

const recorded = (type: string, data: Record<string, unknown>, schemaVersion: number): RecordedEvent => ({
  id: `e-${type}-${schemaVersion}`,
  stream: 'pool-gift',
  revision: 0,
  position: 1n,
  type,
  data,
  metadata: { correlation_id: 'c', causation_id: 'c', actor: 'test', schema_version: schemaVersion },
  recordedAt: new Date('2026-01-01T00:00:00Z'),
});

/** Every zod schema reachable from `schema` (object shapes, elements, options, inner types…). */
function* schemasIn(schema: unknown, seen = new Set<unknown>()): Generator<{ _zod: { def: { type: string } } }> {
  if (typeof schema !== 'object' || schema === null || seen.has(schema) || !('_zod' in schema)) return;
  seen.add(schema);
  const zodSchema = schema as { _zod: { def: Record<string, unknown> & { type: string } } };
  yield zodSchema;
  for (const value of Object.values(zodSchema._zod.def)) {
    const children = Array.isArray(value) ? value : typeof value === 'object' && value !== null && !('_zod' in value) ? Object.values(value) : [value];
    for (const child of children) yield* schemasIn(child, seen);
  }
}

describe('event schemas and upcasters: a live read and a replay see the same data', () => {
  it('no event schema fills or transforms a value (a replay does not parse again: it would differ from a live read)', () => {
    const transforming = new Set(['default', 'prefault', 'transform', 'pipe', 'catch']);
    const found = Object.entries(eventSchemas).flatMap(([type, schema]) =>
      [...schemasIn(schema)].filter((inner) => transforming.has(inner._zod.def.type)).map((inner) => `${type}: ${inner._zod.def.type}`),
    );
    expect(found).to.deep.equal([]);
  });

  for (const version of [1, 4]) {
    it(`a PoolCodeRequested of version ${version} without expires_at or grant_position reads as null in both, live and in a replay`, () => {
      const data = { grant_id: 'g1', app_user_id: 'ann' };
      const live = toLogged(recorded('PoolCodeRequested', { ...data }, version));
      const replayed = replayedEvent(recorded('PoolCodeRequested', { ...data }, version));
      expect(live.data).to.deep.equal({ ...data, expires_at: null, grant_position: null });
      expect(replayed.data).to.deep.equal(live.data);
    });
  }

  for (const version of [1, 5]) {
    it(`a NotificationRejected of version ${version} (before rejections named their notification) reads with notification_id null, live and in a replay`, () => {
      const data = { provider: 'stripe', received_at: '2026-01-01T00:00:00.000Z', reason: 'bad Stripe-Signature' };
      const live = toLogged(recorded('NotificationRejected', { ...data }, version));
      expect(live.data).to.deep.equal({ ...data, notification_id: null });
      expect(replayedEvent(recorded('NotificationRejected', { ...data }, version)).data).to.deep.equal(live.data);
    });
  }

  for (const [type, version] of [
    ['PurchaseRecorded', 3],
    ['RenewalRecorded', 6],
  ] as const) {
    it(`a ${type} of version ${version} (before late purchases were marked) reads with expired_before false, live and in a replay`, () => {
      const { match: _match, ...fact } = revenueNotification({ kind: type === 'PurchaseRecorded' ? 'purchase' : 'renewal' });
      const data = { ...fact, recorded_at: fact.occurred_at, attribution: null, refunded_before: false };
      const live = toLogged({ ...recorded(type, { ...data }, version), stream: 'user-ann' });
      expect(live.data).to.deep.equal({ ...data, expired_before: false });
      expect(replayedEvent({ ...recorded(type, { ...data }, version), stream: 'user-ann' }).data).to.deep.equal(live.data);
    });
  }

  it('a current NotificationRejected keeps its notification_id', () => {
    const data = { provider: 'google-play', received_at: '2026-01-01T00:00:00.000Z', reason: 'notification for another package', notification_id: 'm-1' };
    expect(toLogged(recorded('NotificationRejected', data, SCHEMA_VERSION)).data).to.deep.equal(data);
  });

  it('a current PoolCodeRequested keeps its expires_at and grant_position', () => {
    const data = { grant_id: 'g1', app_user_id: 'ann', expires_at: '2026-02-01T00:00:00.000Z', grant_position: '42' };
    expect(toLogged(recorded('PoolCodeRequested', data, SCHEMA_VERSION)).data).to.deep.equal(data);
    expect(replayedEvent(recorded('PoolCodeRequested', { ...data }, SCHEMA_VERSION)).data).to.deep.equal(data);
  });
});
