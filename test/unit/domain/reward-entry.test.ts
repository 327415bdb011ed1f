import { expect } from 'chai';
import { describe, it } from 'mocha';
import { rewardEntryId, USER_REWARDS, usersProjection } from '../../../projections/users.js';
import type { DomainEvent } from '../../../src/domain/events/index.js';
import { entriesChangedBy, entryAfter, entryOpenedBy, type RewardEntry } from '../../../src/domain/rewards/reward-entry.js';
import { foldUserEvents, initialUserState } from '../../../src/domain/users/user-state.js';
import { event, iso, projected, registered, rewardGranted, rewardRevoked, TestLog, creditsWithdrawn } from '../../support/events.js';

function creditClawback(debits: { grant_id: string; credits: number }[], at: string): DomainEvent {
  return rewardRevoked({ grant_id: debits[0]!.grant_id, kind: 'credit', revoked_at: at, debits });
}

describe('reward entries (SPEC §5.3): the one rule both folds use', () => {
  const first = rewardGranted({ grant_id: 'g1', credits: 10 });
  const opened = entryOpenedBy(first.data)!;

  it('a grant opens an entry unless it names an earlier one', () => {
    expect(opened).to.include({ entry_id: 'g1', reward_key: 'coins', kind: 'credit', credits: 10, value: null, updated_at: null });
    expect(entryOpenedBy(rewardGranted({ grant_id: 'g2', entry_id: 'g1' }).data)).to.equal(null);
    expect(entriesChangedBy(first)).to.deep.equal([]);
  });

  it('a grant adding to an entry adds its credits', () => {
    const added = rewardGranted({ grant_id: 'g2', entry_id: 'g1', credits: 5, granted_at: iso(60_000) });
    expect(entriesChangedBy(added)).to.deep.equal(['g1']);
    expect(entryAfter(opened, added)).to.include({ credits: 15, updated_at: iso(60_000) });
  });

  it('a withdrawal or a credit clawback takes from each entry only what it debits from that entry', () => {
    const debits = [
      { grant_id: 'g1', credits: 3 },
      { grant_id: 'g7', credits: 4 },
      { grant_id: 'g1', credits: 2 },
    ];
    for (const taking of [creditsWithdrawn(debits, iso(9_000)), creditClawback(debits, iso(9_000))]) {
      expect(entriesChangedBy(taking)).to.deep.equal(['g1', 'g7']);
      expect(entryAfter(opened, taking)).to.include({ credits: 5, updated_at: iso(9_000) });
    }
  });

  it('a pooled value is given to the entry it names', () => {
    const value = { value: 'OFFER-1', link: 'https://apps.apple.com/redeem?ctx=offercodes&code=OFFER-1', expires_at: iso(86_400_000) };
    const assigned = event('RewardValueAssigned', { grant_id: 'g1', value, assigned_at: iso(5_000) });
    expect(entriesChangedBy(assigned)).to.deep.equal(['g1']);
    expect(entryAfter(opened, assigned)).to.deep.include({ value, updated_at: iso(5_000) });
  });

  it('a non-credit clawback changes no entry by these rules (each fold ends the entry its own way)', () => {
    expect(entriesChangedBy(rewardRevoked({ grant_id: 'g3', kind: 'basic' }))).to.deep.equal([]);
  });

  it('the decision state and the users read model hold the same entries after the same history', () => {
    const history: DomainEvent[] = [
      registered('ann'),
      rewardGranted({ grant_id: 'g1', credits: 10 }),
      rewardGranted({ grant_id: 'g2', entry_id: 'g1', credits: 5, granted_at: iso(1_000) }),
      rewardGranted({ grant_id: 'g3', credits: 7, expires_at: iso(999_000), granted_at: iso(2_000) }),
      creditsWithdrawn(
        [
          { grant_id: 'g3', credits: 7 },
          { grant_id: 'g1', credits: 4 },
        ],
        iso(3_000),
      ),
      creditClawback([{ grant_id: 'g1', credits: 6 }], iso(4_000)),
    ];
    const log = new TestLog();
    log.append('user-ann', ...history);
    const docs = projected(usersProjection, log.events);
    const held = foldUserEvents(initialUserState(), history).entries;
    expect(held.map((entry) => entry.credits)).to.deep.equal([5, 0]);
    for (const entry of held) {
      const doc = docs[`${USER_REWARDS}/${rewardEntryId('ann', entry.entry_id)}`] as unknown as RewardEntry;
      const fields = Object.keys(entry) as (keyof RewardEntry)[];
      expect(Object.fromEntries(fields.map((field) => [field, doc[field]]))).to.deep.equal(entry);
    }
  });
});
