import { expect } from 'chai';
import type { DomainEvent } from '../../../src/domain/events/index.js';
import { evolveUser, foldUserEvents, initialUserState } from '../../../src/domain/users/user-state.js';
import { codeClaimed, event, iso, registered, rewardGranted } from '../../support/events.js';

/** A history touching every nested part of the state: grants, operations, stats, abandoned claims. */
function history(): DomainEvent[] {
  return [
    registered('ann'),
    event('ClaimAbandoned', { claim_id: 'c0', code: 'X' }),
    codeClaimed({ claim_id: 'c1' }),
    rewardGranted({ grant_id: 'g1', reward_key: 'coins', kind: 'credit', credits: 10 }),
    rewardGranted({ grant_id: 'g2', reward_key: 'coins', kind: 'credit', credits: 5, cause: { type: 'manual', operation_id: 'op-grant' } }),
    event('CreditsWithdrawn', {
      operation_id: 'op-1',
      key: 'coins',
      withdrawn_at: iso(1_000),
      credits_requested_to_withdraw: 12,
      credits_withdrawn: 12,
      credits_available_at_start: 15,
      credits_available_at_end: 3,
      debits: [
        { grant_id: 'g1', credits: 10 },
        { grant_id: 'g2', credits: 2 },
      ],
    }),
    event('RewardExpired', { grant_id: 'g2', reward_key: 'coins', kind: 'credit', expired_at: iso(2_000), credits_forfeited: 3, balance_after: 0 }),
    event('ReferralClaimCounted', { claimer: 'bob', code: 'ANN123', claims: 1, cause_position: '7' }),
    event('RewardGrantSkipped', { reward_key: 'vip', operation_id: 'op-skip', reason: 'already_active' }),
  ];
}

describe('foldUserEvents', () => {
  it('folds to exactly what evolving event by event gives', () => {
    const events = history();
    expect(foldUserEvents(initialUserState(), events)).to.deep.equal(events.reduce(evolveUser, initialUserState()));
  });

  it('never changes the state it starts from, nor states it returned earlier', () => {
    const events = history();
    const middle = foldUserEvents(initialUserState(), events.slice(0, 5));
    const frozen = structuredClone(middle);
    const end = foldUserEvents(middle, events.slice(5));
    expect(middle).to.deep.equal(frozen);
    expect(end.entries[0]!.credits).to.equal(0);
    expect(middle.entries[0]!.credits).to.equal(10);
  });
});
