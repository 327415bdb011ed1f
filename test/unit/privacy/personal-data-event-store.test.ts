import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { revenueNotification } from '../../support/events.js';
import { newEvent, newRegistered } from '../../support/new-events.js';
import { MemoryEventStore } from '../../../src/adapters/memory/memory-event-store.js';
import { MemoryKeyStore } from '../../../src/adapters/memory/memory-key-store.js';
import { customerSubject, PersonalDataCipher, userSubject } from '../../../src/application/privacy/personal-data-cipher.js';
import { PersonalDataEventStore } from '../../../src/application/privacy/personal-data-event-store.js';
import { exportedEvent } from '../../../src/application/export/event-export-format.js';

const event = newEvent;
const registered = newRegistered;

let notifications = 0;
const notification = (customer: string | null) =>
  event('NotificationReceived', {
    received_at: '2026-11-23T10:00:00.000Z',
    app_user_id: null,
    notification: revenueNotification({
      notification_id: `evt_${++notifications}`,
      occurred_at: '2026-11-23T10:00:00.000Z',
      match: { app_user_ids: [], account_token: null, customer_id: customer, linked_transaction: null },
    }),
  });

describe('PersonalDataEventStore (SPEC §13: personal fields encrypted at the event-store boundary)', () => {
  let raw: MemoryEventStore;
  let keys: MemoryKeyStore;
  let store: PersonalDataEventStore;

  beforeEach(() => {
    raw = new MemoryEventStore();
    keys = new MemoryKeyStore();
    store = new PersonalDataEventStore(raw, new PersonalDataCipher(keys));
  });

  it('stores metadata and payment_customer_id encrypted under the user key and reads them back in the clear', async () => {
    await store.append('user-ann', [registered('ann', { metadata: { email: 'ann@example.org' }, payment_customer_id: 'cus_ann' })], 'no_stream');
    await store.append('user-ann', [event('UserProfileUpdated', { changes: { metadata: { email: 'new@example.org' }, is_premium: true } })], 0);
    const stored = await raw.readStream('user-ann');
    expect(JSON.stringify(stored.map((recorded) => recorded.data))).to.not.match(/example\.org|cus_ann/);
    expect(stored[0]!.data.metadata).to.have.keys('$encrypted');
    expect(stored[1]!.data.changes).to.include({ is_premium: true });
    const read = await store.readStream('user-ann');
    expect(read[0]!.data).to.include({ payment_customer_id: 'cus_ann' });
    expect(read[0]!.data.metadata).to.deep.equal({ email: 'ann@example.org' });
    expect((read[1]!.data.changes as Record<string, unknown>).metadata).to.deep.equal({ email: 'new@example.org' });
    expect(read[0]!.erased).to.equal(undefined);
    expect((await store.readAll({ after: null, limit: 10 })).map((recorded) => recorded.data)).to.deep.equal(read.map((recorded) => recorded.data));
  });

  it('creates no key for a user without personal values, and leaves null fields as they are', async () => {
    await store.append('user-bob', [registered('bob', {})], 'no_stream');
    expect(await keys.existingKey(userSubject('bob'))).to.equal(null);
    expect((await raw.readStream('user-bob'))[0]!.data.metadata).to.equal(null);
  });

  it('reads events written before encryption (plain values) as they are', async () => {
    await raw.append('user-old', [registered('old', { metadata: { legacy: true }, payment_customer_id: 'cus_old' })], 'no_stream');
    const [read] = await store.readStream('user-old');
    expect(read!.data).to.deep.include({ metadata: { legacy: true }, payment_customer_id: 'cus_old' });
  });

  it('reads values whose key was destroyed as null, names them in `erased`, and the log view shows {"erased": true}', async () => {
    await store.append('user-ann', [registered('ann', { metadata: { a: 1 }, payment_customer_id: 'cus_ann' })], 'no_stream');
    await store.append('user-cat', [registered('cat', { metadata: { c: 3 } })], 'no_stream');
    expect(await keys.destroy(userSubject('ann'))).to.equal(1);
    const [ann] = await store.readStream('user-ann');
    expect(ann!.data).to.include({ metadata: null, payment_customer_id: null });
    expect(ann!.erased).to.deep.equal(['metadata', 'payment_customer_id']);
    expect(exportedEvent(ann!).data).to.deep.include({ metadata: { erased: true }, payment_customer_id: { erased: true } });
    const [cat] = await store.readStream('user-cat');
    expect(cat!.data.metadata).to.deep.equal({ c: 3 });
    const json = await store.readAllJson!({ after: null, limit: 10 });
    expect(JSON.parse(json[0]!.dataJson)).to.deep.include({ metadata: { erased: true }, payment_customer_id: { erased: true } });
    expect(JSON.parse(json[1]!.dataJson).metadata).to.deep.equal({ c: 3 });
  });

  it("keeps a notification's payment customer under that customer's key, whatever stream it is in", async () => {
    await store.append('inbound-stripe-1', [notification('cus_zed')], 'no_stream');
    expect(JSON.stringify((await raw.readStream('inbound-stripe-1'))[0]!.data)).to.not.contain('cus_zed');
    const [read] = await store.readStream('inbound-stripe-1');
    expect((read!.data.notification as { match: { customer_id: string } }).match.customer_id).to.equal('cus_zed');
    await keys.destroy(customerSubject('cus_zed'));
    const [erased] = await store.readStream('inbound-stripe-1');
    expect((erased!.data.notification as { match: { customer_id: null } }).match.customer_id).to.equal(null);
    expect(erased!.erased).to.deep.equal(['notification.match.customer_id']);
  });

  it("names a payment customer's key by a SHA-256 digest of the id, so the key store holds no plain id (docs/privacy.md)", () => {
    const digest = createHash('sha256').update('cus_zed', 'utf8').digest('hex');
    expect(customerSubject('cus_zed')).to.equal(`customer:${digest}`);
    expect(customerSubject('cus_zed')).to.not.contain('cus_zed');
  });

  it('refuses a value that was tampered with instead of reading it wrong', async () => {
    await store.append('user-ann', [registered('ann', { payment_customer_id: 'cus_ann' })], 'no_stream');
    const stored = (await raw.readStream('user-ann'))[0]!;
    const envelope = (stored.data.payment_customer_id as { $encrypted: string }).$encrypted.split('.');
    envelope[3] = Buffer.from('forged').toString('base64url');
    const forged = new MemoryEventStore();
    await forged.append('user-ann', [{ ...stored, data: { ...stored.data, payment_customer_id: { $encrypted: envelope.join('.') } } }], 'no_stream');
    const reader = new PersonalDataEventStore(forged, new PersonalDataCipher(keys));
    let failure: unknown = null;
    await reader.readStream('user-ann').catch((error: unknown) => {
      failure = error;
    });
    expect((failure as Error | null)?.name).to.equal('PersonalDataCorruptError');
  });
});
