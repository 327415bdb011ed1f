import 'reflect-metadata';
import { MemoryKeyStore } from '../../../src/adapters/memory/memory-key-store.js';
import { expect } from 'chai';
import { RandomIds } from '../../../src/adapters/system/random-ids.js';
import { ClaimFraudChecks } from '../../../src/application/fraud/claim-fraud-checks.js';
import { FraudRuleQueries } from '../../../src/application/fraud/fraud-rule-queries.js';
import { PaymentCustomerClaimers } from '../../../src/application/fraud/payment-customer-claimers.js';
import type { FraudRule } from '../../../src/domain/events/fraud-events.js';
import type { ClaimTarget } from '../../../src/domain/users/claim-code.js';
import { type UserState, userEvolver } from '../../../src/domain/users/user-state.js';
import type { EventStore } from '../../../src/ports/event-store.js';
import { type ApplicationSpec, applicationSpec } from '../../support/application-spec.js';
import { registered, T0 } from '../../support/events.js';

const selfReferral: FraudRule = {
  id: 'self',
  kind: 'same_payment_customer',
  params: {},
  action: 'reject',
  enabled: true,
  created_at: T0.toISOString(),
  updated_at: null,
};

const target: ClaimTarget = {
  code: 'REF123',
  type: 'referral',
  owner_id: 'ref',
  program_id: null,
  owner_app_user_id: 'ref',
  is_active: true,
  claimRewards: [],
  conversionRewards: [],
};

/** The claim's side of the rule `same_payment_customer`: what it reads to judge the two parties. */
describe('ClaimFraudChecks.judgeParties: same_payment_customer', () => {
  let app: ApplicationSpec;
  let checks: ClaimFraudChecks;
  const streamsRead: string[] = [];

  beforeEach(async () => {
    streamsRead.length = 0;
    const counting = (store: EventStore): EventStore =>
      new Proxy(store, {
        get(target, property, receiver) {
          if (property === 'readStream') {
            return (stream: string, ...rest: unknown[]) => {
              streamsRead.push(stream);
              return target.readStream(stream, ...(rest as []));
            };
          }
          const value = Reflect.get(target, property, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    app = await applicationSpec({ store: counting });
    checks = new ClaimFraudChecks(
      new FraudRuleQueries(app.readStore),
      new PaymentCustomerClaimers(app.executor, app.readStore, new MemoryKeyStore()),
      app.executor,
      new RandomIds(),
    );
    await app.given({
      'user-ref': [registered('ref', { payment_customer_id: 'cus_shared' })],
      'user-ann': [registered('ann', { payment_customer_id: 'cus_shared' })],
      'user-bob': [registered('bob', { payment_customer_id: null })],
    });
  });
  afterEach(() => app.stop());

  const claimer = async (id: string): Promise<UserState> => (await app.executor.load(`user-${id}`, userEvolver)).state;

  it("a claimer with the referrer's payment customer is rejected, naming the rule", async () => {
    const ann = await claimer('ann');
    streamsRead.length = 0;
    const verdict = await checks.judgeParties([selfReferral], ann, target, T0);
    expect(verdict.reject?.rule_id).to.equal('self');
    expect(streamsRead).to.deep.equal(['user-ref']);
  });

  it('a claimer without a payment customer passes without the referrer being read', async () => {
    const bob = await claimer('bob');
    streamsRead.length = 0;
    const verdict = await checks.judgeParties([selfReferral], bob, target, T0);
    expect(verdict).to.deep.equal({ reject: null, hold: null });
    expect(streamsRead).to.deep.equal([]);
  });
});
