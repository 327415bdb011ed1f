import { expect } from 'chai';
import { WEBHOOKS, webhooksProjection } from '../../../projections/webhooks.js';
import {
  decideDefineWebhook,
  decideDeleteWebhook,
  decideDisableWebhook,
  decideRotateSecret,
  signingSecrets,
  webhookEndpointEvolver,
} from '../../../src/domain/webhooks/webhook-endpoint.js';
import { deciderSpec } from '../../support/decider-spec.js';
import { event, logged, projected, T0 } from '../../support/events.js';

const input = { id: 'hook', url: 'https://example.com/h', events: null, description: null, enabled: true };
const all = { events: true, description: true, enabled: true };
const endpoint = { ...input, created_at: T0.toISOString(), updated_at: null };
const created = event('WebhookEndpointCreated', { webhook: endpoint, secret: 'whsec_old' });
const later = new Date(T0.getTime() + 60_000);

describe('webhook endpoint decider', () => {
  it('creates with the new secret, updates only what changed, and does nothing for the same values', () => {
    deciderSpec(webhookEndpointEvolver)
      .given()
      .when((state) => decideDefineWebhook(state, input, all, 'whsec_new', T0))
      .then([{ type: 'WebhookEndpointCreated', data: { webhook: endpoint, secret: 'whsec_new' } }]);
    const { result } = deciderSpec(webhookEndpointEvolver)
      .given([created])
      .when((state) =>
        decideDefineWebhook(
          state,
          { ...input, description: 'ignored', enabled: false },
          { events: false, description: false, enabled: true },
          'whsec_unused',
          later,
        ),
      )
      .then([{ type: 'WebhookEndpointUpdated', data: { webhook: { ...endpoint, enabled: false, updated_at: later.toISOString() } } }]);
    expect(result.secret).to.equal(null);
    deciderSpec(webhookEndpointEvolver)
      .given([created])
      .when((state) => decideDefineWebhook(state, input, all, 'whsec_x', later))
      .thenNothing();
  });

  it('rotates: the new secret signs, the old one until the overlap ends', () => {
    const { state } = deciderSpec(webhookEndpointEvolver)
      .given([created])
      .when((current) => decideRotateSecret(current, 'hook', 'whsec_new', 3600, T0))
      .then([
        {
          type: 'WebhookSecretRotated',
          data: { id: 'hook', secret: 'whsec_new', rotated_at: T0.toISOString(), previous_expires_at: new Date(T0.getTime() + 3_600_000).toISOString() },
        },
      ]);
    expect(signingSecrets(state.secrets, T0)).to.deep.equal(['whsec_new', 'whsec_old']);
    expect(signingSecrets(state.secrets, new Date(T0.getTime() + 3_600_000))).to.deep.equal(['whsec_new']);
  });

  it('rotating again retires every secret but the one it replaces, whatever is left of its overlap', () => {
    const first = event('WebhookSecretRotated', {
      id: 'hook',
      secret: 'whsec_second',
      rotated_at: T0.toISOString(),
      previous_expires_at: new Date(T0.getTime() + 3_600_000).toISOString(),
    });
    const { state } = deciderSpec(webhookEndpointEvolver)
      .given([created, first])
      .when((current) => decideRotateSecret(current, 'hook', 'whsec_third', 600, later))
      .then([
        {
          type: 'WebhookSecretRotated',
          data: { id: 'hook', secret: 'whsec_third', rotated_at: later.toISOString(), previous_expires_at: new Date(later.getTime() + 600_000).toISOString() },
        },
      ]);
    expect(state.secrets).to.have.length(2);
    expect(signingSecrets(state.secrets, later)).to.deep.equal(['whsec_third', 'whsec_second']);
    expect(signingSecrets(state.secrets, new Date(later.getTime() + 600_000))).to.deep.equal(['whsec_third']);
  });

  it('an overlap of 0 leaves the new secret signing alone at once', () => {
    const { state } = deciderSpec(webhookEndpointEvolver)
      .given([created])
      .when((current) => decideRotateSecret(current, 'hook', 'whsec_new', 0, T0))
      .then([{ type: 'WebhookSecretRotated', data: { id: 'hook', secret: 'whsec_new', rotated_at: T0.toISOString(), previous_expires_at: T0.toISOString() } }]);
    expect(signingSecrets(state.secrets, T0)).to.deep.equal(['whsec_new']);
  });

  it('keeps two secrets at most, however many rotations', () => {
    const rotations = Array.from({ length: 15 }, (_, index) =>
      event('WebhookSecretRotated', { id: 'hook', secret: `whsec_${index}`, rotated_at: T0.toISOString(), previous_expires_at: later.toISOString() }),
    );
    const { state } = deciderSpec(webhookEndpointEvolver)
      .given([created, ...rotations])
      .when(() => ({ events: [], result: null }))
      .thenNothing();
    expect(signingSecrets(state.secrets, T0)).to.deep.equal(['whsec_14', 'whsec_13']);
  });

  it('deletes and disables; unknown endpoints are NOT_FOUND.WEBHOOK; disabling twice is a no-op', () => {
    deciderSpec(webhookEndpointEvolver)
      .given()
      .when((state) => decideDeleteWebhook(state, 'hook', T0))
      .thenError('NOT_FOUND.WEBHOOK', 'path:/id');
    deciderSpec(webhookEndpointEvolver)
      .given()
      .when((state) => decideRotateSecret(state, 'hook', 's', 0, T0))
      .thenError('NOT_FOUND.WEBHOOK');
    deciderSpec(webhookEndpointEvolver)
      .given([created])
      .when((state) => decideDeleteWebhook(state, 'hook', T0))
      .then([{ type: 'WebhookEndpointDeleted', data: { id: 'hook', deleted_at: T0.toISOString() } }]);
    const disabled = event('WebhookEndpointDisabled', { id: 'hook', disabled_at: T0.toISOString(), reason: '410' });
    const attempted = { url: endpoint.url, created_at: endpoint.created_at };
    deciderSpec(webhookEndpointEvolver)
      .given([created])
      .when((state) => decideDisableWebhook(state, 'hook', '410', T0, attempted))
      .then([disabled]);
    deciderSpec(webhookEndpointEvolver)
      .given([created, disabled])
      .when((state) => decideDisableWebhook(state, 'hook', '410', T0, attempted))
      .thenNothing();
  });

  it('does not disable an endpoint that is no longer the one the attempt went to: created again, or moved', () => {
    const attempted = { url: endpoint.url, created_at: endpoint.created_at };
    const deleted = event('WebhookEndpointDeleted', { id: 'hook', deleted_at: later.toISOString() });
    const recreated = event('WebhookEndpointCreated', {
      webhook: { ...endpoint, url: 'https://example.com/new', created_at: later.toISOString() },
      secret: 'whsec_2',
    });
    const sameUrlAgain = event('WebhookEndpointCreated', { webhook: { ...endpoint, created_at: later.toISOString() }, secret: 'whsec_3' });
    const moved = event('WebhookEndpointUpdated', { webhook: { ...endpoint, url: 'https://example.com/moved', updated_at: later.toISOString() } });
    for (const history of [
      [created, deleted, recreated],
      [created, deleted, sameUrlAgain],
      [created, moved],
    ]) {
      deciderSpec(webhookEndpointEvolver)
        .given(history)
        .when((state) => decideDisableWebhook(state, 'hook', '410', T0, attempted))
        .thenNothing();
    }
  });

  it('projects the endpoint with its secrets (for signing) and where it was created, and removes it on delete', () => {
    const rotated = event('WebhookSecretRotated', { id: 'hook', secret: 'whsec_new', rotated_at: T0.toISOString(), previous_expires_at: later.toISOString() });
    const docs = projected(webhooksProjection, [logged('webhook-hook', created, { position: 1n }), logged('webhook-hook', rotated, { position: 2n })]);
    expect(docs[`${WEBHOOKS}/hook`]).to.deep.equal({
      ...endpoint,
      // A new secret changes the endpoint.
      updated_at: T0.toISOString(),
      secrets: [
        { secret: 'whsec_new', expires_at: null },
        { secret: 'whsec_old', expires_at: later.toISOString() },
      ],
      // The creation's log position, kept through later changes.
      created_position: '1',
    });
    const deleted = event('WebhookEndpointDeleted', { id: 'hook', deleted_at: T0.toISOString() });
    expect(projected(webhooksProjection, [logged('webhook-hook', created, { position: 1n }), logged('webhook-hook', deleted, { position: 2n })])).to.deep.equal(
      {},
    );
  });
});
