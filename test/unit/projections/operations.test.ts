import { expect } from 'chai';
import { operationRecordIn, operationsProjection } from '../../../projections/operations.js';
import type { LoggedEvent } from '../../../src/application/event-log.js';
import type { OperationRecord } from '../../../src/domain/idempotency.js';

const T0 = '2026-01-01T00:00:00.000Z';

function logged(position: number, type: string, data: Record<string, unknown>): LoggedEvent {
  return {
    id: `e${position}`,
    stream: 'user-ann',
    revision: position,
    position: BigInt(position),
    type,
    data,
    metadata: {},
    recordedAt: new Date(0),
  } as unknown as LoggedEvent;
}

const withdrawal = logged(1, 'CreditsWithdrawn', {
  operation_id: 'order-1',
  key: 'coins',
  withdrawn_at: T0,
  credits_requested_to_withdraw: 5,
  credits_withdrawn: 5,
  credits_available_at_start: 9,
  credits_available_at_end: 4,
  debits: [],
});
const grantSkipped = logged(2, 'RewardGrantSkipped', { reward_key: 'vip', operation_id: 'order-1', reason: 'already_active' });
const withdrawRecord: OperationRecord = {
  kind: 'withdraw',
  key: 'coins',
  amount: 5,
  result: { credits_available_at_start: 9, credits_available_at_end: 4, credits_requested_to_withdraw: 5, credits_withdrawn: 5 },
};

describe('projection: operations (the operation ids withdrawals and grants were first used for)', () => {
  const fold = (events: LoggedEvent[], start: Record<string, unknown> | null = null) =>
    events.reduce<Record<string, unknown> | null>((doc, event) => {
      const [ref] = operationsProjection.targets(event);
      expect(ref, event.type).to.deep.equal({ collection: 'operations', id: 'ann\u001forder-1' });
      return operationsProjection.evolve(ref!, doc, event);
    }, start);

  it('keeps a withdrawal and a grant with one operation id apart, in one document', () => {
    const doc = fold([withdrawal, grantSkipped]);
    expect(operationRecordIn(doc, { id: 'order-1', kind: 'withdraw' })).to.deep.equal(withdrawRecord);
    expect(operationRecordIn(doc, { id: 'order-1', kind: 'grant' })).to.deep.equal({
      kind: 'grant',
      key: 'vip',
      amount: null,
      result: { created: false, granted: [] },
    });
  });

  it('reads a document version 1 wrote (one record, whatever its kind) as the record of its kind, and folds on from it', () => {
    const legacy = { ...withdrawRecord } as unknown as Record<string, unknown>;
    expect(operationRecordIn(legacy, { id: 'order-1', kind: 'withdraw' })).to.deep.equal(withdrawRecord);
    expect(operationRecordIn(legacy, { id: 'order-1', kind: 'grant' })).to.equal(null);
    const doc = fold([grantSkipped], legacy);
    expect(operationRecordIn(doc, { id: 'order-1', kind: 'withdraw' })).to.deep.equal(withdrawRecord);
    expect(operationRecordIn(doc, { id: 'order-1', kind: 'grant' })).to.include({ kind: 'grant', key: 'vip' });
    expect(operationsProjection.version).to.equal(2);
  });
});
