import type { LoggedEvent } from '../src/application/event-log.js';
import type { OperationRecord } from '../src/domain/idempotency.js';
import { appUserIdOf } from '../src/domain/events/index.js';
import type { Doc, DocumentRef, Projection } from './projection.js';

export const OPERATIONS = 'operations';

/** app_user_id has no control characters (SPEC §3), so the separator cannot be ambiguous. */
export function operationDocumentId(appUserId: string, operationId: string): string {
  return `${appUserId}\u001f${operationId}`;
}

function operationOf(event: LoggedEvent): string | null {
  switch (event.type) {
    case 'CreditsWithdrawn':
      return event.data.operation_id;
    case 'RewardGranted':
      return event.data.cause.type === 'manual' ? event.data.cause.operation_id : null;
    case 'RewardGrantSkipped':
      return event.data.operation_id;
    default:
      return null;
  }
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
    const operationId = operationOf(event);
    const appUserId = appUserIdOf(event.stream);
    return operationId === null || appUserId === null ? [] : [{ collection: OPERATIONS, id: operationDocumentId(appUserId, operationId) }];
  },
  evolve: (_ref: DocumentRef, doc: Doc | null, event: LoggedEvent): Doc | null => {
    let record: OperationRecord;
    if (event.type === 'CreditsWithdrawn') {
      const { key, credits_requested_to_withdraw, credits_withdrawn, credits_available_at_start, credits_available_at_end } = event.data;
      record = {
        kind: 'withdraw',
        key,
        amount: credits_requested_to_withdraw,
        result: { credits_available_at_start, credits_available_at_end, credits_requested_to_withdraw, credits_withdrawn },
      };
    } else if (event.type === 'RewardGranted') {
      const earlier = doc as OperationRecord | null;
      const granted = earlier?.kind === 'grant' ? earlier.result.granted : [];
      record = { kind: 'grant', key: event.data.reward_key, amount: null, result: { created: true, granted: [...granted, event.data] } };
    } else if (event.type === 'RewardGrantSkipped') {
      record = { kind: 'grant', key: event.data.reward_key, amount: null, result: { created: false, granted: [] } };
    } else {
      return doc;
    }
    return record as unknown as Doc;
  },
};
