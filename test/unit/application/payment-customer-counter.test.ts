import 'reflect-metadata';
import { expect } from 'chai';
import { decideCountPaymentCustomerClaim, decideReleasePaymentCustomerClaim } from '../../../src/domain/fraud/payment-customer-counter.js';
import type { FraudRule } from '../../../src/domain/events/fraud-events.js';
import type { DomainEvent } from '../../../src/domain/events/index.js';
import type { Decision } from '../../../src/domain/decider.js';

const atMostOne: FraudRule[] = [
  {
    id: 'card',
    kind: 'payment_customer_claimers',
    params: { max: 1 },
    action: 'reject',
    enabled: true,
    created_at: '2026-11-26T00:00:00.000Z',
    updated_at: null,
  },
];

/** Runs decisions one after the other on the latest event, as the counter's stream does. */
function run(steps: ((latest: DomainEvent | undefined) => Decision<unknown>)[]): DomainEvent | undefined {
  let latest: DomainEvent | undefined;
  for (const step of steps) latest = step(latest).events.at(-1) ?? latest;
  return latest;
}
const count =
  (claimer: string, claim: string, rules: FraudRule[] = []) =>
  (latest: DomainEvent | undefined) =>
    decideCountPaymentCustomerClaim(latest, rules, claimer, claim);
const release = (claimer: string, claim: string) => (latest: DomainEvent | undefined) => decideReleasePaymentCustomerClaim(latest, claimer, claim);
const claimersAfter = (latest: DomainEvent | undefined) => (latest as { data: { claimers: number } }).data.claimers;

describe('payment customer counter (payment_customer_claimers)', () => {
  it('counts claimers, not claims: a retry after a claim that died is the same claimer, judged as then', () => {
    // ann's first claim died between the count and the claim (never released); her retry is not a second claimer.
    const latest = run([count('ann', 'c1', atMostOne), count('ann', 'c2', atMostOne)]);
    expect(claimersAfter(latest)).to.equal(1);
    expect(() => count('bob', 'c3', atMostOne)(latest)).to.throw(/payment/i);
  });

  it('a claimer stops counting once none of its claims is left; a claim released already changes nothing', () => {
    const latest = run([count('ann', 'c1'), count('ann', 'c2'), count('bob', 'c3'), release('ann', 'c1')]);
    expect(claimersAfter(latest)).to.equal(2);
    expect(release('ann', 'c1')(latest).events).to.deep.equal([]);
    expect(claimersAfter(run([() => ({ events: [latest!], result: null }), release('ann', 'c2')]))).to.equal(1);
  });

  it('a counter written before claimers were remembered is uncounted as before', () => {
    const legacy: DomainEvent = { type: 'PaymentCustomerClaimCounted', data: { claimers: 3 } };
    const released = decideReleasePaymentCustomerClaim(legacy, 'ann', 'c1').events[0]!;
    expect(released.data).to.deep.equal({ claimers: 2, recent: [] });
    expect(decideCountPaymentCustomerClaim(legacy, [], 'ann', 'c1').events[0]!.data).to.deep.equal({
      claimers: 4,
      recent: [{ claimer: 'ann', claims: ['c1'] }],
    });
  });

  it('remembers at most 32 claimers: its events do not grow with history', () => {
    const latest = run(Array.from({ length: 500 }, (_, index) => count(`claimer-${index}`, `c${index}`)));
    expect(claimersAfter(latest)).to.equal(500);
    expect((latest as { data: { recent: unknown[] } }).data.recent).to.have.length(32);
  });
});
