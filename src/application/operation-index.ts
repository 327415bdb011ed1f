import { inject, injectable } from 'tsyringe';
import type { Doc } from '../../projections/projection.js';
import { OPERATIONS, operationDocumentId, operationRecordIn, operationsProjection } from '../../projections/operations.js';
import type { Operation, OperationRecord } from '../domain/idempotency.js';
import { READ_MODELS_WAIT_MS, type ReadConsistency, ReadModelsBehindError } from '../ports/read-consistency.js';
import type { ReadStore } from '../ports/read-store.js';
import { TOKENS } from '../ports/tokens.js';

/**
 * Finds what a (user, operation_id) was first used for by an operation of the same kind (src/domain/idempotency.ts).
 * The index is a read model, so a lookup first waits until it has passed the user stream's
 * last event: the command then appends with that stream's exact revision, so no operation can
 * slip in between the lookup and the append unnoticed (a conflict re-reads and looks again).
 */
@injectable()
export class OperationIndex {
  constructor(
    @inject(TOKENS.ReadStore) private readonly readStore: ReadStore,
    @inject(TOKENS.ReadConsistency) private readonly consistency: ReadConsistency,
  ) {}

  /** `streamPosition`: global position of the user stream's last event (null: no stream). */
  async lookup(appUserId: string, operation: Operation | null, streamPosition: bigint | null): Promise<OperationRecord | null> {
    if (operation === null || streamPosition === null) return null;
    if (!(await this.consistency.waitFor(streamPosition, READ_MODELS_WAIT_MS, operationsProjection.name))) {
      // Answering without the index could apply an operation twice: refuse instead (503).
      throw new ReadModelsBehindError('The operations index is behind the log; nothing was done, retry the request');
    }
    return operationRecordIn(await this.readStore.get<Doc>(OPERATIONS, operationDocumentId(appUserId, operation.id)), operation);
  }
}
