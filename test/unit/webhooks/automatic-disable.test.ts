import 'reflect-metadata';
import { expect } from 'chai';
import { type Subscriptions, subscribe } from '../../../src/application/webhooks/webhook-feeder.js';
import type { DomainEvent } from '../../../src/domain/events/index.js';
import { logged } from '../../support/events.js';

const endpoint = (enabled: boolean) => ({
  id: 'e',
  url: 'https://example.com/hook',
  events: null,
  description: null,
  enabled,
  created_at: '2026-11-25T00:00:00.000Z',
  updated_at: null,
});
const created = { type: 'WebhookEndpointCreated', data: { webhook: endpoint(true), secret: 'whsec_x' } } as DomainEvent;
const updated = (enabled: boolean) => ({ type: 'WebhookEndpointUpdated', data: { webhook: endpoint(enabled) } }) as DomainEvent;
const disabled = { type: 'WebhookEndpointDisabled', data: { id: 'e', disabled_at: '2026-11-25T01:00:00.000Z', reason: '410 Gone' } } as DomainEvent;
const history = (...events: DomainEvent[]) => events.map((event, index) => logged('webhook-e', event, { position: BigInt(10 * (index + 1)) }));

/** Where the last event, switching the endpoint on, resumes it from (WebhookFeeder#resume queues what it missed). */
function automaticallyDisabledAt(events: ReturnType<typeof history>): bigint | null {
  const subscriptions: Subscriptions = new Map();
  let resumed: ReturnType<typeof subscribe> = null;
  for (const event of events) resumed = subscribe(subscriptions, event);
  return resumed?.disabledAt ?? null;
}

describe('webhooks: resuming after an automatic disable', () => {
  it('is the disabling when the delivery engine switched the endpoint off and the last event switches it on', () => {
    expect(automaticallyDisabledAt(history(created, disabled, updated(true)))).to.equal(20n);
    // An update that left it off in between (a PUT without `enabled`) changes nothing.
    expect(automaticallyDisabledAt(history(created, disabled, updated(false), updated(true)))).to.equal(20n);
  });

  it('is null after an operator pause, when the endpoint was not switched on, or was never off', () => {
    expect(automaticallyDisabledAt(history(created, updated(false), updated(true)))).to.equal(null);
    expect(automaticallyDisabledAt(history(created, disabled, updated(false)))).to.equal(null);
    expect(automaticallyDisabledAt(history(created, updated(true)))).to.equal(null);
    expect(automaticallyDisabledAt(history(created, disabled, updated(true), disabled, updated(true)))).to.equal(40n);
  });
});
