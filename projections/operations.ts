import type { LoggedEvent } from '../src/application/event-log.js';
import { type Operation, type OperationKind, type OperationRecord, operationOf, operationRecordOf } from '../src/domain/idempotency.js';
import { appUserIdOf } from '../src/domain/events/index.js';
import type { Doc, DocumentRef, Projection } from './projection.js';

export const OPERATIONS = 'operations';

/** app_user_id has no control characters (SPEC §3), so the separator cannot be ambiguous. */
export function operationDocumentId(appUserId: string, operationId: string): string {
  return `${appUserId}\u001f${operationId}`;
}

/** What one (user, operation_id) was first used for, by kind: a withdrawal and a grant each remember their own. */
type OperationRecords = Partial<Record<OperationKind, OperationRecord>>;

/**
 * The records of an operations document. Version 1 kept one record per document (`{kind, key,
 * …}`): such a document, not yet rebuilt by `npm run replay`, is read as the record of its kind.
 */
function operationRecordsOf(doc: Doc | null): OperationRecords {
  if (doc === null) return {};
  if (typeof doc.kind === 'string') return { [doc.kind as OperationKind]: doc as unknown as OperationRecord };
  return doc as OperationRecords;
}

/** The record of `operation` in its document (null: the id is new to that kind of operation). */
export function operationRecordIn(doc: Doc | null, operation: Operation): OperationRecord | null {
  return operationRecordsOf(doc)[operation.kind] ?? null;
}

/**
 * The operations index: every (user, operation_id) ever used, with the answer it got, for
 * withdrawals and grants apart. One small document per operation id, so looking one up costs
 * the same after 100,000 withdrawals as after one.
 */
export const operationsProjection: Projection = {
  name: 'operations',
  // 2: withdrawals and grants remember their ids apart (1 held one record per id, whatever its kind).
  version: 2,
  collections: [{ name: OPERATIONS, indexes: [] }],
  eventTypes: ['CreditsWithdrawn', 'RewardGranted', 'RewardGrantSkipped'],
  targets: (event) => {
    const operation = operationOf(event);
    const appUserId = appUserIdOf(event.stream);
    return operation === null || appUserId === null ? [] : [{ collection: OPERATIONS, id: operationDocumentId(appUserId, operation.id) }];
  },
  evolve: (_ref: DocumentRef, doc: Doc | null, event: LoggedEvent): Doc | null => {
    const operation = operationOf(event)!;
    const records = operationRecordsOf(doc);
    const record = operationRecordOf(records[operation.kind] ?? null, event);
    return { ...records, [operation.kind]: record } as unknown as Doc;
  },
};
