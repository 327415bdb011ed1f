import 'reflect-metadata';
import Stripe from 'stripe';
import { expect } from 'chai';
import { auditCredits } from '../../src/application/audit/credit-audit.js';
import { EventLog } from '../../src/application/event-log.js';
import { defaultProjections } from '../support/projections.js';
import { replayProjections } from '../../src/application/projections/projection-replay.js';
import type { EventStore } from '../../src/ports/event-store.js';
import type { ReadConsistency } from '../../src/ports/read-consistency.js';
import type { ReadStore } from '../../src/ports/read-store.js';
import { TOKENS } from '../../src/ports/tokens.js';
import { createUser, eventually, events, getUser, never, putProgram, putReward } from '../support/fixtures.js';
import { chargeRefunded, invoicePaid, post, REVENUECAT_AUTH, rcEvent, revenueCat, STRIPE_SECRET, stripeEvent } from '../support/revenue-senders.js';
import { FaultSwitch, faultyBackend } from '../support/faulty-backend.js';
import { REJECTIONS_KEPT_PER_MINUTE } from '../../src/application/revenue/revenue-inbox.js';
import { startTestService, type TestService } from '../support/test-service.js';

async function readModels(svc: TestService) {
  const readStore = svc.service.container.resolve<ReadStore>(TOKENS.ReadStore);
  const all: Record<string, unknown[]> = {};
  for (const projection of defaultProjections) for (const collection of projection.collections) all[collection.name] = await readStore.find(collection.name);
  return all;
}

/** Waits until reactions and projections have settled (no new events for a moment). */
async function settled(svc: TestService) {
  const store = svc.service.container.resolve<EventStore>(TOKENS.EventStore);
  const consistency = svc.service.container.resolve<ReadConsistency>(TOKENS.ReadConsistency);
  for (;;) {
    const head = (await store.headPosition())!;
    await consistency.waitFor(head, 5_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    if ((await store.headPosition()) === head) return;
  }
}

const inbox = async (svc: TestService, query = '') => (await svc.admin('GET', `/admin/webhooks/inbound?limit=1000${query}`)).body.data.notifications as any[];
const revenueEvents = async (svc: TestService, user: string) =>
  (await events(svc, `stream=user-${user}`)).filter((event) =>
    ['PurchaseRecorded', 'RenewalRecorded', 'RefundRecorded', 'SubscriptionExpired'].includes(event.type),
  );

describe('API: revenue notifications in (SPEC §11) — Stripe and RevenueCat', () => {
  describe('Stripe (stripe library signatures)', () => {
    let svc: TestService;
    before(async () => {
      svc = await startTestService({ env: { STRIPE_WEBHOOK_SECRET: STRIPE_SECRET } });
    });
    after(async () => svc.stop());

    it("keeps Stripe's amounts in ISO 4217's minor units: MGA (zero-decimal at Stripe) ×100, ISK (two-decimal at Stripe) ÷100, others as sent (review)", async () => {
      for (const [currency, amount, minor] of [
        ['mga', 5_000, 500_000],
        ['isk', 199_900, 1_999],
        ['huf', 199_050, 199_050],
        ['jpy', 800, 800],
      ] as const) {
        const user = `stripe-${currency}`;
        await createUser(svc, user, { payment_customer_id: `cus_${currency}` });
        const paid = invoicePaid(`${currency}1`, `cus_${currency}`, amount);
        expect((await stripeEvent(svc, { ...paid, object: { ...paid.object, currency } })).body.data.status).to.equal('applied');
        expect((await revenueEvents(svc, user))[0]!.data, currency).to.include({ currency: currency.toUpperCase(), price_minor: minor });
      }
    });

    it('records a paid invoice on the user with that payment_customer_id; a repeat is a duplicate', async () => {
      await createUser(svc, 'stripe-ann', { payment_customer_id: 'cus_ann' });
      const first = await stripeEvent(svc, invoicePaid('ann1', 'cus_ann'));
      expect(first).to.deep.equal({ status: 200, body: { data: { status: 'applied' } } });
      const again = await stripeEvent(svc, invoicePaid('ann1', 'cus_ann'));
      expect(again.body.data.status).to.equal('duplicate');
      const recorded = await revenueEvents(svc, 'stripe-ann');
      expect(recorded).to.have.length(1);
      expect(recorded[0]!.data).to.include({
        provider: 'stripe',
        notification_id: 'evt_ann1',
        kind: 'purchase',
        price_minor: 999,
        currency: 'EUR',
        transaction_id: 'in_ann1',
        product_id: 'price_monthly',
      });
      const row = (await inbox(svc, '&provider=stripe')).find((item) => item.id === 'evt_ann1');
      expect(row).to.include({ status: 'applied', app_user_id: 'stripe-ann' });
      expect(row.event_ids).to.deep.equal([recorded[0]!.id]);
    });

    it('40 concurrent copies of one signed notification: exactly one applied, 39 duplicates, one event in its inbound stream', async () => {
      await createUser(svc, 'stripe-burst', { payment_customer_id: 'cus_burst' });
      const event = invoicePaid('burst', 'cus_burst');
      // One delivery, signed once, sent 40 times byte for byte (as Stripe's retries and a proxy's replays are).
      const payload = JSON.stringify({
        id: event.id,
        object: 'event',
        type: event.type,
        created: Math.floor(Date.now() / 1000),
        data: { object: event.object },
      });
      const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: STRIPE_SECRET });
      const answers = await Promise.all(Array.from({ length: 40 }, () => post(svc, '/webhooks/stripe', payload, { 'stripe-signature': signature })));
      expect(answers.map((answer) => answer.status)).to.deep.equal(Array(40).fill(200));
      expect(answers.filter((answer) => answer.body.data.status === 'applied')).to.have.length(1);
      expect(answers.filter((answer) => answer.body.data.status === 'duplicate')).to.have.length(39);
      expect(await events(svc, 'stream=inbound-stripe-evt_burst')).to.have.length(1);
      expect(await revenueEvents(svc, 'stripe-burst')).to.have.length(1);
    });

    it('refuses a signature stamped more than 300 s from now, in the past or in the future, with 401 (SPEC §11: 300 s tolerance)', async () => {
      for (const [offset, status] of [
        [-301, 401],
        [3_600, 401],
        // The service reads its clock after this test does: a second may pass between the two
        // (a busy machine), which brings a stamp 301 s ahead within the tolerance. 305 s is past it still.
        [305, 401],
        [-290, 200],
        [290, 200],
      ] as const) {
        const now = Math.floor(Date.now() / 1000);
        const payload = JSON.stringify({
          id: `evt_stamp_${offset}`,
          object: 'event',
          type: 'invoice.paid',
          created: now,
          data: { object: invoicePaid(`stamp_${offset}`, 'cus_stamp').object },
        });
        const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: STRIPE_SECRET, timestamp: now + offset });
        const answer = await post(svc, '/webhooks/stripe', payload, { 'stripe-signature': signature });
        expect(answer.status, `signed ${offset} s from now`).to.equal(status);
        if (status === 401) expect(answer.body.errors[0].code).to.equal('WEBHOOK.UNAUTHORIZED');
      }
      // A header with a second, current `t=` before the signed one (Stripe's library reads the last): still 401 (security probe).
      const now = Math.floor(Date.now() / 1000);
      const payload = JSON.stringify({
        id: 'evt_stamp_two',
        object: 'event',
        type: 'invoice.paid',
        created: now,
        data: { object: invoicePaid('stamp_two', 'cus_stamp').object },
      });
      const future = Stripe.webhooks.generateTestHeaderString({ payload, secret: STRIPE_SECRET, timestamp: now + 100_000 });
      const futureSignature = future.split(',').find((part) => part.startsWith('v1='))!;
      // Also spelt as the library still reads it (`+N`, ` N`: parseInt), alone or after a current one (review).
      for (const header of [
        `t=${now},${future}`,
        `t=+${now + 100_000},${futureSignature}`,
        `t= ${now + 100_000},${futureSignature}`,
        `t=1,t=+${now + 100_000},${futureSignature}`,
      ]) {
        const answer = await post(svc, '/webhooks/stripe', payload, { 'stripe-signature': header });
        expect(answer.status, header).to.equal(401);
        expect(answer.body.errors[0].code, header).to.equal('WEBHOOK.UNAUTHORIZED');
      }
    });

    it('refuses a bad signature with 401 and records it without its payload', async () => {
      const payload = JSON.stringify({ id: 'evt_forged', type: 'invoice.paid', data: { object: {} } });
      const forged = await post(svc, '/webhooks/stripe', payload, { 'stripe-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` });
      expect(forged.status).to.equal(401);
      expect(forged.body.errors[0].code).to.equal('WEBHOOK.UNAUTHORIZED');
      const missing = await post(svc, '/webhooks/stripe', payload);
      expect(missing.status).to.equal(401);
      const rejected = await inbox(svc, '&status=rejected');
      expect(rejected.length).to.be.at.least(2);
      expect(rejected[0]).to.include({ id: null, provider: 'stripe', status: 'rejected', app_user_id: null });
      expect(JSON.stringify(await events(svc, 'type=NotificationRejected'))).not.to.include('evt_forged');
    });

    it('answers 400 for a verified payload of the wrong shape', async () => {
      const malformed = await stripeEvent(svc, { id: 'evt_bad', type: 'invoice.paid', object: { id: 'in_x' } });
      expect(malformed.status).to.equal(400);
      expect(malformed.body.errors[0].code).to.equal('BAD_REQUEST');
      // An empty event id, or an amount beyond what the log can hold: 400 too, never a 500.
      expect((await stripeEvent(svc, { id: '', type: 'customer.created', object: {} })).body.errors[0]).to.include({
        status: 400,
        code: 'BAD_REQUEST',
        source: '/id',
      });
      const huge = invoicePaid('huge', 'cus_huge');
      huge.object.amount_paid = 1e300;
      expect((await stripeEvent(svc, huge)).body.errors[0]).to.include({ status: 400, code: 'BAD_REQUEST', source: '/data/object/amount_paid' });
      // Times the log cannot hold, or that are no time at all: 400, never a 500 (Stripe would retry a 500 for days).
      const signed = (event: unknown) => {
        const payload = JSON.stringify(event);
        return post(svc, '/webhooks/stripe', payload, { 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: STRIPE_SECRET }) });
      };
      const now = Math.floor(Date.now() / 1000);
      const farPeriod = invoicePaid('far', 'cus_far');
      farPeriod.object.lines.data[0]!.period.start = 9e15;
      for (const event of [
        { id: 'evt_t1', object: 'event', type: 'ping.test', created: 1e14, data: { object: {} } },
        { id: 'evt_t2', object: 'event', type: 'ping.test', created: 'abc', data: { object: {} } },
        { id: 'evt_t3', object: 'event', type: 'ping.test', data: { object: {} } },
        { id: farPeriod.id, object: 'event', type: farPeriod.type, created: now, data: { object: farPeriod.object } },
        {
          id: 'evt_t5',
          object: 'event',
          type: 'customer.subscription.deleted',
          created: now,
          data: { object: { id: 'sub_t5', customer: 'cus_t5', ended_at: -9e15 } },
        },
      ]) {
        const refused = await signed(event);
        expect(refused.body.errors?.[0], event.id).to.include({ status: 400, code: 'BAD_REQUEST' });
      }
      // A negative amount, or a currency that is not three letters: malformed, never counted as money.
      const negative = invoicePaid('negative', 'cus_neg');
      negative.object.amount_paid = -500;
      const refunded = chargeRefunded('neg-r', 'cus_neg', 'in_neg', -1);
      for (const event of [negative, refunded])
        expect((await stripeEvent(svc, event)).body.errors?.[0], event.id).to.include({ status: 400, code: 'BAD_REQUEST' });
      for (const currency of ['', '\u0000', 'EURO', '999', 'x'.repeat(5000)]) {
        const odd = invoicePaid(`currency-${currency.length}-${currency.charCodeAt(0)}`, 'cus_neg');
        odd.object.currency = currency;
        expect((await stripeEvent(svc, odd)).body.errors?.[0], JSON.stringify(currency)).to.include({
          status: 400,
          code: 'BAD_REQUEST',
          source: '/data/object/currency',
        });
      }
      // Signed JSON that is not an object: BODY_INVALID (SPEC §9).
      for (const body of [[1, 2], 'x', null])
        expect((await signed(body)).body.errors[0], JSON.stringify(body)).to.include({ status: 400, code: 'BODY_INVALID' });
      // A lone UTF-16 surrogate (which JSON can carry) in the event id: 400, as in every JSON body, never a 500.
      expect((await stripeEvent(svc, { ...invoicePaid('lone', 'cus_lone'), id: '\ud800' })).body.errors[0]).to.include({ status: 400, code: 'BAD_REQUEST' });
    });

    it("matches the user's current payment customer only: one it changed or cleared no longer matches", async () => {
      await createUser(svc, 'stripe-mover', { payment_customer_id: 'cus_old' });
      await createUser(svc, 'stripe-mover', { payment_customer_id: 'cus_new' });
      await createUser(svc, 'stripe-leaver', { payment_customer_id: 'cus_gone' });
      await createUser(svc, 'stripe-leaver', { payment_customer_id: null });
      expect((await stripeEvent(svc, invoicePaid('mover-old', 'cus_old'))).body.data.status).to.equal('unmatched');
      expect((await stripeEvent(svc, invoicePaid('leaver-gone', 'cus_gone'))).body.data.status).to.equal('unmatched');
      expect((await stripeEvent(svc, invoicePaid('mover-new', 'cus_new'))).body.data.status).to.equal('applied');
      // A customer passed on: the user who has it now, though an earlier holder's link is newer than theirs is not.
      await createUser(svc, 'stripe-heir', { payment_customer_id: 'cus_passed' });
      await createUser(svc, 'stripe-giver', { payment_customer_id: 'cus_passed' });
      await createUser(svc, 'stripe-giver', { payment_customer_id: 'cus_other' });
      expect((await stripeEvent(svc, invoicePaid('passed', 'cus_passed'))).body.data.status).to.equal('applied');
      expect((await revenueEvents(svc, 'stripe-heir')).map((event) => event.data.notification_id)).to.deep.equal(['evt_passed']);
      expect(await revenueEvents(svc, 'stripe-giver')).to.deep.equal([]);
      expect((await revenueEvents(svc, 'stripe-mover')).map((event) => event.data.notification_id)).to.deep.equal(['evt_mover-new']);
      // However many newer links others left behind (one per change), the holder is found.
      await createUser(svc, 'stripe-holder', { payment_customer_id: 'cus_held' });
      for (let round = 0; round < 60; round += 1) await createUser(svc, 'stripe-flapper', { payment_customer_id: round % 2 === 0 ? 'cus_held' : 'cus_else' });
      await createUser(svc, 'stripe-flapper', { payment_customer_id: 'cus_else' });
      expect((await stripeEvent(svc, invoicePaid('held', 'cus_held'))).body.data.status).to.equal('applied');
      expect((await revenueEvents(svc, 'stripe-holder')).map((event) => event.data.notification_id)).to.deep.equal(['evt_held']);
    });

    it('records a dispute whose charge names its customer as a refund of its own; one naming a bare charge id stays unmatched', async () => {
      await createUser(svc, 'stripe-disputed', { payment_customer_id: 'cus_disputed' });
      expect((await stripeEvent(svc, invoicePaid('disputed', 'cus_disputed', 1500))).body.data.status).to.equal('applied');
      // A partial refund first (running total 300): the dispute's 1,200 adds to it, it does not repeat it.
      expect((await stripeEvent(svc, chargeRefunded('disputed-r', 'cus_disputed', 'in_disputed', 300))).body.data.status).to.equal('applied');
      const dispute = (id: string, charge: unknown) => ({
        id: `evt_${id}`,
        type: 'charge.dispute.created',
        object: { id: `dp_${id}`, object: 'dispute', charge, amount: 1200, currency: 'eur' },
      });
      const expanded = { id: 'ch_disputed', object: 'charge', customer: 'cus_disputed', invoice: 'in_disputed' };
      expect((await stripeEvent(svc, dispute('dp1', expanded))).body.data.status).to.equal('applied');
      const refunds = (await revenueEvents(svc, 'stripe-disputed')).filter((event) => event.type === 'RefundRecorded');
      expect(
        refunds.map((event) => [event.data.notification_id, event.data.transaction_id, event.data.price_minor, event.data.repeats_refund ?? false]),
      ).to.deep.equal([
        ['evt_disputed-r', 'in_disputed', 300, false],
        ['evt_dp1', 'dp_dp1', 1200, false],
      ]);
      expect((await stripeEvent(svc, dispute('dp2', 'ch_bare'))).body.data.status).to.equal('unmatched');
    });

    it('keeps a notification of an unknown customer as unmatched and applies it when the user appears', async () => {
      expect((await stripeEvent(svc, invoicePaid('late1', 'cus_late'))).body.data.status).to.equal('unmatched');
      expect((await inbox(svc, '&status=unmatched')).map((row) => row.id)).to.include('evt_late1');
      await createUser(svc, 'stripe-late', { payment_customer_id: 'cus_late' });
      await eventually(async () => expect(await revenueEvents(svc, 'stripe-late')).to.have.length(1));
      await eventually(async () =>
        expect((await inbox(svc, '&provider=stripe')).find((row) => row.id === 'evt_late1')).to.include({ status: 'applied', app_user_id: 'stripe-late' }),
      );
      // Retried by the provider afterwards: still one record.
      expect((await stripeEvent(svc, invoicePaid('late1', 'cus_late'))).body.data.status).to.equal('duplicate');
      expect(await revenueEvents(svc, 'stripe-late')).to.have.length(1);
    });

    it('counts partial refunds of one invoice once, with the running total Stripe sends as the amount refunded', async () => {
      await putProgram(svc, 'stripe-partial', { rewards: { sender: [], receiver: [] } });
      const referrer = await createUser(svc, 'partial-referrer');
      await createUser(svc, 'partial-claimer', { payment_customer_id: 'cus_partial' });
      expect((await svc.call('POST', '/users/partial-claimer/claim-code', { code: referrer.referral_code })).status).to.equal(200);
      expect((await stripeEvent(svc, invoicePaid('partial', 'cus_partial', 1000))).body.data.status).to.equal('applied');
      // charge.refunded for each partial refund carries the charge's amount_refunded so far: 300, then 1,000.
      expect((await stripeEvent(svc, chargeRefunded('partial-r1', 'cus_partial', 'in_partial', 300))).body.data.status).to.equal('applied');
      expect((await stripeEvent(svc, chargeRefunded('partial-r2', 'cus_partial', 'in_partial', 1000))).body.data.status).to.equal('applied');
      const refunds = (await revenueEvents(svc, 'partial-claimer')).filter((event) => event.type === 'RefundRecorded');
      expect(refunds.map((event) => [event.data.price_minor, event.data.repeats_refund ?? false, event.data.adds_refunded_minor ?? null])).to.deep.equal([
        [300, false, null],
        [1000, true, 700],
      ]);
      await settled(svc);
      const row = (await svc.admin('GET', '/admin/attribution?group_by=code')).body.data.groups.find((group: any) => group.group === referrer.referral_code);
      expect(row).to.deep.include({ claims: 1, refunds: 1 });
      expect(row.revenue).to.deep.equal([{ currency: 'EUR', gross_minor: 1000, refunded_minor: 1000 }]);
      const [day] = refunds[0]!.data.recorded_at.split('T');
      const daily = (await svc.admin('GET', `/admin/analytics/daily?from=${day}&to=${day}&code=${referrer.referral_code}`)).body.data.days[0];
      expect(daily).to.include({ refunds: 1 });
      expect(daily.revenue).to.deep.equal([{ currency: 'EUR', gross_minor: 1000, refunded_minor: 1000 }]);
    });

    it('keeps the most refunded so far when Stripe delivers the running totals out of order: a later, larger total adds only what is new', async () => {
      await putProgram(svc, 'stripe-partial', { rewards: { sender: [], receiver: [] } });
      const referrer = await createUser(svc, 'late-total-referrer');
      await createUser(svc, 'late-total-claimer', { payment_customer_id: 'cus_late_total' });
      expect((await svc.call('POST', '/users/late-total-claimer/claim-code', { code: referrer.referral_code })).status).to.equal(200);
      expect((await stripeEvent(svc, invoicePaid('late-total', 'cus_late_total', 1000))).body.data.status).to.equal('applied');
      // The running totals 300 and 600, delivered newest first, then 800.
      for (const [id, total] of [
        ['late-total-r2', 600],
        ['late-total-r1', 300],
        ['late-total-r3', 800],
      ] as const) {
        expect((await stripeEvent(svc, chargeRefunded(id, 'cus_late_total', 'in_late-total', total))).body.data.status).to.equal('applied');
      }
      const refunds = (await revenueEvents(svc, 'late-total-claimer')).filter((event) => event.type === 'RefundRecorded');
      expect(refunds.map((event) => [event.data.price_minor, event.data.repeats_refund ?? false, event.data.adds_refunded_minor ?? null])).to.deep.equal([
        [600, false, null],
        [300, true, 0],
        [800, true, 200],
      ]);
      await settled(svc);
      const row = (await svc.admin('GET', '/admin/attribution?group_by=code')).body.data.groups.find((group: any) => group.group === referrer.referral_code);
      expect(row.revenue).to.deep.equal([{ currency: 'EUR', gross_minor: 1000, refunded_minor: 800 }]);
    });

    it('counts one invoice sent twice under two event ids once: the second is kept as a repeat, and a refund after it is a refund of that one payment', async () => {
      // The same program as the partial refunds' (the service allows 100% in all).
      await putProgram(svc, 'stripe-partial', { rewards: { sender: [], receiver: [] } });
      const referrer = await createUser(svc, 'twice-referrer');
      await createUser(svc, 'twice-claimer', { payment_customer_id: 'cus_twice' });
      expect((await svc.call('POST', '/users/twice-claimer/claim-code', { code: referrer.referral_code })).status).to.equal(200);
      const paid = invoicePaid('twice', 'cus_twice', 1999);
      expect((await stripeEvent(svc, paid)).body.data.status).to.equal('applied');
      expect((await stripeEvent(svc, { ...paid, id: 'evt_twice-again' })).body.data.status).to.equal('applied');
      expect((await stripeEvent(svc, { ...paid, id: 'evt_twice-again' })).body.data.status).to.equal('duplicate');
      expect((await stripeEvent(svc, chargeRefunded('twice-r', 'cus_twice', 'in_twice', 1999))).body.data.status).to.equal('applied');
      const recorded = await revenueEvents(svc, 'twice-claimer');
      expect(recorded.map((event) => [event.type, event.data.notification_id, event.data.repeats_purchase ?? false])).to.deep.equal([
        ['PurchaseRecorded', 'evt_twice', false],
        ['PurchaseRecorded', 'evt_twice-again', true],
        ['RefundRecorded', 'evt_twice-r', false],
      ]);
      await settled(svc);
      expect((await inbox(svc, '&provider=stripe')).find((row) => row.id === 'evt_twice-again')).to.include({
        status: 'applied',
        app_user_id: 'twice-claimer',
      });
      const row = (await svc.admin('GET', '/admin/attribution?group_by=code')).body.data.groups.find((group: any) => group.group === referrer.referral_code);
      expect(row).to.deep.include({ claims: 1, refunds: 1 });
      expect(row.revenue).to.deep.equal([{ currency: 'EUR', gross_minor: 1999, refunded_minor: 1999 }]);
      const [day] = recorded[0]!.data.recorded_at.split('T');
      const daily = (await svc.admin('GET', `/admin/analytics/daily?from=${day}&to=${day}&code=${referrer.referral_code}`)).body.data.days[0];
      expect(daily).to.include({ claims: 1, refunds: 1 });
      expect(daily.revenue).to.deep.equal([{ currency: 'EUR', gross_minor: 1999, refunded_minor: 1999 }]);
      // The customer moves to another user and back: each copy sent meanwhile repeats the one payment, whoever it is recorded for.
      await createUser(svc, 'twice-other', { payment_customer_id: 'cus_twice' });
      expect((await stripeEvent(svc, { ...paid, id: 'evt_twice-3' })).body.data.status).to.equal('applied');
      await createUser(svc, 'twice-other', { payment_customer_id: 'cus_twice-elsewhere' });
      expect((await stripeEvent(svc, { ...paid, id: 'evt_twice-4' })).body.data.status).to.equal('applied');
      const repeats = async (user: string) =>
        (await revenueEvents(svc, user))
          .filter((event) => event.type === 'PurchaseRecorded')
          .map((event) => [event.data.notification_id, event.data.repeats_purchase ?? false]);
      expect(await repeats('twice-other')).to.deep.equal([['evt_twice-3', true]]);
      expect(await repeats('twice-claimer')).to.deep.equal([
        ['evt_twice', false],
        ['evt_twice-again', true],
        ['evt_twice-4', true],
      ]);
      await settled(svc);
      const after = (await svc.admin('GET', '/admin/attribution?group_by=code')).body.data.groups.find((group: any) => group.group === referrer.referral_code);
      expect(after.revenue).to.deep.equal([{ currency: 'EUR', gross_minor: 1999, refunded_minor: 1999 }]);
    });

    it('applies notifications that waited for their user in the order they arrived, not by their ids', async () => {
      // The refund arrives first under an id that sorts last; both wait for a user with this customer.
      expect((await stripeEvent(svc, chargeRefunded('zz-pending-r', 'cus_pending', 'in_aa-pending1'))).body.data.status).to.equal('unmatched');
      expect((await stripeEvent(svc, invoicePaid('aa-pending1', 'cus_pending'))).body.data.status).to.equal('unmatched');
      await createUser(svc, 'stripe-pending', { payment_customer_id: 'cus_pending' });
      const recorded = await eventually(async () => {
        const found = await revenueEvents(svc, 'stripe-pending');
        expect(found).to.have.length(2);
        return found;
      });
      expect(recorded.map((event) => event.type)).to.deep.equal(['RefundRecorded', 'PurchaseRecorded']);
      expect(recorded[1]!.data.refunded_before).to.equal(true);
    });

    it('records a refund delivered before its purchase; the purchase then does not make the user premium', async () => {
      await createUser(svc, 'stripe-ooo', { payment_customer_id: 'cus_ooo' });
      expect((await stripeEvent(svc, chargeRefunded('ooo-r', 'cus_ooo', 'in_ooo1'))).body.data.status).to.equal('applied');
      expect((await stripeEvent(svc, invoicePaid('ooo1', 'cus_ooo'))).body.data.status).to.equal('applied');
      const recorded = await revenueEvents(svc, 'stripe-ooo');
      expect(recorded.map((event) => event.type)).to.deep.equal(['RefundRecorded', 'PurchaseRecorded']);
      expect(recorded[1]!.data.refunded_before).to.equal(true);
    });

    it('lists the inbox oldest first, filtered, paged by position', async () => {
      const all = await inbox(svc, '&provider=stripe');
      expect(all.length).to.be.at.least(5);
      const seen: string[] = [];
      let after: string | null = null;
      for (;;) {
        const page: any = (await svc.admin('GET', `/admin/webhooks/inbound?provider=stripe&limit=2${after ? `&after=${after}` : ''}`)).body.data;
        // No page is empty: a page holding the last notification says none follows.
        expect(page.notifications).to.not.have.length(0);
        seen.push(...page.notifications.map((row: any) => `${row.id}/${row.status}`));
        if (page.next_after === null) break;
        after = page.next_after;
      }
      expect(seen).to.deep.equal(all.map((row) => `${row.id}/${row.status}`));
      expect((await svc.admin('GET', `/admin/webhooks/inbound?provider=stripe&limit=${all.length}`)).body.data.next_after).to.equal(null);
      expect(all.map((row) => row.received_at)).to.deep.equal([...all.map((row) => row.received_at)].sort());
      expect((await svc.admin('GET', '/admin/webhooks/inbound?status=nonsense')).status).to.equal(400);
      expect((await svc.call('GET', '/admin/webhooks/inbound')).status).to.equal(403);
    });

    it('refuses a body over 1 MiB (413) and other methods (405)', async () => {
      const big = await post(svc, '/webhooks/stripe', JSON.stringify({ pad: 'x'.repeat(1024 * 1024) }), { 'stripe-signature': 't=1,v1=00' });
      expect(big.status).to.equal(413);
      expect(big.body.errors[0].code).to.equal('BODY_TOO_LARGE');
      const get = await fetch(`${svc.url}/webhooks/stripe`);
      expect(get.status).to.equal(405);
    });

    it('answers 404 WEBHOOK.NOT_CONFIGURED for each provider that is off (here all but Stripe), whatever the body', async () => {
      for (const provider of ['revenuecat', 'app-store', 'google-play']) {
        // JSON, another media type, another charset, bytes that are not UTF-8: the provider is off before the body counts.
        for (const [body, type] of [
          ['{}', 'application/json'],
          ['hello', 'text/plain'],
          ['{}', 'application/json; charset=iso-8859-1'],
          [Buffer.from([0xff, 0xfe]), 'application/json'],
        ] as const) {
          const off = await post(svc, `/webhooks/${provider}`, body, { authorization: 'x', 'content-type': type });
          expect(off.status, `${provider} ${type}`).to.equal(404);
          expect(off.body.errors[0], `${provider} ${type}`).to.include({ code: 'WEBHOOK.NOT_CONFIGURED', status: 404 });
        }
      }
    });
  });

  describe('RevenueCat, CONVERSIONS_FROM=verified and clawback', () => {
    let svc: TestService;
    before(async () => {
      svc = await startTestService({ env: { REVENUECAT_WEBHOOK_AUTH: REVENUECAT_AUTH, CONVERSIONS_FROM: 'verified' } });
      await putReward(svc, 'coins', { kind: 'credit', name: 'Coins', credits: 100 });
      await putReward(svc, 'vip', { kind: 'basic', name: 'VIP' });
      await putProgram(svc, 'friends', {
        rewards: {
          sender: [{ reward_key: 'coins', activation: { variant: 'conversion', amount: 1, limit: 0 }, deactivation: never, clawback: 'on_refund' }],
          receiver: [
            { reward_key: 'coins', activation: { variant: 'conversion' }, deactivation: never, clawback: 'on_refund' },
            { reward_key: 'vip', activation: { variant: 'conversion' }, deactivation: never, clawback: 'on_refund' },
          ],
        },
      });
    });
    after(async () => svc.stop());

    it('refuses a wrong Authorization header (401) and a body that is not JSON (400)', async () => {
      expect((await revenueCat(svc, rcEvent('rc-x', 'INITIAL_PURCHASE', 'nobody'), 'Bearer wrong')).status).to.equal(401);
      const notJson = await post(svc, '/webhooks/revenuecat', '{not json', { authorization: REVENUECAT_AUTH });
      expect(notJson.status).to.equal(400);
      expect(notJson.body.errors[0].code).to.equal('BODY_INVALID');
      // JSON, but not an object: BODY_INVALID too (SPEC §9).
      for (const body of ['[1,2]', '"x"', 'null']) {
        expect((await post(svc, '/webhooks/revenuecat', body, { authorization: REVENUECAT_AUTH })).body.errors[0], body).to.include({
          status: 400,
          code: 'BODY_INVALID',
        });
      }
      // A purchase naming no user is not RevenueCat's shape (400, not kept to wait for ever); a TRANSFER may name none.
      const userless = { id: 'rc-userless', type: 'INITIAL_PURCHASE', price_in_purchased_currency: 4.99, currency: 'USD' };
      expect((await revenueCat(svc, userless)).body.errors[0]).to.include({ status: 400, code: 'BAD_REQUEST', source: '/event/app_user_id' });
      expect((await revenueCat(svc, { id: 'rc-transfer', type: 'TRANSFER' })).body).to.deep.equal({ data: { status: 'applied' } });
      // A leading byte order mark is read past, as on the rest of the API.
      const bom = await post(
        svc,
        '/webhooks/revenuecat',
        `\uFEFF${JSON.stringify({ api_version: '1.0', event: rcEvent('rc-bom', 'INITIAL_PURCHASE', 'nobody') })}`,
        {
          authorization: REVENUECAT_AUTH,
        },
      );
      expect(bom.status).to.equal(200);
      const malformed = await post(svc, '/webhooks/revenuecat', JSON.stringify({ event: { type: 'RENEWAL' } }), { authorization: REVENUECAT_AUTH });
      expect(malformed.status).to.equal(400);
      expect(malformed.body.errors[0].code).to.equal('BAD_REQUEST');
      // Authenticated, but a time past the year 9999 or a price beyond a safe integer: 400, never a 500.
      for (const extra of [
        { purchased_at_ms: 1e20 },
        { event_timestamp_ms: 1e20 },
        { expiration_at_ms: 8.64e15 + 1 },
        { price_in_purchased_currency: 1e300 },
      ]) {
        const refused = await revenueCat(svc, rcEvent(`rc-range-${Object.keys(extra)[0]}`, 'INITIAL_PURCHASE', 'nobody', extra));
        expect(refused.status, JSON.stringify(extra)).to.equal(400);
        // The field it names (SPEC §1: `source` is null only for a request that could not be read; OpenAPI fuzzer probe).
        expect(refused.body.errors[0], JSON.stringify(extra)).to.include({ code: 'BAD_REQUEST', source: `/event/${Object.keys(extra)[0]}` });
      }
      // A price too small for a double would be read as 0 (an unpaid purchase): 400, as on the JSON API.
      const tiny = JSON.stringify({ api_version: '1.0', event: rcEvent('rc-tiny', 'INITIAL_PURCHASE', 'nobody') }).replace(
        /"price_in_purchased_currency":[0-9.]+/,
        '"price_in_purchased_currency":1e-400',
      );
      expect(tiny).to.contain('1e-400');
      const refusedTiny = await post(svc, '/webhooks/revenuecat', tiny, { authorization: REVENUECAT_AUTH });
      expect(refusedTiny.body.errors[0]).to.include({ status: 400, code: 'BAD_REQUEST', source: '/event/price_in_purchased_currency' });
      // Its sender is known first: the same body with another Authorization is 401 (and kept as rejected).
      expect((await post(svc, '/webhooks/revenuecat', tiny, { authorization: 'Bearer wrong' })).status).to.equal(401);
      // A currency that is not three letters: 400; one in lower case is kept upper case, as every provider's.
      const oddCurrency = await revenueCat(svc, rcEvent('rc-odd-currency', 'INITIAL_PURCHASE', 'nobody', { currency: 'US' }));
      expect(oddCurrency.body.errors[0]).to.include({ status: 400, code: 'BAD_REQUEST', source: '/event/currency' });
      await createUser(svc, 'rc-lower');
      expect(
        (await revenueCat(svc, rcEvent('rc-lower-currency', 'INITIAL_PURCHASE', 'rc-lower', { currency: 'jpy', price_in_purchased_currency: 500 }))).status,
      ).to.equal(200);
      expect((await revenueEvents(svc, 'rc-lower'))[0]!.data).to.include({ currency: 'JPY', price_minor: 500 });
      // Minor units are ISO 4217's, as Stripe's amounts are: a forint has 100 fillér, a dinar 1,000 fils.
      for (const [currency, price, minor] of [
        ['HUF', 1990.5, 199_050],
        ['KWD', 1.5, 1_500],
        ['IDR', 15_000, 1_500_000],
      ] as const) {
        const user = `rc-${currency.toLowerCase()}`;
        await createUser(svc, user);
        expect((await revenueCat(svc, rcEvent(`rc-${currency}`, 'INITIAL_PURCHASE', user, { currency, price_in_purchased_currency: price }))).status).to.equal(
          200,
        );
        expect((await revenueEvents(svc, user))[0]!.data, currency).to.include({ currency, price_minor: minor });
      }
      // A lone UTF-16 surrogate in the notification's id or user: 400, never a 500.
      for (const [id, user] of [
        ['\ud800', 'nobody'],
        ['rc-lone-user', 'x\udc00'],
      ]) {
        const refused = await revenueCat(svc, rcEvent(id!, 'INITIAL_PURCHASE', user!));
        expect(refused.body.errors[0], JSON.stringify(id)).to.include({ status: 400, code: 'BAD_REQUEST' });
      }
    });

    it('a burst of 50 concurrent deliveries of one notification records one event', async () => {
      await createUser(svc, 'burst');
      const answers = await Promise.all(Array.from({ length: 50 }, () => revenueCat(svc, rcEvent('rc-burst', 'INITIAL_PURCHASE', 'burst'))));
      expect(answers.every((answer) => answer.status === 200)).to.equal(true);
      expect(answers.filter((answer) => answer.body.data.status === 'applied')).to.have.length(1);
      expect(await revenueEvents(svc, 'burst')).to.have.length(1);
      expect(await events(svc, 'stream=inbound-revenuecat-rc-burst')).to.have.length(1);
    });

    it("under verified, the client's is_premium converts nothing; the verified purchase does; its refund claws back both sides", async () => {
      const referrer = await createUser(svc, 'rc-referrer');
      await createUser(svc, 'rc-claimer');
      expect((await svc.call('POST', '/users/rc-claimer/claim-code', { code: referrer.referral_code })).status).to.equal(200);
      await createUser(svc, 'rc-claimer', { is_premium: true, is_trial: false });
      expect(await events(svc, 'stream=user-rc-claimer&type=UserConverted')).to.have.length(0);
      expect((await getUser(svc, 'rc-claimer')).rewards.active.credit).to.have.length(0);

      expect((await revenueCat(svc, rcEvent('rc-buy', 'INITIAL_PURCHASE', 'rc-claimer'))).body.data.status).to.equal('applied');
      const converted = await events(svc, 'stream=user-rc-claimer&type=UserConverted');
      expect(converted).to.have.length(1);
      expect(converted[0]!.data).to.include({ source: 'verified' });
      expect(converted[0]!.data.purchase).to.include({ provider: 'revenuecat', notification_id: 'rc-buy', transaction_id: 'tx-rc-buy' });
      await eventually(async () => expect((await getUser(svc, 'rc-referrer')).stats.conversions).to.equal(1));
      await eventually(async () => expect((await getUser(svc, 'rc-referrer')).rewards.active.credit.map((entry: any) => entry.credits)).to.deep.equal([100]));

      // The claimer spends 30 of its 100 coins; the referrer spends all of its 100.
      expect((await svc.call('POST', '/users/rc-claimer/rewards/withdraw-credits', { key: 'coins', amount: 30 })).status).to.equal(200);
      expect((await svc.call('POST', '/users/rc-referrer/rewards/withdraw-credits', { key: 'coins', amount: 100 })).status).to.equal(200);

      const refund = rcEvent('rc-refund', 'CANCELLATION', 'rc-claimer', { cancel_reason: 'CUSTOMER_SUPPORT', transaction_id: 'tx-rc-buy' });
      expect((await revenueCat(svc, refund)).body.data.status).to.equal('applied');
      const refunded = await events(svc, 'stream=user-rc-claimer&type=RefundRecorded');
      expect(refunded[0]!.data.reverses_conversion).to.equal(true);

      await eventually(async () => expect(await events(svc, 'type=RewardRevoked')).to.have.length(3));
      const revoked = await events(svc, 'type=RewardRevoked');
      const claimerCoins = revoked.find((event) => event.stream === 'user-rc-claimer' && event.data.kind === 'credit')!;
      expect(claimerCoins.data).to.include({ shortfall: 30, balance_after: 0, claimer: 'rc-claimer' });
      expect(claimerCoins.data.refund).to.include({ notification_id: 'rc-refund' });
      const referrerCoins = revoked.find((event) => event.stream === 'user-rc-referrer')!;
      expect(referrerCoins.data).to.include({ shortfall: 100, balance_after: 0 });
      await eventually(async () => {
        const claimer = await getUser(svc, 'rc-claimer');
        expect(claimer.rewards.active.basic).to.have.length(0);
        expect(claimer.rewards.expired.basic).to.have.length(1);
        // A revoked reward of another kind ends at once: it expired at its revocation (SPEC §5.3).
        const basicRevoked = revoked.find((event) => event.stream === 'user-rc-claimer' && event.data.kind === 'basic')!;
        expect(claimer.rewards.expired.basic[0].expired_at).to.equal(basicRevoked.data.revoked_at);
        expect(claimer.rewards.active.credit.reduce((sum: number, entry: any) => sum + entry.credits, 0)).to.equal(0);
      });

      // Auditors: the clawback and the shortfall in the ledger, linked to the refund notification.
      const rows = await eventually(async () => {
        const entries = (await svc.admin('GET', '/admin/users/rc-claimer/credit-ledger')).body.data.entries as any[];
        expect(entries.map((row) => row.kind)).to.include('shortfall');
        return entries;
      });
      const clawback = rows.find((row) => row.kind === 'clawback')!;
      expect(clawback).to.include({ delta: -70, balance_after: 0 });
      expect(clawback.cause.refund).to.include({ provider: 'revenuecat', notification_id: 'rc-refund' });
      expect(rows.find((row) => row.kind === 'shortfall')).to.include({ delta: 0, shortfall: 30, balance_after: 0 });
      const report = await auditCredits(svc.service.container.resolve(EventLog), svc.service.container.resolve(TOKENS.ReadStore));
      expect(report.mismatches).to.deep.equal([]);

      // Delivered again: nothing more is revoked.
      expect((await revenueCat(svc, refund)).body.data.status).to.equal('duplicate');
      expect(await events(svc, 'type=RewardRevoked')).to.have.length(3);
      // Another notification refunding the same transaction (as Apple sends REFUND, then REVOKE):
      // recorded, reverses nothing more, and the figures below count the refund once.
      const again = rcEvent('rc-refund-2', 'CANCELLATION', 'rc-claimer', { cancel_reason: 'CUSTOMER_SUPPORT', transaction_id: 'tx-rc-buy' });
      expect((await revenueCat(svc, again)).body.data.status).to.equal('applied');
      const refunds = await events(svc, 'stream=user-rc-claimer&type=RefundRecorded');
      expect(refunds.map((event) => [event.data.notification_id, event.data.reverses_conversion, event.data.repeats_refund ?? false])).to.deep.equal([
        ['rc-refund', true, false],
        ['rc-refund-2', false, true],
      ]);
      await settled(svc);
      expect(await events(svc, 'type=RewardRevoked')).to.have.length(3);
      const [day] = refunds[0]!.data.recorded_at.split('T');
      const daily = (await svc.admin('GET', `/admin/analytics/daily?from=${day}&to=${day}&code=${referrer.referral_code}`)).body.data.days[0];
      expect(daily).to.include({ refunds: 1 });
      expect(daily.revenue).to.deep.equal([{ currency: 'USD', gross_minor: 499, refunded_minor: 499 }]);

      const attribution = (await svc.admin('GET', '/admin/attribution?group_by=code')).body.data.groups;
      const row = attribution.find((group: any) => group.group === referrer.referral_code);
      expect(row).to.deep.include({ claims: 1, refunds: 1 });
      expect(row.revenue).to.deep.equal([{ currency: 'USD', gross_minor: 499, refunded_minor: 499 }]);
      expect(
        (await svc.admin('GET', '/admin/attribution?group_by=program&from=2026-01-01&to=2099-12-31')).body.data.groups.find(
          (group: any) => group.group === 'friends',
        ),
      ).to.deep.include({ claims: 1, conversions: 1, refunds: 1 });
      // SPEC §11: stats gain `refunds` in admin views only; the app's keep their three keys.
      expect((await svc.admin('GET', '/admin/users/rc-referrer')).body.data.user.stats).to.deep.equal({ claims: 1, conversions: 1, churns: 0, refunds: 1 });
      expect((await svc.call('GET', '/users/rc-referrer')).body.data.user.stats).to.deep.equal({ claims: 1, conversions: 1, churns: 0 });
      expect((await svc.admin('GET', '/admin/attribution?group_by=code&to=2000-01-01')).body.data.groups).to.deep.equal([]);
      // An impossible day or time is refused, not read as a range that finds nothing (or everything).
      for (const [query, source] of [
        ['from=2026-99-99', 'query:/from'],
        ['from=2026-02-31&to=2026-03-01', 'query:/from'],
        ['from=2026-01-01&to=2026-02-30', 'query:/to'],
        // Days, as analytics takes them: a time of day would not be honoured (the counts are per day).
        ['from=2026-01-01T10:00:00Z', 'query:/from'],
        ['to=2026-12-31T23:59:59.999Z', 'query:/to'],
        ['from=2026-11-27&to=2026-11-01', 'query:/from'],
      ]) {
        const refused = await svc.admin('GET', `/admin/attribution?group_by=code&${query}`);
        expect(refused.status, query).to.equal(400);
        expect(refused.body.errors[0], query).to.include({ code: 'BAD_REQUEST', source });
      }
      expect((await svc.admin('GET', '/admin/attribution?group_by=code&from=2026-11-01&to=2026-11-01')).status).to.equal(200);

      // Replay reproduces every read model, the clawback, ledger and inbox included.
      await settled(svc);
      const before = await readModels(svc);
      expect(
        await replayProjections(svc.service.container.resolve(EventLog), svc.service.container.resolve<ReadStore>(TOKENS.ReadStore), defaultProjections),
      ).to.equal('switched');
      expect(await readModels(svc)).to.deep.equal(before);
    });

    it("a refund of a purchase made before the claim counts no money for the code, as that purchase did not, but counts as the refund of the conversion it reverses (the referrer's stats)", async () => {
      const referrer = await createUser(svc, 'pre-referrer');
      await createUser(svc, 'pre-buyer');
      expect((await revenueCat(svc, rcEvent('pre-buy', 'INITIAL_PURCHASE', 'pre-buyer', { currency: 'SEK' }))).body.data.status).to.equal('applied');
      expect((await svc.call('POST', '/users/pre-buyer/claim-code', { code: referrer.referral_code })).status).to.equal(200);
      // Bought after the claim, refunded too: that pair counts for the code.
      expect((await revenueCat(svc, rcEvent('post-buy', 'RENEWAL', 'pre-buyer', { currency: 'SEK' }))).body.data.status).to.equal('applied');
      const refund = (id: string, transaction: string) =>
        rcEvent(id, 'CANCELLATION', 'pre-buyer', { cancel_reason: 'CUSTOMER_SUPPORT', transaction_id: transaction, currency: 'SEK' });
      expect((await revenueCat(svc, refund('pre-refund', 'tx-pre-buy'))).body.data.status).to.equal('applied');
      expect((await revenueCat(svc, refund('post-refund', 'tx-post-buy'))).body.data.status).to.equal('applied');
      const recorded = await revenueEvents(svc, 'pre-buyer');
      expect(recorded.map((event) => [event.data.notification_id, event.data.attribution?.code ?? null])).to.deep.equal([
        ['pre-buy', null],
        ['post-buy', referrer.referral_code],
        ['pre-refund', null],
        ['post-refund', referrer.referral_code],
      ]);
      // The purchase made before the claim converted the user when it claimed (CONVERSIONS_FROM=verified): its refund reverses that conversion.
      expect(recorded[2]!.data).to.deep.include({ reverses_conversion: true, conversion_attribution: recorded[1]!.data.attribution });
      expect(recorded[3]!.data).to.deep.include({ reverses_conversion: false }).and.not.have.property('conversion_attribution');
      await settled(svc);
      const row = (await svc.admin('GET', '/admin/attribution?group_by=code')).body.data.groups.find((group: any) => group.group === referrer.referral_code);
      const price = recorded[1]!.data.price_minor;
      expect(row).to.deep.include({ conversions: 1, refunds: 2 });
      expect(row.revenue).to.deep.equal([{ currency: 'SEK', gross_minor: price, refunded_minor: price }]);
      expect((await svc.admin('GET', '/admin/users/pre-referrer')).body.data.user.stats).to.include({ conversions: 1, refunds: 2 });
      const today = new Date().toISOString().slice(0, 10);
      const daily = (await svc.admin('GET', `/admin/analytics/daily?from=${today}&to=${today}&code=${referrer.referral_code}`)).body.data.days;
      expect(daily[0]).to.include({ conversions: 1, refunds: 2 });
      expect(daily[0].revenue).to.deep.equal([{ currency: 'SEK', gross_minor: price, refunded_minor: price }]);
    });

    it('a held conversion reward approved after its purchase was refunded is granted and revoked at once (the refund came first)', async () => {
      const rule = { kind: 'min_seconds_claim_to_conversion', params: { seconds: 3600 }, action: 'hold' };
      expect((await svc.admin('PUT', '/admin/rules/late-approval', { ...rule, enabled: true })).status).to.be.oneOf([200, 201]);
      const referrer = await createUser(svc, 'late-referrer');
      await createUser(svc, 'late-claimer');
      expect((await svc.call('POST', '/users/late-claimer/claim-code', { code: referrer.referral_code })).status).to.equal(200);
      expect((await revenueCat(svc, rcEvent('late-buy', 'INITIAL_PURCHASE', 'late-claimer'))).body.data.status).to.equal('applied');
      const review = await eventually(async () => {
        const reviews = (await svc.admin('GET', '/admin/reviews?status=pending&limit=1000')).body.data.reviews as any[];
        const found = reviews.find((one) => one.claimer_app_user_id === 'late-claimer');
        expect(found).to.not.equal(undefined);
        return found;
      });
      const refund = rcEvent('late-refund', 'CANCELLATION', 'late-claimer', { cancel_reason: 'CUSTOMER_SUPPORT', transaction_id: 'tx-late-buy' });
      expect((await revenueCat(svc, refund)).body.data.status).to.equal('applied');
      await settled(svc);
      expect((await svc.admin('POST', `/admin/reviews/${review.id}/approve`)).status).to.equal(200);
      // The approval grants the held 100 coins; the refund that came first takes them back.
      const revoked = await eventually(async () => {
        const found = await events(svc, 'stream=user-late-referrer&type=RewardRevoked');
        expect(found).to.have.length(1);
        return found[0]!;
      });
      const granted = (await events(svc, 'stream=user-late-referrer&type=RewardGranted')).filter((event) => event.data.cause.type === 'referrals');
      expect(granted).to.have.length(1);
      expect(revoked.data).to.include({ grant_id: granted[0]!.data.grant_id, claimer: 'late-claimer', shortfall: 0, balance_after: 0 });
      expect(revoked.data.refund).to.include({ provider: 'revenuecat', notification_id: 'late-refund' });
      await eventually(async () =>
        expect((await getUser(svc, 'late-referrer')).rewards.active.credit.reduce((sum: number, entry: any) => sum + entry.credits, 0)).to.equal(0),
      );
      await settled(svc);
      expect(await events(svc, 'stream=user-late-referrer&type=RewardRevoked')).to.have.length(1);
      const report = await auditCredits(svc.service.container.resolve(EventLog), svc.service.container.resolve(TOKENS.ReadStore));
      expect(report.mismatches).to.deep.equal([]);
      expect((await svc.admin('PUT', '/admin/rules/late-approval', { ...rule, enabled: false })).status).to.equal(200);
    });
  });

  describe("a customer's waiting notifications go to the user who has it when they are applied", () => {
    it('not to a user who set it and left it before the reaction got there', async () => {
      const faults = new FaultSwitch();
      const svc = await startTestService({ env: { STRIPE_WEBHOOK_SECRET: STRIPE_SECRET }, backend: faultyBackend(faults) });
      try {
        expect((await stripeEvent(svc, invoicePaid('passing', 'cus_passing'))).body.data.status).to.equal('unmatched');
        // The reaction cannot read what waits for a while: the user sets the customer and leaves it meanwhile.
        faults.mode = 'unavailable';
        faults.when = (method, args) => method === 'find' && args[0] === 'revenue_pending';
        await createUser(svc, 'passer-by', { payment_customer_id: 'cus_passing' });
        await createUser(svc, 'passer-by', { payment_customer_id: 'cus_elsewhere' });
        faults.mode = 'ok';
        await createUser(svc, 'keeper', { payment_customer_id: 'cus_passing' });
        await eventually(async () => expect((await revenueEvents(svc, 'keeper')).map((event) => event.data.notification_id)).to.deep.equal(['evt_passing']));
        expect(await revenueEvents(svc, 'passer-by')).to.deep.equal([]);
        // Two users set one customer while the reaction cannot read: what waits goes to the newer, as a notification arriving now would.
        expect((await stripeEvent(svc, invoicePaid('shared', 'cus_shared'))).body.data.status).to.equal('unmatched');
        faults.mode = 'unavailable';
        await createUser(svc, 'first-holder', { payment_customer_id: 'cus_shared' });
        await createUser(svc, 'second-holder', { payment_customer_id: 'cus_shared' });
        faults.mode = 'ok';
        await eventually(async () =>
          expect((await revenueEvents(svc, 'second-holder')).map((event) => event.data.notification_id)).to.deep.equal(['evt_shared']),
        );
        expect(await revenueEvents(svc, 'first-holder')).to.deep.equal([]);
      } finally {
        await svc.stop();
      }
    });
  });

  describe('a notification kept but not applied (the process died between the two appends)', () => {
    it('a repeat of it applies it before answering duplicate: a refund sent next finds its purchase', async () => {
      const faults = new FaultSwitch();
      const svc = await startTestService({ env: { REVENUECAT_WEBHOOK_AUTH: REVENUECAT_AUTH, CONVERSIONS_FROM: 'verified' }, backend: faultyBackend(faults) });
      try {
        await putProgram(svc, 'half', { rewards: { sender: [], receiver: [] } });
        const referrer = await createUser(svc, 'half-referrer');
        await createUser(svc, 'half-buyer');
        const claim = await svc.call('POST', '/users/half-buyer/claim-code', { code: referrer.referral_code });
        expect(claim.status, JSON.stringify(claim.body)).to.equal(200);
        // The purchase is kept in its own stream; recording it on the user fails, as if the process died there.
        faults.mode = 'unavailable';
        faults.when = (method, args) =>
          method === 'append' && args[0] === 'user-half-buyer' && (args[1] as { type: string }[]).some((event) => event.type === 'PurchaseRecorded');
        const purchase = rcEvent('half-buy', 'INITIAL_PURCHASE', 'half-buyer');
        expect((await revenueCat(svc, purchase)).status).to.equal(503);
        faults.mode = 'ok';
        // The provider delivers it again: received before, so duplicate, but recorded by the time of the answer.
        expect((await revenueCat(svc, purchase)).body.data.status).to.equal('duplicate');
        expect((await revenueEvents(svc, 'half-buyer')).map((event) => event.type)).to.deep.equal(['PurchaseRecorded']);
        const refund = rcEvent('half-refund', 'CANCELLATION', 'half-buyer', { cancel_reason: 'CUSTOMER_SUPPORT', transaction_id: 'tx-half-buy' });
        expect((await revenueCat(svc, refund)).body.data.status).to.equal('applied');
        const recorded = await revenueEvents(svc, 'half-buyer');
        expect(recorded.map((event) => [event.type, event.data.refunded_before ?? event.data.reverses_conversion])).to.deep.equal([
          ['PurchaseRecorded', false],
          ['RefundRecorded', true],
        ]);
        expect(await events(svc, 'stream=user-half-buyer&type=UserConverted')).to.have.length(1);
      } finally {
        await svc.stop();
      }
    });
  });

  describe('an EXPIRATION that arrives before its INITIAL_PURCHASE (stores do not promise order; CONVERSIONS_FROM=verified)', () => {
    it('the late purchase converts the claimer, who churns at once: the referrer counts one conversion and one churn', async () => {
      const svc = await startTestService({ env: { REVENUECAT_WEBHOOK_AUTH: REVENUECAT_AUTH, CONVERSIONS_FROM: 'verified' } });
      try {
        await putReward(svc, 'coins', { kind: 'credit', name: 'Coins', credits: 100 });
        await putProgram(svc, 'friends', {
          rewards: { sender: [{ reward_key: 'coins', activation: { variant: 'conversion', amount: 1, limit: 0 }, deactivation: never }], receiver: [] },
        });
        const referrer = await createUser(svc, 'rc-late-referrer');
        await createUser(svc, 'rc-late');
        expect((await svc.call('POST', '/users/rc-late/claim-code', { code: referrer.referral_code })).status).to.equal(200);
        const bought = 1_790_000_000_000;
        const expiry = rcEvent('rc-late-exp', 'EXPIRATION', 'rc-late', { event_timestamp_ms: bought + 30 * 86_400_000, expiration_reason: 'UNSUBSCRIBE' });
        expect((await revenueCat(svc, expiry)).body.data.status).to.equal('applied');
        expect((await revenueCat(svc, rcEvent('rc-late-buy', 'INITIAL_PURCHASE', 'rc-late', { event_timestamp_ms: bought }))).body.data.status).to.equal(
          'applied',
        );
        const recorded = await events(svc, 'stream=user-rc-late&type=PurchaseRecorded');
        expect(recorded[0]!.data).to.include({ expired_before: true });
        expect(await events(svc, 'stream=user-rc-late&type=UserConverted')).to.have.length(1);
        expect(await events(svc, 'stream=user-rc-late&type=UserChurned')).to.have.length(1);
        await eventually(async () => expect((await getUser(svc, 'rc-late-referrer')).stats).to.include({ conversions: 1, churns: 1 }));
        // The referrer's conversion reward is granted as for a purchase that came in order.
        await eventually(async () =>
          expect((await getUser(svc, 'rc-late-referrer')).rewards.active.credit.map((entry: any) => entry.credits)).to.deep.equal([100]),
        );
      } finally {
        await svc.stop();
      }
    });
  });

  describe('a purchase refunded before its user claims a code (CONVERSIONS_FROM=verified)', () => {
    it('does not convert the claimer at the claim: no conversion, no reward for anyone', async () => {
      const svc = await startTestService({ env: { STRIPE_WEBHOOK_SECRET: STRIPE_SECRET, CONVERSIONS_FROM: 'verified' } });
      try {
        await putReward(svc, 'coins', { kind: 'credit', name: 'Coins', credits: 100 });
        await putProgram(svc, 'main', {
          rewards: { sender: [{ reward_key: 'coins', activation: { variant: 'conversion', amount: 1, limit: 0 }, deactivation: never }], receiver: [] },
        });
        const referrer = await createUser(svc, 'refund-referrer');
        await createUser(svc, 'refund-claimer', { payment_customer_id: 'cus_rbc' });
        expect((await stripeEvent(svc, invoicePaid('rbc1', 'cus_rbc'))).body.data.status).to.equal('applied');
        expect((await stripeEvent(svc, chargeRefunded('rbc-r', 'cus_rbc', 'in_rbc1'))).body.data.status).to.equal('applied');
        expect((await svc.call('POST', '/users/refund-claimer/claim-code', { code: referrer.referral_code })).status).to.equal(200);
        await settled(svc);
        expect((await events(svc, 'stream=user-refund-claimer&type=UserConverted')).length).to.equal(0);
        expect((await getUser(svc, 'refund-referrer')).stats.conversions).to.equal(0);
      } finally {
        await svc.stop();
      }
    });
  });

  describe('a clawback of a pooled reward still waiting for its code', () => {
    it("takes the grant out of the pool's line: a refill serves the next waiting grant, never the revoked one", async () => {
      const svc = await startTestService({ env: { REVENUECAT_WEBHOOK_AUTH: REVENUECAT_AUTH, CONVERSIONS_FROM: 'verified' } });
      try {
        await putReward(svc, 'offer', { kind: 'store_promo_code', name: 'Offer' });
        await putProgram(svc, 'main', {
          rewards: {
            sender: [{ reward_key: 'offer', activation: { variant: 'conversion', amount: 1, limit: 0 }, deactivation: never, clawback: 'on_refund' }],
            receiver: [],
          },
        });
        const referrer = await createUser(svc, 'pool-referrer');
        for (const claimer of ['pool-refunded', 'pool-kept']) {
          await createUser(svc, claimer);
          expect((await svc.call('POST', `/users/${claimer}/claim-code`, { code: referrer.referral_code })).status).to.equal(200);
          expect((await revenueCat(svc, rcEvent(`buy-${claimer}`, 'INITIAL_PURCHASE', claimer))).body.data.status).to.equal('applied');
        }
        const figures = async () => (await svc.admin('GET', '/admin/rewards/offer/codes')).body.data;
        await eventually(async () => expect(await figures()).to.include({ waiting: 2 }));

        const refund = rcEvent('refund-pool', 'CANCELLATION', 'pool-refunded', { cancel_reason: 'CUSTOMER_SUPPORT', transaction_id: 'tx-buy-pool-refunded' });
        expect((await revenueCat(svc, refund)).body.data.status).to.equal('applied');
        await eventually(async () => expect(await events(svc, 'stream=pool-offer&type=PoolRequestWithdrawn')).to.have.length(1));
        expect(await figures()).to.include({ waiting: 1 });

        await svc.admin('POST', '/admin/rewards/offer/codes', { codes: [{ value: 'ONLY-ONE', expires_at: '2099-01-01T00:00:00Z' }] });
        await settled(svc);
        // The referrer's grant for the kept conversion gets the code; the revoked one's waits no more.
        const [revoked] = await events(svc, 'stream=user-pool-referrer&type=RewardRevoked');
        const assigned = await events(svc, 'stream=pool-offer&type=PoolCodeAssigned');
        expect(assigned).to.have.length(1);
        expect(assigned[0]!.data.grant_id).to.not.equal(revoked!.data.grant_id);
        const active = (await getUser(svc, 'pool-referrer')).rewards.active.store_promo_code;
        expect(active.map((entry: any) => entry.value?.value ?? null)).to.deep.equal(['ONLY-ONE']);
        expect(await figures()).to.deep.equal({ available: 0, used: 1, expired: 0, waiting: 0 });
      } finally {
        await svc.stop();
      }
    });
  });

  describe('a Stripe dispute of a purchase made before the claim', () => {
    it('counts for no code, as its purchase did not: the disputed invoice is the purchase it takes back', async () => {
      const svc = await startTestService({ env: { STRIPE_WEBHOOK_SECRET: STRIPE_SECRET } });
      try {
        await putReward(svc, 'coins', { kind: 'credit', name: 'Coins', credits: 1 });
        await putProgram(svc, 'friends', {
          rewards: { sender: [], receiver: [{ reward_key: 'coins', activation: { variant: 'claim' }, deactivation: never }] },
        });
        const referrer = await createUser(svc, 'dispute-referrer');
        await createUser(svc, 'dispute-buyer', { payment_customer_id: 'cus_dispute' });
        expect((await stripeEvent(svc, invoicePaid('pre', 'cus_dispute', 1500))).body.data.status).to.equal('applied');
        expect((await svc.call('POST', '/users/dispute-buyer/claim-code', { code: referrer.referral_code })).status).to.equal(200);
        const dispute = (id: string, invoice: string) => ({
          id: `evt_dispute_${id}`,
          type: 'charge.dispute.created',
          object: {
            id: `dp_${id}`,
            object: 'dispute',
            charge: { id: `ch_${id}`, object: 'charge', customer: 'cus_dispute', invoice },
            amount: 1500,
            currency: 'eur',
          },
        });
        expect((await stripeEvent(svc, dispute('pre', 'in_pre'))).body.data.status).to.equal('applied');
        // Paid after the claim, disputed too: that pair counts for the code.
        expect((await stripeEvent(svc, invoicePaid('post', 'cus_dispute', 1500))).body.data.status).to.equal('applied');
        expect((await stripeEvent(svc, dispute('post', 'in_post'))).body.data.status).to.equal('applied');
        const recorded = await revenueEvents(svc, 'dispute-buyer');
        expect(recorded.map((event) => [event.type, event.data.transaction_id, event.data.attribution?.code ?? null])).to.deep.equal([
          ['PurchaseRecorded', 'in_pre', null],
          ['RefundRecorded', 'dp_pre', null],
          ['PurchaseRecorded', 'in_post', referrer.referral_code],
          ['RefundRecorded', 'dp_post', referrer.referral_code],
        ]);
        expect(recorded[1]!.data.refunded_transaction_id).to.equal('in_pre');
      } finally {
        await svc.stop();
      }
    });
  });

  describe('a flood of refused notifications (the routes take no key)', () => {
    it(`every one is 401, but at most ${REJECTIONS_KEPT_PER_MINUTE} a minute per provider are kept: the log does not grow with the flood`, async () => {
      const svc = await startTestService({ env: { REVENUECAT_WEBHOOK_AUTH: REVENUECAT_AUTH, STRIPE_WEBHOOK_SECRET: STRIPE_SECRET } });
      try {
        const rejected = async () => (await events(svc, 'type=NotificationRejected')).map((event) => event.data.provider as string);
        const answers = await Promise.all(
          Array.from({ length: 40 }, (_, index) =>
            index % 2 === 0 ? revenueCat(svc, rcEvent(`flood-${index}`, 'RENEWAL', 'x'), 'Bearer wrong') : post(svc, '/webhooks/revenuecat', '{}', {}),
          ),
        );
        expect(answers.map((answer) => answer.status)).to.deep.equal(Array(40).fill(401));
        expect(answers.every((answer) => answer.body.errors[0].code === 'WEBHOOK.UNAUTHORIZED')).to.equal(true);
        // Stripe has its own budget.
        expect((await post(svc, '/webhooks/stripe', '{}', { 'stripe-signature': 't=1,v1=bad' })).status).to.equal(401);
        expect(await rejected()).to.deep.equal([...Array(REJECTIONS_KEPT_PER_MINUTE).fill('revenuecat'), 'stripe']);
        // The next minute keeps them again.
        svc.clock.advance(60_000);
        expect((await post(svc, '/webhooks/revenuecat', '{}', {})).status).to.equal(401);
        expect(await rejected()).to.have.length(REJECTIONS_KEPT_PER_MINUTE + 2);
      } finally {
        await svc.stop();
      }
    });
  });
});
