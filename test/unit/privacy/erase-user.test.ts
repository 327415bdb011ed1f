import { expect } from 'chai';
import { DomainError } from '../../../src/domain/domain-error.js';
import type { DomainEvent } from '../../../src/domain/events/index.js';
import { decideEraseUser } from '../../../src/domain/privacy/erase-user.js';
import { foldUserEvents, initialUserState } from '../../../src/domain/users/user-state.js';

const NOW = new Date('2026-11-23T12:00:00.000Z');
const registered: DomainEvent = {
  type: 'UserRegistered',
  data: {
    app_user_id: 'ann',
    registered_at: '2026-11-20T00:00:00.000Z',
    is_trial: null,
    is_premium: true,
    first_seen_at: null,
    metadata: { email: 'ann@example.org' },
    payment_customer_id: 'cus_ann',
  },
};

describe('decideEraseUser and the user state (SPEC §13)', () => {
  it('refuses an unknown user with NOT_FOUND.USER', () => {
    expect(() => decideEraseUser(initialUserState(), NOW, []))
      .to.throw(DomainError)
      .with.property('code', 'NOT_FOUND.USER');
  });

  it('records UserErased with the erased events; the state then has the fields null and nothing more to erase', () => {
    const state = foldUserEvents(initialUserState(), [registered]);
    const decision = decideEraseUser(state, NOW, ['e-1']);
    expect(decision).to.deep.equal({
      events: [{ type: 'UserErased', data: { erased_at: NOW.toISOString(), fields: ['metadata', 'payment_customer_id'], erased_events: ['e-1'] } }],
      result: { erased: true },
    });
    const erased = foldUserEvents(state, decision.events);
    expect(erased).to.include({ metadata: null, payment_customer_id: null, erased: true, is_premium: true });
    expect(decideEraseUser(erased, NOW, [])).to.deep.equal({ events: [], result: { erased: false } });
  });

  it('has something to erase again once a personal value arrives after the erasure (not for other changes)', () => {
    const erased = foldUserEvents(initialUserState(), [
      registered,
      { type: 'UserErased', data: { erased_at: NOW.toISOString(), fields: ['metadata', 'payment_customer_id'], erased_events: [] } },
    ]);
    const premium = foldUserEvents(erased, [{ type: 'UserProfileUpdated', data: { changes: { is_premium: false } } }]);
    expect(decideEraseUser(premium, NOW, []).events).to.deep.equal([]);
    const again = foldUserEvents(premium, [{ type: 'UserProfileUpdated', data: { changes: { metadata: { email: 'new@example.org' } } } }]);
    expect(decideEraseUser(again, NOW, []).result).to.deep.equal({ erased: true });
    // A payment customer id alone is personal too (SPEC §13): a second erasure erases it.
    const customer = foldUserEvents(premium, [{ type: 'UserProfileUpdated', data: { changes: { payment_customer_id: 'cus_new' } } }]);
    expect(decideEraseUser(customer, NOW, []).result).to.deep.equal({ erased: true });
    // Values set to null carry nothing personal.
    const cleared = foldUserEvents(premium, [{ type: 'UserProfileUpdated', data: { changes: { metadata: null, payment_customer_id: null } } }]);
    expect(decideEraseUser(cleared, NOW, []).events).to.deep.equal([]);
  });
});
