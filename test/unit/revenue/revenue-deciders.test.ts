import { expect } from 'chai';
import { describe, it } from 'mocha';
import type { DomainEvent, EventDataOf } from '../../../src/domain/events/index.js';
import { decideRecordRevenue, type RecordRevenueCommand, refundFigures } from '../../../src/domain/revenue/record-revenue.js';
import { isOwnPayment } from '../../../src/domain/revenue/own-payment.js';
import type { RevenueNotification } from '../../../src/domain/revenue/revenue-notification.js';
import { decideRevokeGrants } from '../../../src/domain/revenue/revoke-grants.js';
import { type ConversionsFrom, conversionEvents, isChurning, isConverting } from '../../../src/domain/users/conversion.js';
import { type ClaimCodeCommand, decideClaimCode } from '../../../src/domain/users/claim-code.js';
import { userEvolver } from '../../../src/domain/users/user-state.js';
import { deciderSpec } from '../../support/decider-spec.js';
import { claimTarget, codeClaimed, event, registered, revenueNotification, rewardGranted, spec, T0 } from '../../support/events.js';

const user = deciderSpec(userEvolver);

function notification(overrides: Partial<RevenueNotification> = {}): RevenueNotification {
  return revenueNotification({ product_id: 'price_1', ...overrides });
}

function record(overrides: Partial<RecordRevenueCommand> = {}): RecordRevenueCommand {
  return {
    notification: notification(),
    event_id: 'record-1',
    already_recorded: false,
    already_refunded: false,
    already_paid: false,
    refunded_before_minor: null,
    refunded_purchase_attributed: null,
    conversions: 'verified',
    conversionRewards: [spec('coins', 'credit', { credits: 100 })],
    now: T0,
    ...overrides,
  };
}

const claimedHistory: DomainEvent[] = [registered('ann'), codeClaimed({ claim_id: 'c1', code: 'BOB234', owner_id: 'bob', program_id: 'prog' })];

describe('verified revenue (SPEC §11)', () => {
  describe('decideRecordRevenue', () => {
    it('records the purchase under its notification-derived id and, under verified, converts the claimer once', () => {
      const { events, state } = user
        .given(claimedHistory)
        .when((state) => decideRecordRevenue(state, record()))
        .decision();
      expect(events.map((e) => e.type)).to.deep.equal(['PurchaseRecorded', 'UserConverted', 'RewardGranted']);
      expect(events[0]!.id).to.equal('record-1');
      expect(events[0]!.data).to.include({ refunded_before: false });
      expect((events[0]!.data as any).attribution).to.deep.equal({ code: 'BOB234', type: 'referral', owner_id: 'bob', program_id: 'prog' });
      expect(events[1]!.data).to.deep.include({
        source: 'verified',
        program_id: 'prog',
        purchase: { provider: 'stripe', notification_id: 'evt_1', transaction_id: 'in_1', original_transaction_id: 'sub_1' },
      });
      expect(state.converted_purchase).to.deep.equal({
        provider: 'stripe',
        notification_id: 'evt_1',
        transaction_id: 'in_1',
        original_transaction_id: 'sub_1',
      });
    });

    it('under client, a verified purchase converts nothing; a trial converts nothing under verified', () => {
      expect(
        user
          .given(claimedHistory)
          .when((state) => decideRecordRevenue(state, record({ conversions: 'client' })))
          .decision()
          .events.map((e) => e.type),
      ).to.deep.equal(['PurchaseRecorded']);
      const trial = record({ notification: notification({ is_trial: true, price_minor: 0 }) });
      expect(
        user
          .given(claimedHistory)
          .when((state) => decideRecordRevenue(state, trial))
          .decision()
          .events.map((e) => e.type),
      ).to.deep.equal(['PurchaseRecorded']);
    });

    it('a purchase whose refund was recorded first neither makes the user premium nor converts it', () => {
      const { events, state } = user
        .given(claimedHistory)
        .when((state) => decideRecordRevenue(state, record({ already_refunded: true })))
        .decision();
      expect(events.map((e) => e.type)).to.deep.equal(['PurchaseRecorded']);
      expect(events[0]!.data).to.include({ refunded_before: true });
      expect(state.verified_premium).to.equal(null);
    });

    it('a payment recorded before under another notification id is kept as a repeat: it changes nothing and counts no revenue again', () => {
      const bought = user
        .given(claimedHistory)
        .when((state) => decideRecordRevenue(state, record()))
        .decision().events as DomainEvent[];
      const expired = user
        .given([...claimedHistory, ...bought])
        .when((state) => decideRecordRevenue(state, record({ event_id: 'expiry-1', notification: notification({ notification_id: 'evt_x', kind: 'expiry' }) })))
        .decision().events as DomainEvent[];
      const history = [...claimedHistory, ...bought, ...expired];
      const again = record({ event_id: 'record-2', notification: notification({ notification_id: 'evt_2' }), already_paid: true });
      const { events, state } = user
        .given(history)
        .when((state) => decideRecordRevenue(state, again))
        .decision();
      expect(events.map((e) => [e.type, e.id])).to.deep.equal([['PurchaseRecorded', 'record-2']]);
      expect(events[0]!.data).to.include({ notification_id: 'evt_2', transaction_id: 'in_1', repeats_purchase: true });
      // Not premium again, not converted again: the state is the one before it.
      expect(state).to.deep.equal(user.given(history).state);
      expect(isOwnPayment(events[0]!.data as { repeats_purchase?: boolean })).to.equal(false);
      expect(isOwnPayment(bought[0]!.data as { repeats_purchase?: boolean })).to.equal(true);
      // A renewal is counted once too.
      const renewal = record({ event_id: 'renewal-2', notification: notification({ notification_id: 'evt_3', kind: 'renewal' }), already_paid: true });
      expect(
        user
          .given(history)
          .when((state) => decideRecordRevenue(state, renewal))
          .decision().events[0]!,
      ).to.deep.include({ type: 'RenewalRecorded', data: { ...(events[0]!.data as object), notification_id: 'evt_3', kind: 'renewal' } });
    });

    it('a refund of the purchase that made the user premium leaves nothing to convert on: a later claim converts nothing', () => {
      const bought = user
        .given([registered('ann')])
        .when((state) => decideRecordRevenue(state, record()))
        .decision().events;
      expect(user.given([registered('ann'), ...bought]).state.verified_premium).to.equal(true);
      const refunded = user
        .given([registered('ann'), ...bought])
        .when((state) => decideRecordRevenue(state, record({ event_id: 'refund-1', notification: notification({ notification_id: 'evt_r', kind: 'refund' }) })))
        .decision().events;
      const { state } = user.given([registered('ann'), ...bought, ...refunded]);
      expect(state.verified_premium).to.equal(null);
      expect(isConverting(state, 'verified')).to.equal(false);
      expect(isChurning(state, 'verified')).to.equal(false);
      // A refund of another transaction leaves the purchase standing.
      const other = user
        .given([registered('ann'), ...bought])
        .when((state) =>
          decideRecordRevenue(
            state,
            record({ event_id: 'refund-2', notification: notification({ notification_id: 'evt_o', kind: 'refund', transaction_id: 'in_9' }) }),
          ),
        )
        .decision().events;
      expect(user.given([registered('ann'), ...bought, ...other]).state.verified_premium).to.equal(true);
    });

    it('a repeat, or a notification with no revenue meaning, records nothing', () => {
      user
        .given(claimedHistory)
        .when((state) => decideRecordRevenue(state, record({ already_recorded: true })))
        .thenNothing();
      user
        .given(claimedHistory)
        .when((state) => decideRecordRevenue(state, record({ notification: notification({ kind: 'other' }) })))
        .thenNothing();
    });

    it('a refund of the converting transaction says so; a refund of another one does not', () => {
      const converted = user
        .given(claimedHistory)
        .when((state) => decideRecordRevenue(state, record()))
        .decision();
      const history = [...claimedHistory, ...(converted.events as DomainEvent[])];
      const refundOf = (transaction: string) =>
        record({ event_id: 'r', notification: notification({ notification_id: `evt_r_${transaction}`, kind: 'refund', transaction_id: transaction }) });
      expect(
        user
          .given(history)
          .when((state) => decideRecordRevenue(state, refundOf('in_1')))
          .decision().events[0]!.data,
      ).to.include({ reverses_conversion: true });
      expect(
        user
          .given(history)
          .when((state) => decideRecordRevenue(state, refundOf('in_2')))
          .decision().events[0]!.data,
      ).to.include({ reverses_conversion: false });
      // A second refund of the converting transaction repeats the first: it reverses nothing more,
      // and adds only what it refunds beyond it (Stripe's running total of partial refunds).
      const repeat = (before: number | null) =>
        user
          .given(history)
          .when((state) => decideRecordRevenue(state, { ...refundOf('in_1'), already_refunded: true, refunded_before_minor: before }))
          .decision().events[0]!.data;
      const price = notification().price_minor!;
      expect(repeat(price - 300)).to.include({ reverses_conversion: false, repeats_refund: true, adds_refunded_minor: 300 });
      expect(repeat(price)).to.include({ repeats_refund: true, adds_refunded_minor: 0 });
      expect(repeat(null)).to.include({ repeats_refund: true, adds_refunded_minor: 0 });
    });

    it('a refund counts for the code its purchase counted for: none when the purchase came before the claim', () => {
      const refund = (attributed: boolean | null) =>
        user
          .given(claimedHistory)
          .when((state) =>
            decideRecordRevenue(
              state,
              record({ notification: notification({ notification_id: 'evt_r', kind: 'refund' }), refunded_purchase_attributed: attributed }),
            ),
          )
          .decision().events[0]!.data as { attribution: unknown };
      const code = { code: 'BOB234', type: 'referral', owner_id: 'bob', program_id: 'prog' };
      expect(refund(false).attribution).to.equal(null);
      expect(refund(true).attribution).to.deep.equal(code);
      // Its purchase not recorded (the refund came first): the claim the user has now.
      expect(refund(null).attribution).to.deep.equal(code);
      // The refund of the purchase that converted the user: paid before the claim (its money
      // counted for no code), it counts for the conversion's code, as that conversion's refund.
      const converted = user
        .given(claimedHistory)
        .when((state) => decideRecordRevenue(state, record()))
        .decision();
      const reverse = (attributed: boolean) =>
        user
          .given([...claimedHistory, ...(converted.events as DomainEvent[])])
          .when((state) =>
            decideRecordRevenue(
              state,
              record({
                event_id: 'refund-1',
                notification: notification({ notification_id: 'evt_r', kind: 'refund' }),
                refunded_purchase_attributed: attributed,
              }),
            ),
          )
          .decision().events[0]!.data as EventDataOf<'RefundRecorded'>;
      const unattributed = reverse(false);
      expect(unattributed).to.deep.include({ attribution: null, reverses_conversion: true, conversion_attribution: code });
      expect(refundFigures(unattributed)).to.deep.equal({ source: code, refunds: 1, amount: null });
      const attributed = reverse(true);
      expect(attributed).to.deep.include({ attribution: code, reverses_conversion: true }).and.not.have.property('conversion_attribution');
      expect(refundFigures(attributed)).to.deep.equal({ source: code, refunds: 1, amount: attributed.price_minor });
      // A purchase is attributed by the claim, whatever a refund was told.
      const purchase = user
        .given(claimedHistory)
        .when((state) => decideRecordRevenue(state, record({ refunded_purchase_attributed: false })))
        .decision().events[0]!.data as { attribution: unknown };
      expect(purchase.attribution).to.deep.equal(code);
    });

    it('expiry churns a verified conversion under verified and both, not under client', () => {
      const converted = user
        .given(claimedHistory)
        .when((state) => decideRecordRevenue(state, record()))
        .decision();
      const history = [...claimedHistory, ...(converted.events as DomainEvent[])];
      const expiry = (conversions: 'client' | 'verified' | 'both') =>
        record({ conversions, notification: notification({ notification_id: 'evt_x', kind: 'expiry' }) });
      expect(
        user
          .given(history)
          .when((state) => decideRecordRevenue(state, expiry('verified')))
          .decision()
          .events.map((e) => e.type),
      ).to.deep.equal(['SubscriptionExpired', 'UserChurned']);
      expect(
        user
          .given(history)
          .when((state) => decideRecordRevenue(state, expiry('both')))
          .decision()
          .events.map((e) => e.type),
      ).to.deep.equal(['SubscriptionExpired', 'UserChurned']);
      expect(
        user
          .given(history)
          .when((state) => decideRecordRevenue(state, expiry('client')))
          .decision()
          .events.map((e) => e.type),
      ).to.deep.equal(['SubscriptionExpired']);
    });
  });

  describe('access the user did not pay for (is_trial: a trial, a promotional grant, a family share)', () => {
    it('its expiry churns no paying user: it says nothing of the subscription they pay for', () => {
      const converted = user
        .given(claimedHistory)
        .when((state) => decideRecordRevenue(state, record()))
        .decision();
      const history = [...claimedHistory, ...(converted.events as DomainEvent[])];
      const promotionalExpiry = record({
        conversions: 'verified',
        notification: notification({ notification_id: 'evt_promo_end', kind: 'expiry', is_trial: true, original_transaction_id: 'promo-1' }),
      });
      const { events, state } = user
        .given(history)
        .when((state) => decideRecordRevenue(state, promotionalExpiry))
        .decision();
      expect(events.map((e) => e.type)).to.deep.equal(['SubscriptionExpired']);
      expect(state.verified_premium).to.equal(true);
    });
  });

  describe('out of order: an expiry that arrives before its purchase', () => {
    const HOUR = 3_600_000;
    const at = (ms: number) => new Date(T0.getTime() + ms).toISOString();
    /** The subscription's expiry (an hour after the purchase), recorded first. */
    const expiredFirst = (conversions: 'client' | 'verified' | 'both' = 'verified') =>
      user
        .given(claimedHistory)
        .when((state) =>
          decideRecordRevenue(
            state,
            record({ conversions, notification: notification({ notification_id: 'evt_exp', kind: 'expiry', occurred_at: at(HOUR) }) }),
          ),
        )
        .decision().events as DomainEvent[];
    const purchase = (overrides: Partial<RevenueNotification> = {}, conversions: 'client' | 'verified' | 'both' = 'verified') =>
      record({ conversions, notification: notification({ occurred_at: at(0), ...overrides }) });

    it('the late purchase converts the claimer (with its rewards) and churns it at once: it paid, and its subscription has ended', () => {
      const { events, state } = user
        .given([...claimedHistory, ...expiredFirst()])
        .when((state) => decideRecordRevenue(state, purchase()))
        .decision();
      expect(events.map((e) => e.type)).to.deep.equal(['PurchaseRecorded', 'UserConverted', 'RewardGranted', 'UserChurned']);
      expect(events[0]!.data).to.include({ refunded_before: false, expired_before: true });
      expect(state).to.include({ verified_premium: false });
      // A refund of it later reverses this conversion.
      expect(state.converted_purchase).to.deep.include({ notification_id: 'evt_1', original_transaction_id: 'sub_1' });
      expect(isChurning(state, 'verified')).to.equal(false);
    });

    it('under client the late purchase is recorded and counts nothing; a trial, or one refunded first, converts nothing', () => {
      const given = [...claimedHistory, ...expiredFirst('client')];
      const typesOf = (command: RecordRevenueCommand) =>
        user
          .given(given)
          .when((state) => decideRecordRevenue(state, command))
          .decision()
          .events.map((e) => e.type);
      expect(typesOf(purchase({}, 'client'))).to.deep.equal(['PurchaseRecorded']);
      expect(typesOf(purchase({ is_trial: true }))).to.deep.equal(['PurchaseRecorded']);
      expect(typesOf({ ...purchase(), already_refunded: true })).to.deep.equal(['PurchaseRecorded']);
    });

    it('only a purchase of the same subscription, from before the expiry, has ended; a later one makes the user premium', () => {
      const given = [...claimedHistory, ...expiredFirst()];
      const decide = (overrides: Partial<RevenueNotification>) =>
        user
          .given(given)
          .when((state) => decideRecordRevenue(state, purchase(overrides)))
          .decision();
      for (const overrides of [
        { occurred_at: at(2 * HOUR) },
        { occurred_at: at(HOUR) },
        { original_transaction_id: 'sub_2' },
        { provider: 'revenuecat' as const },
      ]) {
        const { events, state } = decide(overrides);
        expect(events[0]!.data, JSON.stringify(overrides)).to.include({ expired_before: false });
        expect(
          events.map((e) => e.type),
          JSON.stringify(overrides),
        ).to.deep.equal(['PurchaseRecorded', 'UserConverted', 'RewardGranted']);
        expect(state.verified_premium, JSON.stringify(overrides)).to.equal(true);
      }
    });

    it('an older expiry arriving after a later one does not hide it: a purchase between the two has ended', () => {
      const older = user
        .given([...claimedHistory, ...expiredFirst()])
        .when((state) =>
          decideRecordRevenue(state, record({ notification: notification({ notification_id: 'evt_exp_old', kind: 'expiry', occurred_at: at(-HOUR) }) })),
        )
        .decision().events as DomainEvent[];
      const { events } = user
        .given([...claimedHistory, ...expiredFirst(), ...older])
        .when((state) => decideRecordRevenue(state, purchase()))
        .decision();
      expect(events[0]!.data).to.include({ expired_before: true });
    });

    it('a late purchase of an already converted user counts nothing more, and leaves a premium user premium', () => {
      const renewed = user
        .given([...claimedHistory, ...expiredFirst()])
        .when((state) => decideRecordRevenue(state, purchase({ notification_id: 'evt_new', original_transaction_id: 'sub_2', occurred_at: at(3 * HOUR) })))
        .decision();
      const { events, state } = user
        .given([...claimedHistory, ...expiredFirst(), ...(renewed.events as DomainEvent[])])
        .when((state) => decideRecordRevenue(state, purchase()))
        .decision();
      expect(events.map((e) => e.type)).to.deep.equal(['PurchaseRecorded']);
      expect(state.verified_premium).to.equal(true);
    });
  });

  describe('CONVERSIONS_FROM', () => {
    it('under both, a conversion the app reported first is not counted again by the verified purchase', () => {
      const clientConverted = user.given([
        ...claimedHistory,
        event('UserProfileUpdated', { changes: { is_premium: true, is_trial: false } }),
        event('UserConverted', {
          converted_at: T0.toISOString(),
          referred_by: { claim_id: 'c1', code: 'BOB234', type: 'referral', owner_id: 'bob' },
          source: 'client',
          purchase: null,
          program_id: 'prog',
        }),
      ]);
      expect(
        clientConverted
          .when((state) => decideRecordRevenue(state, record({ conversions: 'both' })))
          .decision()
          .events.map((e) => e.type),
      ).to.deep.equal(['PurchaseRecorded']);
    });

    const premiumClient = [...claimedHistory, event('UserProfileUpdated', { changes: { is_premium: true, is_trial: false } })];
    it("client counts the app's is_premium; verified ignores it; both takes either", () => {
      const state = user.given(premiumClient).state;
      expect(isConverting(state, 'client')).to.equal(true);
      expect(isConverting(state, 'verified')).to.equal(false);
      expect(isConverting(state, 'both')).to.equal(true);
      const lapsed = user.given([
        ...premiumClient,
        event('UserConverted', {
          converted_at: T0.toISOString(),
          referred_by: { claim_id: 'c1', code: 'BOB234', type: 'referral', owner_id: 'bob' },
          source: 'client',
          purchase: null,
          program_id: 'prog',
        }),
        event('UserProfileUpdated', { changes: { is_premium: false } }),
      ]).state;
      expect(isChurning(lapsed, 'client')).to.equal(true);
      expect(isChurning(lapsed, 'verified')).to.equal(false);
    });
  });

  describe('CONVERSIONS_FROM at the claim and in conversionEvents', () => {
    const premium = event('UserProfileUpdated', { changes: { is_premium: true, is_trial: false } });
    /** The events `decide` adds to `given`. */
    const decided = (given: DomainEvent[], decide: Parameters<ReturnType<typeof user.given>['when']>[0]) => user.given(given).when(decide).decision().events;
    /** A verified purchase recorded for `given` under `client`: it converts nothing there. */
    const purchased = (given: DomainEvent[]) => [...given, ...decided(given, (state) => decideRecordRevenue(state, record({ conversions: 'client' })))];
    const claim = (conversions: ConversionsFrom): ClaimCodeCommand => ({
      claim_id: 'c1',
      code: 'BOB234',
      target: claimTarget(),
      now: T0,
      windowDays: 7,
      conversions,
    });
    const conversionsOf = (events: readonly { type: string; data: unknown }[]) =>
      events
        .filter((one) => one.type === 'UserConverted')
        .map((one) => one.data as { source: string; purchase: { notification_id: string } | null })
        .map((data) => ({ source: data.source, notification: data.purchase?.notification_id ?? null }));

    it("a claim converts by the policy: the app's is_premium under client and both, not verified", () => {
      const premiumUser = [registered('ann'), premium];
      expect(conversionsOf(decided(premiumUser, (state) => decideClaimCode(state, claim('client'))))).to.deep.equal([{ source: 'client', notification: null }]);
      expect(conversionsOf(decided(premiumUser, (state) => decideClaimCode(state, claim('both'))))).to.deep.equal([{ source: 'client', notification: null }]);
      expect(conversionsOf(decided(premiumUser, (state) => decideClaimCode(state, claim('verified'))))).to.deep.equal([]);
    });

    it('a claim converts by the policy: a verified purchase before it under verified and both, not client', () => {
      const buyer = purchased([registered('ann')]);
      expect(buyer.map((one) => one.type)).to.deep.equal(['UserRegistered', 'PurchaseRecorded']);
      expect(conversionsOf(decided(buyer, (state) => decideClaimCode(state, claim('verified'))))).to.deep.equal([
        { source: 'verified', notification: 'evt_1' },
      ]);
      expect(conversionsOf(decided(buyer, (state) => decideClaimCode(state, claim('both'))))).to.deep.equal([{ source: 'verified', notification: 'evt_1' }]);
      expect(conversionsOf(decided(buyer, (state) => decideClaimCode(state, claim('client'))))).to.deep.equal([]);
    });

    it('under client a conversion names no purchase, so a refund of an unrelated verified purchase claws nothing back; under both, when the app and a verified purchase agree at once, the verified one converts (its refund can)', () => {
      const state = user.given([...purchased(claimedHistory), premium]).state;
      expect(conversionsOf(conversionEvents(state, [], T0, 'client'))).to.deep.equal([{ source: 'client', notification: null }]);
      expect(conversionsOf(conversionEvents(state, [], T0, 'both'))).to.deep.equal([{ source: 'verified', notification: 'evt_1' }]);
    });

    it("under client a store's expiry churns nothing while the app says premium; under verified it churns", () => {
      const convertedByApp = [...purchased(claimedHistory), premium];
      const converted = [...convertedByApp, ...decided(convertedByApp, (state) => ({ events: conversionEvents(state, [], T0, 'client'), result: null }))];
      const expiry = record({
        notification: notification({ notification_id: 'evt_x', kind: 'expiry', provider_type: 'customer.subscription.deleted' }),
        event_id: 'record-x',
        conversions: 'client',
      });
      const expired = [...converted, ...decided(converted, (state) => decideRecordRevenue(state, expiry))];
      expect(expired.map((one) => one.type).slice(-2)).to.deep.equal(['UserConverted', 'SubscriptionExpired']);
      const state = user.given(expired).state;
      expect(isChurning(state, 'client')).to.equal(false);
      expect(isChurning(state, 'verified')).to.equal(true);
    });
  });

  describe('decideRevokeGrants', () => {
    const refund = { provider: 'stripe' as const, notification_id: 'evt_r', transaction_id: 'in_1', original_transaction_id: null };
    const granted = [
      registered('bob'),
      rewardGranted({ grant_id: 'g1', reward_key: 'coins', credits: 100, balance_after: 100, cause: { type: 'conversion', code: 'X' }, clawback: 'on_refund' }),
      rewardGranted({
        grant_id: 'g2',
        reward_key: 'vip',
        kind: 'basic',
        credits: null,
        balance_after: null,
        cause: { type: 'conversion', code: 'X' },
        clawback: 'on_refund',
      }),
    ];

    it('debits unspent credits, records the spent part as a shortfall (balance never below 0), ends other kinds', () => {
      const spent = [
        ...granted,
        event('CreditsWithdrawn', {
          operation_id: null,
          key: 'coins',
          withdrawn_at: T0.toISOString(),
          credits_requested_to_withdraw: 40,
          credits_withdrawn: 40,
          credits_available_at_start: 100,
          credits_available_at_end: 60,
          debits: [{ grant_id: 'g1', credits: 40 }],
        }),
      ];
      const grants = [
        { grant_id: 'g1', entry_id: 'g1', reward_key: 'coins', kind: 'credit' as const, credits: 100 },
        { grant_id: 'g2', entry_id: 'g2', reward_key: 'vip', kind: 'basic' as const, credits: null },
      ];
      const { events, state } = user
        .given(spent)
        .when((state) => decideRevokeGrants(state, { grants, claimer: 'ann', refund, now: T0, eventId: (id) => `revoke-${id}` }))
        .decision();
      expect(events.map((e) => e.id)).to.deep.equal(['revoke-g1', 'revoke-g2']);
      expect(events[0]!.data).to.deep.include({ debits: [{ grant_id: 'g1', credits: 60 }], shortfall: 40, balance_after: 0 });
      expect(events[1]!.data).to.deep.include({ debits: [], shortfall: null, balance_after: null });
      expect(state.entries.filter((entry) => entry.kind === 'basic')).to.deep.equal([]);
      expect(state.entries.find((entry) => entry.entry_id === 'g1')!.credits).to.equal(0);
    });
  });
});
