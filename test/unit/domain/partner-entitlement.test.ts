import { expect } from 'chai';
import { entitlementStillHeld } from '../../../src/domain/rewards/partner-entitlement.js';

describe('entitlementStillHeld: what keeps a partner entitlement after one entry ends', () => {
  const now = new Date('2026-06-01T00:00:00.000Z');
  const entry = (entry_id: string, entitlement_id: string | null, expires_at: string | null) => ({ entry_id, entitlement_id, expires_at });

  it('is null when only the ended entry, other entitlements, ended or unnamed entries grant it', () => {
    const entries = [
      entry('ended', 'pro', null),
      entry('other-entitlement', 'plus', null),
      entry('past', 'pro', '2026-05-31T23:59:59.999Z'),
      entry('now', 'pro', now.toISOString()),
      entry('unnamed', null, null),
    ];
    expect(entitlementStillHeld(entries, 'pro', 'ended', now)).to.equal(null);
  });

  it('is the latest end among the other active entries of the entitlement', () => {
    const entries = [
      entry('a', 'pro', '2026-07-01T00:00:00.000Z'),
      entry('b', 'pro', '2026-09-01T00:00:00.000Z'),
      entry('c', 'pro', '2026-08-01T00:00:00.000Z'),
    ];
    expect(entitlementStillHeld(entries, 'pro', 'x', now)).to.deep.equal({ endsAt: '2026-09-01T00:00:00.000Z' });
  });

  it('is a lifetime when any other entry never ends', () => {
    const entries = [entry('a', 'pro', '2026-07-01T00:00:00.000Z'), entry('b', 'pro', null)];
    expect(entitlementStillHeld(entries, 'pro', 'x', now)).to.deep.equal({ endsAt: null });
  });
});
