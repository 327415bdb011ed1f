import { expect } from 'chai';
import { describe, it } from 'mocha';
import { decideUpsertUser, type UpsertUserCommand } from '../../../src/domain/users/upsert-user.js';
import { creditBalance, userEvolver } from '../../../src/domain/users/user-state.js';
import { deciderSpec } from '../../support/decider-spec.js';
import { at, codeClaimed, DAY, event, interval, iso, MINUTE, programAssigned, registered, rewardGranted, spec, T0, SECOND } from '../../support/events.js';

const user = deciderSpec(userEvolver);

function upsert(overrides: Partial<UpsertUserCommand> = {}): UpsertUserCommand {
  return { app_user_id: 'ann', fields: {}, now: T0, assignment: null, conversionRewards: [], ...overrides };
}

describe('decideUpsertUser (SPEC §3 POST /users, §4 assignment, §5.4 conversions)', () => {
  describe('create vs update', () => {
    it('registers an unknown user with the sent fields and null for the rest (created)', () => {
      const { result } = user
        .given([])
        .when((state) => decideUpsertUser(state, upsert({ fields: { is_premium: false, metadata: { plan: 'a' }, payment_customer_id: 'cus_1' } })))
        .then([registered('ann', { is_premium: false, metadata: { plan: 'a' }, payment_customer_id: 'cus_1', registered_at: T0.toISOString() })]);
      expect(result).to.deep.equal({ created: true });
    });

    it('records the creation time as registered_at', () => {
      user
        .given([])
        .when((state) => decideUpsertUser(state, upsert({ now: at(DAY) })))
        .then([registered('ann', { registered_at: iso(DAY) })]);
    });

    it('updates an existing user with only the fields that changed (not created)', () => {
      const { result } = user
        .given([registered('ann', { is_premium: false, is_trial: true, payment_customer_id: 'cus_1' })])
        .when((state) => decideUpsertUser(state, upsert({ fields: { is_premium: false, is_trial: false, payment_customer_id: 'cus_1' } })))
        .then([event('UserProfileUpdated', { changes: { is_trial: false } })]);
      expect(result).to.deep.equal({ created: false });
    });

    it('records nothing when nothing changed, and still answers created=false', () => {
      const { result } = user
        .given([registered('ann', { is_premium: true, metadata: { a: 1 } })])
        .when((state) => decideUpsertUser(state, upsert({ fields: { is_premium: true, metadata: { a: 1 } } })))
        .thenNothing();
      expect(result).to.deep.equal({ created: false });
    });
  });

  describe('partial update', () => {
    it('keeps every omitted field', () => {
      const { state } = user
        .given([registered('ann', { is_premium: true, is_trial: false, metadata: { a: 1 }, payment_customer_id: 'cus_1' })])
        .when((state) => decideUpsertUser(state, upsert({ fields: { is_trial: true } })))
        .then([event('UserProfileUpdated', { changes: { is_trial: true } })]);
      expect(state).to.include({ is_premium: true, is_trial: true, payment_customer_id: 'cus_1' });
      expect(state.metadata).to.deep.equal({ a: 1 });
    });

    it('clears a field sent as explicit null', () => {
      const { state } = user
        .given([registered('ann', { is_premium: true, is_trial: false, metadata: { a: 1 }, payment_customer_id: 'cus_1' })])
        .when((state) => decideUpsertUser(state, upsert({ fields: { is_premium: null, is_trial: null, metadata: null, payment_customer_id: null } })))
        .then([event('UserProfileUpdated', { changes: { is_premium: null, is_trial: null, metadata: null, payment_customer_id: null } })]);
      expect(state).to.include({ is_premium: null, is_trial: null, metadata: null, payment_customer_id: null });
    });

    it('replaces metadata as a whole (no merge)', () => {
      const { state } = user
        .given([registered('ann', { metadata: { a: 1, nested: { x: 1 } } })])
        .when((state) => decideUpsertUser(state, upsert({ fields: { metadata: { b: 2 } } })))
        .then([event('UserProfileUpdated', { changes: { metadata: { b: 2 } } })]);
      expect(state.metadata).to.deep.equal({ b: 2 });
    });

    it('sees a changed nested metadata value as a change', () => {
      user
        .given([registered('ann', { metadata: { nested: { x: 1 } } })])
        .when((state) => decideUpsertUser(state, upsert({ fields: { metadata: { nested: { x: 2 } } } })))
        .then([event('UserProfileUpdated', { changes: { metadata: { nested: { x: 2 } } } })]);
    });

    it('accepts and stores payment_customer_id', () => {
      const { state } = user
        .given([registered('ann')])
        .when((state) => decideUpsertUser(state, upsert({ fields: { payment_customer_id: 'cus_9' } })))
        .then([event('UserProfileUpdated', { changes: { payment_customer_id: 'cus_9' } })]);
      expect(state.payment_customer_id).to.equal('cus_9');
    });
  });

  describe('first_seen_at', () => {
    it('is stored on creation when sent', () => {
      user
        .given([])
        .when((state) => decideUpsertUser(state, upsert({ fields: { first_seen_at: iso(-3 * DAY) } })))
        .then([registered('ann', { first_seen_at: iso(-3 * DAY) })]);
    });

    it('keeps the earliest value: a later date changes nothing', () => {
      const { state } = user
        .given([registered('ann', { first_seen_at: iso(-3 * DAY) })])
        .when((state) => decideUpsertUser(state, upsert({ fields: { first_seen_at: iso(-1 * DAY) } })))
        .thenNothing();
      expect(state.first_seen_at).to.equal(iso(-3 * DAY));
    });

    it('keeps the earliest value: an earlier date replaces it', () => {
      user
        .given([registered('ann', { first_seen_at: iso(-3 * DAY) })])
        .when((state) => decideUpsertUser(state, upsert({ fields: { first_seen_at: iso(-5 * DAY) } })))
        .then([event('UserProfileUpdated', { changes: { first_seen_at: iso(-5 * DAY) } })]);
    });

    it('compares instants, not strings (an offset date that is earlier wins)', () => {
      // 2026-03-07T13:00:00+02:00 is 11:00Z, earlier than the stored 12:00Z.
      user
        .given([registered('ann', { first_seen_at: '2026-03-07T12:00:00.000Z' })])
        .when((state) => decideUpsertUser(state, upsert({ fields: { first_seen_at: '2026-03-07T13:00:00.000+02:00' } })))
        .then([event('UserProfileUpdated', { changes: { first_seen_at: '2026-03-07T13:00:00.000+02:00' } })]);
    });

    it('is not cleared by an explicit null (the earliest value ever received stands)', () => {
      const { state } = user
        .given([registered('ann', { first_seen_at: iso(-3 * DAY) })])
        .when((state) => decideUpsertUser(state, upsert({ fields: { first_seen_at: null } })))
        .thenNothing();
      expect(state.first_seen_at).to.equal(iso(-3 * DAY));
    });

    it('accepts a date exactly 5 minutes in the future, but the earlier creation time stands in', () => {
      user
        .given([])
        .when((state) => decideUpsertUser(state, upsert({ fields: { first_seen_at: iso(5 * MINUTE) } })))
        .then([registered('ann', { first_seen_at: null })]);
    });

    it('rejects a date more than 5 minutes in the future with USER.FIRST_SEEN_AT_IN_FUTURE on create', () => {
      user
        .given([])
        .when((state) => decideUpsertUser(state, upsert({ fields: { first_seen_at: iso(5 * MINUTE + 1) } })))
        .thenError('USER.FIRST_SEEN_AT_IN_FUTURE', '/first_seen_at');
    });

    it('rejects a far-future date on update as well, even though an earlier one is stored', () => {
      user
        .given([registered('ann', { first_seen_at: iso(-DAY) })])
        .when((state) => decideUpsertUser(state, upsert({ fields: { first_seen_at: iso(DAY), is_premium: true } })))
        .thenError('USER.FIRST_SEEN_AT_IN_FUTURE', '/first_seen_at');
    });

    it('measures the 5 minutes from the command time', () => {
      user
        .given([])
        .when((state) => decideUpsertUser(state, upsert({ now: at(DAY), fields: { first_seen_at: iso(DAY + 4 * MINUTE) } })))
        .then([registered('ann', { registered_at: iso(DAY), first_seen_at: null })]);
    });

    // SPEC §3: "keeps the earliest value it has ever received (a client cannot extend its own
    // claim window by sending a later date). Never sent → the user's creation time stands in."
    it('ignores a first_seen_at later than the creation time of a user that never sent one (window not extended)', () => {
      const { state } = user
        .given([registered('ann', { registered_at: iso(-6 * DAY) })])
        .when((state) => decideUpsertUser(state, upsert({ fields: { first_seen_at: iso(-1 * DAY) } })))
        .thenNothing();
      expect(state.first_seen_at ?? state.created_at).to.equal(iso(-6 * DAY));
    });

    it('stores a first_seen_at earlier than the creation time of a user that never sent one', () => {
      user
        .given([registered('ann', { registered_at: iso(-6 * DAY) })])
        .when((state) => decideUpsertUser(state, upsert({ fields: { first_seen_at: iso(-9 * DAY) } })))
        .then([event('UserProfileUpdated', { changes: { first_seen_at: iso(-9 * DAY) } })]);
    });
  });

  describe('program assignment (SPEC §4)', () => {
    it('assigns the program and referral code on creation when one is decided', () => {
      const { state } = user
        .given([])
        .when((state) => decideUpsertUser(state, upsert({ assignment: { program_id: 'prog', referral_code: 'ABC234' } })))
        .then([registered('ann'), programAssigned('prog', 'ABC234')]);
      expect(state).to.include({ program_id: 'prog', referral_code: 'ABC234' });
    });

    it('assigns on a later upsert when the user has none yet', () => {
      user
        .given([registered('ann')])
        .when((state) => decideUpsertUser(state, upsert({ assignment: { program_id: 'prog', referral_code: 'ABC234' } })))
        .then([programAssigned('prog', 'ABC234')]);
    });

    it('never re-assigns: program and code are sticky', () => {
      const { state } = user
        .given([registered('ann'), programAssigned('prog', 'ABC234')])
        .when((state) => decideUpsertUser(state, upsert({ assignment: { program_id: 'other', referral_code: 'XYZ789' } })))
        .thenNothing();
      expect(state).to.include({ program_id: 'prog', referral_code: 'ABC234' });
    });

    it('assigns nothing without an assignment', () => {
      user
        .given([])
        .when((state) => decideUpsertUser(state, upsert()))
        .then([registered('ann')]);
    });
  });

  describe('conversion and churn (SPEC §5.4)', () => {
    const claimed = codeClaimed({ claim_id: 'c1', code: 'REF123', type: 'referral', owner_id: 'bob', program_id: 'prog' });
    const fact = { claim_id: 'c1', code: 'REF123', type: 'referral' as const, owner_id: 'bob' };
    const converted = event('UserConverted', { converted_at: T0.toISOString(), referred_by: fact, source: 'client', purchase: null, program_id: 'prog' });

    it('converts a claimer that becomes premium without trial, with its conversion rewards', () => {
      const { state } = user
        .given([registered('ann'), claimed])
        .when((state) =>
          decideUpsertUser(state, upsert({ fields: { is_premium: true }, conversionRewards: [spec('coins', 'credit', { credits: 5 }), spec('vip', 'basic')] })),
        )
        .then([
          event('UserProfileUpdated', { changes: { is_premium: true } }),
          converted,
          event('RewardGranted', {
            grant_id: 'c1/conversion/0',
            entry_id: 'c1/conversion/0',
            reward_key: 'coins',
            kind: 'credit',
            credits: 5,
            granted_at: T0.toISOString(),
            expires_at: null,
            cause: { type: 'conversion', code: 'REF123' },
            clawback: 'none',
            balance_after: 5,
          }),
          event('RewardGranted', {
            grant_id: 'c1/conversion/1',
            entry_id: 'c1/conversion/1',
            reward_key: 'vip',
            kind: 'basic',
            credits: null,
            granted_at: T0.toISOString(),
            expires_at: null,
            cause: { type: 'conversion', code: 'REF123' },
            clawback: 'none',
            balance_after: null,
          }),
        ]);
      expect(state.converted_at).to.equal(T0.toISOString());
    });

    it('converts when premium and is_trial=false', () => {
      user
        .given([registered('ann'), claimed])
        .when((state) => decideUpsertUser(state, upsert({ fields: { is_premium: true, is_trial: false } })))
        .then([event('UserProfileUpdated', { changes: { is_premium: true, is_trial: false } }), converted]);
    });

    it('does not convert while on trial', () => {
      user
        .given([registered('ann'), claimed])
        .when((state) => decideUpsertUser(state, upsert({ fields: { is_premium: true, is_trial: true } })))
        .then([event('UserProfileUpdated', { changes: { is_premium: true, is_trial: true } })]);
    });

    it('converts when the trial ends and premium stays', () => {
      user
        .given([registered('ann', { is_premium: true, is_trial: true }), claimed])
        .when((state) => decideUpsertUser(state, upsert({ fields: { is_trial: false } })))
        .then([event('UserProfileUpdated', { changes: { is_trial: false } }), converted]);
    });

    it('does not convert a premium user that never claimed a code', () => {
      user
        .given([registered('ann')])
        .when((state) => decideUpsertUser(state, upsert({ fields: { is_premium: true } })))
        .then([event('UserProfileUpdated', { changes: { is_premium: true } })]);
    });

    it('converts only once', () => {
      user
        .given([registered('ann', { is_premium: true }), claimed, converted])
        .when((state) => decideUpsertUser(state, upsert({ fields: { metadata: { x: 1 } }, conversionRewards: [spec('coins', 'credit')] })))
        .then([event('UserProfileUpdated', { changes: { metadata: { x: 1 } } })]);
    });

    it('does not convert again after a churn and a new subscription', () => {
      user
        .given([
          registered('ann', { is_premium: true }),
          claimed,
          converted,
          event('UserProfileUpdated', { changes: { is_premium: false } }),
          event('UserChurned', { churned_at: T0.toISOString(), referred_by: fact, program_id: 'prog' }),
        ])
        .when((state) => decideUpsertUser(state, upsert({ fields: { is_premium: true }, conversionRewards: [spec('coins', 'credit')] })))
        .then([event('UserProfileUpdated', { changes: { is_premium: true } })]);
    });

    it('churns a converted claimer whose premium ends', () => {
      const { state } = user
        .given([registered('ann', { is_premium: true }), claimed, converted])
        .when((state) => decideUpsertUser(state, upsert({ now: at(DAY), fields: { is_premium: false } })))
        .then([
          event('UserProfileUpdated', { changes: { is_premium: false } }),
          event('UserChurned', { churned_at: iso(DAY), referred_by: fact, program_id: 'prog' }),
        ]);
      expect(state.churned_at).to.equal(iso(DAY));
    });

    it('churns only once', () => {
      user
        .given([
          registered('ann', { is_premium: true }),
          claimed,
          converted,
          event('UserProfileUpdated', { changes: { is_premium: false } }),
          event('UserChurned', { churned_at: T0.toISOString(), referred_by: fact, program_id: 'prog' }),
          event('UserProfileUpdated', { changes: { is_premium: true } }),
        ])
        .when((state) => decideUpsertUser(state, upsert({ fields: { is_premium: false } })))
        .then([event('UserProfileUpdated', { changes: { is_premium: false } })]);
    });

    it('does not churn a claimer that never converted', () => {
      user
        .given([registered('ann', { is_premium: true, is_trial: true }), claimed])
        .when((state) => decideUpsertUser(state, upsert({ fields: { is_premium: false } })))
        .then([event('UserProfileUpdated', { changes: { is_premium: false } })]);
    });

    it('does not churn when premium is cleared to null (only false ends premium)', () => {
      user
        .given([registered('ann', { is_premium: true }), claimed, converted])
        .when((state) => decideUpsertUser(state, upsert({ fields: { is_premium: null } })))
        .then([event('UserProfileUpdated', { changes: { is_premium: null } })]);
    });

    it("records due expiries first, so a conversion credit reward's balance_after counts only active credits", () => {
      // SPEC §7.7: "Balances in the ledger always equal the user's reward entries."
      const { state } = user
        .given([
          registered('ann', { registered_at: iso(-40 * DAY) }),
          rewardGranted({ grant_id: 'old', reward_key: 'coins', credits: 7, balance_after: 7, granted_at: iso(-31 * DAY), expires_at: iso(-DAY) }),
          claimed,
        ])
        .when((state) => decideUpsertUser(state, upsert({ fields: { is_premium: true }, conversionRewards: [spec('coins', 'credit', { credits: 5 })] })))
        .then([
          event('RewardExpired', { grant_id: 'old', reward_key: 'coins', kind: 'credit', expired_at: iso(-DAY), credits_forfeited: 7, balance_after: 0 }),
          event('UserProfileUpdated', { changes: { is_premium: true } }),
          converted,
          event('RewardGranted', {
            grant_id: 'c1/conversion/0',
            entry_id: 'c1/conversion/0',
            reward_key: 'coins',
            kind: 'credit',
            credits: 5,
            granted_at: T0.toISOString(),
            expires_at: null,
            cause: { type: 'conversion', code: 'REF123' },
            clawback: 'none',
            balance_after: 5,
          }),
        ]);
      expect(creditBalance(state, 'coins', T0)).to.equal(5);
    });

    it('applies the profile change before deciding the conversion (converted_at = command time)', () => {
      user
        .given([registered('ann'), claimed])
        .when((state) => decideUpsertUser(state, upsert({ now: at(10 * SECOND), fields: { is_premium: true } })))
        .then([
          event('UserProfileUpdated', { changes: { is_premium: true } }),
          event('UserConverted', { converted_at: iso(10 * SECOND), referred_by: fact, source: 'client', purchase: null, program_id: 'prog' }),
        ]);
    });

    it('grants conversion rewards with their deactivation interval', () => {
      user
        .given([registered('ann'), claimed])
        .when((state) =>
          decideUpsertUser(state, upsert({ fields: { is_premium: true }, conversionRewards: [spec('vip', 'basic', { deactivation: interval(1, 'months') })] })),
        )
        .then([
          event('UserProfileUpdated', { changes: { is_premium: true } }),
          converted,
          event('RewardGranted', {
            grant_id: 'c1/conversion/0',
            entry_id: 'c1/conversion/0',
            reward_key: 'vip',
            kind: 'basic',
            credits: null,
            granted_at: T0.toISOString(),
            expires_at: '2026-04-10T12:00:00.000Z',
            cause: { type: 'conversion', code: 'REF123' },
            clawback: 'none',
            balance_after: null,
          }),
        ]);
    });
  });
});
