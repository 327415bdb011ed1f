import type { LoggedEvent } from '../src/application/event-log.js';
import { type OperationRecord, operationIdOf, operationRecordOf } from '../src/domain/idempotency.js';
import { appUserIdOf } from '../src/domain/events/index.js';
import type { Doc, DocumentRef, Projection } from './projection.js';

export const OPERATIONS = 'operations';

/** app_user_id has no control characters (SPEC §3), so the separator cannot be ambiguous. */
export function operationDocumentId(appUserId: string, operationId: string): string {
  return `${appUserId}\u001f${operationId}`;
}

/**
 * The operations index: every (user, operation_id) ever used, with the answer it got. One small
 * document per operation, so looking one up costs the same after 100,000 withdrawals as after one.
 */
export const operationsProjection: Projection = {
  name: 'operations',
  version: 1,
  collections: [{ name: OPERATIONS, indexes: [] }],
  eventTypes: ['CreditsWithdrawn', 'RewardGranted', 'RewardGrantSkipped'],
  targets: (event) => {
    const operationId = operationIdOf(event);
    const appUserId = appUserIdOf(event.stream);
    return operationId === null || appUserId === null ? [] : [{ collection: OPERATIONS, id: operationDocumentId(appUserId, operationId) }];
  },
  evolve: (_ref: DocumentRef, doc: Doc | null, event: LoggedEvent): Doc | null =>
    operationRecordOf(doc as OperationRecord | null, event) as unknown as Doc | null,
};
