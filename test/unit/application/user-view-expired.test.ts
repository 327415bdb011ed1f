import { expect } from 'chai';
import { initialUserDoc, type RewardEntryDoc, type UserDoc } from '../../../projections/users.js';
import { EXPIRED_PER_KIND, userView } from '../../../src/application/queries/user-view.js';
import type { RewardDefinition } from '../../../src/domain/rewards/reward-schemas.js';
import { DAY, iso, T0 } from '../../support/events.js';

const pass: RewardDefinition = { key: 'pass', kind: 'basic', name: 'Pass', description: null, metadata: null, created_at: T0.toISOString(), updated_at: null };

const user: UserDoc = { ...initialUserDoc('veteran'), exists: true, created_at: T0.toISOString(), expired_kinds: ['basic'] };

/** A basic entry granted on day `day`, lasting one day; `recorded`: its expiry is in the read model. */
function entry(day: number, recorded: boolean): RewardEntryDoc {
  return {
    app_user_id: 'veteran',
    entry_id: `e-${day}`,
    reward_key: 'pass',
    kind: 'basic',
    credits: null,
    value: null,
    expires_at: iso((day + 1) * DAY),
    created_at: iso(day * DAY),
    updated_at: null,
    expired: recorded,
    seq: String(day).padStart(10, '0'),
  };
}

describe('User view: rewards.expired (SPEC §5.3)', () => {
  it(`lists per kind the ${EXPIRED_PER_KIND} most recently expired entries, with those expired by time and not yet recorded, in grant order`, () => {
    // The read model hands the 100 most recent recorded expiries (days 10…109); days 110…114 have
    // passed their expiry without it being recorded yet (the sweep has not run).
    const recorded = Array.from({ length: EXPIRED_PER_KIND }, (_, index) => entry(10 + index, true));
    const unrecorded = Array.from({ length: 5 }, (_, index) => entry(110 + index, false));
    const view = userView(user, { metadata: null, payment_customer_id: null }, unrecorded, recorded, {
      now: new Date(T0.getTime() + 200 * DAY),
      windowDays: 7,
      linkBase: null,
      rewards: new Map([['pass', pass]]),
      program: null,
    });
    const listed = view.rewards.expired.basic.map((expired) => expired.created_at);
    expect(listed).to.deep.equal(Array.from({ length: EXPIRED_PER_KIND }, (_, index) => iso((15 + index) * DAY)));
    expect(view.rewards.active.basic).to.deep.equal([]);
  });
});
