import { operationDocumentId, operationRecordIn, operationsProjection } from '../../projections/operations.js';
import type { LoggedEvent } from '../../src/application/event-log.js';
import type { DomainEvent } from '../../src/domain/events/index.js';
import type { OperationKind, OperationRecord } from '../../src/domain/idempotency.js';

/**
 * What the operations index (projections/operations.ts) holds for an operation of `kind` with
 * `operationId` after `events` of user `appUserId`: the `earlier` a handler hands its decider.
 */
export function earlierOf(kind: OperationKind, events: readonly DomainEvent[], operationId: string, appUserId = 'ann'): OperationRecord | null {
  const id = operationDocumentId(appUserId, operationId);
  let doc: Record<string, unknown> | null = null;
  events.forEach((event, index) => {
    const logged = {
      ...event,
      id: `e${index}`,
      stream: `user-${appUserId}`,
      revision: index,
      position: BigInt(index + 1),
      metadata: {},
      recordedAt: new Date(0),
    } as unknown as LoggedEvent;
    for (const ref of operationsProjection.targets(logged)) if (ref.id === id) doc = operationsProjection.evolve(ref, doc, logged);
  });
  return operationRecordIn(doc, { id: operationId, kind });
}
