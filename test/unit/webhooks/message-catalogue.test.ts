import { expect } from 'chai';
import { FED_EVENTS, outboxMessagesFor } from '../../../src/application/webhooks/webhook-feeder.js';
import { RandomIds } from '../../../src/adapters/system/random-ids.js';
import { MESSAGE_SOURCE_EVENTS, MESSAGE_TYPES, toFulfilment, toWebhookMessage } from '../../../src/domain/webhooks/message-catalogue.js';
import { event, logged, registered, rewardGranted, T0 } from '../../support/events.js';

describe('webhook message catalogue (v1)', () => {
  it('turns a user event into {type, timestamp, data} with app_user_id, the event fields, event_id and position', () => {
    const message = toWebhookMessage(
      logged('user-ann', rewardGranted({ grant_id: 'g1', reward_key: 'pro', kind: 'partner_entitlement' }), { id: 'e-7', position: 7n }),
    );
    expect(message!.type).to.equal('reward.granted');
    expect(message!.timestamp).to.equal(T0.toISOString());
    expect(message!.data).to.include({ app_user_id: 'ann', grant_id: 'g1', reward_key: 'pro', kind: 'partner_entitlement', event_id: 'e-7', position: '7' });
    expect(toWebhookMessage(logged('user-ann', registered('ann')))!.type).to.equal('user.created');
  });

  it('says which variant a referral count is and leaves internal bookkeeping out', () => {
    const counted = toWebhookMessage(
      logged('user-bob', event('ReferralClaimCounted', { claimer: 'ann', code: 'BOB234', claims: 3, cause_position: '5' }), { position: 9n }),
    );
    expect(counted!.type).to.equal('referral.counted');
    expect(counted!.data).to.include({ app_user_id: 'bob', variant: 'claim', claimer: 'ann', claims: 3 });
    expect(counted!.data).to.not.have.property('cause_position');
  });

  it("tells receivers of a user's erasure, which fields to erase, without the ids of the events erased", () => {
    const erased = toWebhookMessage(
      logged('user-ann', event('UserErased', { erased_at: T0.toISOString(), fields: ['metadata', 'payment_customer_id'], erased_events: ['e1', 'e2'] }), {
        position: 12n,
      }),
    );
    expect(erased!.type).to.equal('user.erased');
    expect(erased!.data).to.deep.include({ app_user_id: 'ann', erased_at: T0.toISOString(), fields: ['metadata', 'payment_customer_id'], position: '12' });
    expect(erased!.data).to.not.have.property('erased_events');
  });

  it('ignores events outside the catalogue and streams other than users', () => {
    expect(toWebhookMessage(logged('user-ann', event('UserProfileUpdated', { changes: { is_trial: true } })))).to.equal(null);
    expect(toWebhookMessage(logged('code-X', event('CodeReserved', { code: 'X', type: 'promo', owner_id: 'X' })))).to.equal(null);
    expect(MESSAGE_TYPES).to.include.members([
      'user.created',
      'code.claimed',
      'referral.counted',
      'reward.granted',
      'reward.expired',
      'credits.withdrawn',
      'conversion.recorded',
    ]);
  });

  it('asks for a RevenueCat grant on a partner_entitlement grant and a revoke on its expiry', () => {
    const grant = toFulfilment(
      logged('user-ann', rewardGranted({ grant_id: 'g1', reward_key: 'pro', kind: 'partner_entitlement', expires_at: '2026-04-09T12:00:00.000Z' })),
    );
    expect(grant).to.deep.equal({ action: 'grant', app_user_id: 'ann', reward_key: 'pro', grant_id: 'g1', expires_at: '2026-04-09T12:00:00.000Z' });
    const expired = event('RewardExpired', {
      grant_id: 'g1',
      reward_key: 'pro',
      kind: 'partner_entitlement',
      expired_at: T0.toISOString(),
      credits_forfeited: null,
      balance_after: null,
    });
    expect(toFulfilment(logged('user-ann', expired))!.action).to.equal('revoke');
    const revoked = event('RewardRevoked', {
      grant_id: 'g1',
      entry_id: 'g1',
      reward_key: 'pro',
      kind: 'partner_entitlement',
      revoked_at: T0.toISOString(),
      credits_granted: null,
      debits: [],
      shortfall: null,
      balance_after: null,
      claimer: 'bob',
      refund: { provider: 'stripe', notification_id: 'n1', transaction_id: 't1', original_transaction_id: null },
    });
    expect(toFulfilment(logged('user-ann', revoked))!.action).to.equal('revoke');
    expect(toWebhookMessage(logged('user-ann', revoked))!.type).to.equal('reward.revoked');
    expect(toFulfilment(logged('user-ann', rewardGranted({ grant_id: 'g2', reward_key: 'gift', kind: 'basic' })))).to.equal(null);
    // The feeder reads only the events messages and fulfilments come from: these are among them.
    expect(FED_EVENTS).to.include.members(['RewardGranted', 'RewardExpired', 'RewardRevoked']);
  });

  it('the feeder reads every event type the catalogue turns into a message', () => {
    expect(FED_EVENTS).to.include.members([...MESSAGE_SOURCE_EVENTS, 'WebhookEndpointCreated', 'WebhookEndpointDeleted']);
    expect(MESSAGE_SOURCE_EVENTS).to.include.members(['UserRegistered', 'CodeClaimed', 'RewardGranted', 'CreditsWithdrawn']);
  });

  it('gives each endpoint a webhook-id derived from endpoint id + event id, the same every time', () => {
    const ids = new RandomIds();
    const one = logged('user-ann', registered('ann'), { id: 'event-1' });
    const endpoints: [string, { enabled: boolean; events: string[] | null }][] = [
      ['a', { enabled: true, events: null }],
      ['b', { enabled: true, events: null }],
      ['off', { enabled: false, events: null }],
      ['grants', { enabled: true, events: ['reward.granted'] }],
    ];
    const first = outboxMessagesFor(one, endpoints, ids, false, T0.toISOString());
    const again = outboxMessagesFor(one, endpoints, ids, false, T0.toISOString());
    expect(first.map((row) => row.endpoint_id)).to.deep.equal(['a', 'b']);
    expect(first.map((row) => row.message_id)).to.deep.equal(again.map((row) => row.message_id));
    expect(first[0]!.message_id).to.not.equal(first[1]!.message_id);
    expect(first[0]!.message_id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-/);
  });
});
