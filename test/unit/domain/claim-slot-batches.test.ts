import { expect } from 'chai';
import { decideSlotRequests } from '../../../src/domain/codes/claim-slots.js';

describe('decideSlotRequests (claims queued on one code, appended together)', () => {
  it('decides in arrival order against the running count: takes up to the limit, then LIMIT_REACHED', () => {
    const { events, result } = decideSlotRequests({ taken: 1, window: undefined }, [
      { kind: 'take', claim_id: 'a', claimer: 'ann', limit: 3 },
      { kind: 'take', claim_id: 'b', claimer: 'bob', limit: 3 },
      { kind: 'take', claim_id: 'c', claimer: 'cat', limit: 3 },
      { kind: 'release', claim_id: 'a', claimer: 'ann' },
      { kind: 'take', claim_id: 'd', claimer: 'dan', limit: 3 },
    ]);
    expect(
      events.map((event) => [event.type, (event.data as { claim_id: string; taken: number }).claim_id, (event.data as { taken: number }).taken]),
    ).to.deep.equal([
      ['ClaimSlotTaken', 'a', 2],
      ['ClaimSlotTaken', 'b', 3],
      ['ClaimSlotReleased', 'a', 2],
      ['ClaimSlotTaken', 'd', 3],
    ]);
    expect(result.outcomes.map((outcome) => (outcome.ok ? 'ok' : outcome.error.code))).to.deep.equal(['ok', 'ok', 'CLAIM.LIMIT_REACHED', 'ok', 'ok']);
    expect(result.requestOfEvent).to.deep.equal([0, 1, 3, 4]);
  });

  it('limit 0 is unlimited; a release never goes below zero', () => {
    const { events, result } = decideSlotRequests({ taken: 0, window: undefined }, [
      { kind: 'release', claim_id: 'x', claimer: 'xu' },
      { kind: 'take', claim_id: 'y', claimer: 'yo', limit: 0 },
    ]);
    expect(events.map((event) => (event.data as { taken: number }).taken)).to.deep.equal([0, 1]);
    expect(result.outcomes.every((outcome) => outcome.ok)).to.equal(true);
  });

  it("a take replacing the claimer's abandoned claims releases their slots just before it, in its own request, even when it is refused", () => {
    const { events, result } = decideSlotRequests({ taken: 1, window: undefined }, [
      { kind: 'take', claim_id: 'b', claimer: 'bob', limit: 1 },
      { kind: 'take', claim_id: 'a2', claimer: 'ann', limit: 1, replacing: ['a1'] },
      { kind: 'take', claim_id: 'c', claimer: 'cat', limit: 1 },
      { kind: 'take', claim_id: 'a3', claimer: 'ann', limit: 1, replacing: ['a0'], refused: { rule_id: 'r', kind: 'blocked_users', action: 'reject' } },
    ]);
    expect(events.map((event) => [event.type, (event.data as { claim_id: string }).claim_id, (event.data as { taken: number }).taken])).to.deep.equal([
      ['ClaimSlotReleased', 'a1', 0],
      ['ClaimSlotTaken', 'a2', 1],
      ['ClaimSlotReleased', 'a0', 0],
    ]);
    expect(result.outcomes.map((outcome) => (outcome.ok ? 'ok' : outcome.error.code))).to.deep.equal([
      'CLAIM.LIMIT_REACHED',
      'ok',
      'CLAIM.LIMIT_REACHED',
      'CLAIM.REJECTED_BY_RULE',
    ]);
    expect(result.requestOfEvent).to.deep.equal([1, 1, 3]);
  });
});
