import { expect } from 'chai';
import { newEvent, newRegistered } from '../../support/new-events.js';
import { USERS, usersProjection } from '../../../projections/users.js';
import { MemoryEventStore } from '../../../src/adapters/memory/memory-event-store.js';
import { MemoryKeyStore } from '../../../src/adapters/memory/memory-key-store.js';
import { toLogged } from '../../../src/application/event-log.js';
import { decryptValue, encryptValue, keptKeyCount, PersonalDataCipher, userSubject } from '../../../src/application/privacy/personal-data-cipher.js';
import { PersonalDataEventStore } from '../../../src/application/privacy/personal-data-event-store.js';
import { openProfile } from '../../../src/application/privacy/personal-read-models.js';
import { projected } from '../../support/events.js';

const event = newEvent;
const registered = newRegistered;

/**
 * Read models keep personal fields sealed as the log holds them (SPEC §13): the users document
 * is built from the events as read (`sealed` next to the clear values), and its readers open it.
 */
describe('personal fields in read models: kept sealed, opened by their readers', () => {
  let raw: MemoryEventStore;
  let keys: MemoryKeyStore;
  let cipher: PersonalDataCipher;
  let store: PersonalDataEventStore;

  beforeEach(() => {
    raw = new MemoryEventStore();
    keys = new MemoryKeyStore();
    cipher = new PersonalDataCipher(keys);
    store = new PersonalDataEventStore(raw, cipher);
  });

  async function userDoc(appUserId: string) {
    const events = (await store.readStream(`user-${appUserId}`)).map(toLogged);
    return projected(usersProjection, events)[`${USERS}/${appUserId}`]!;
  }

  it('a read names the stored envelope of each value it decrypted, by path', async () => {
    await store.append('user-ann', [registered('ann', { metadata: { email: 'ann@example.org' } })], 'no_stream');
    await store.append('user-ann', [event('UserProfileUpdated', { changes: { payment_customer_id: 'cus_ann' } })], 0);
    const stored = await raw.readStream('user-ann');
    const [first, second] = await store.readStream('user-ann');
    expect(first!.sealed).to.deep.equal({ metadata: stored[0]!.data.metadata });
    expect(second!.sealed).to.deep.equal({ 'changes.payment_customer_id': (stored[1]!.data.changes as Record<string, unknown>).payment_customer_id });
    await store.append('user-bob', [registered('bob', {})], 'no_stream');
    expect((await store.readStream('user-bob'))[0]!.sealed).to.equal(undefined);
  });

  it('the users document holds the envelopes, never the clear values; opened, they read as sent', async () => {
    await store.append('user-ann', [registered('ann', { metadata: { email: 'ann@example.org' }, payment_customer_id: 'cus_ann' })], 'no_stream');
    await store.append('user-ann', [event('UserProfileUpdated', { changes: { metadata: { email: 'new@example.org' }, is_premium: true } })], 0);
    const doc = await userDoc('ann');
    expect(JSON.stringify(doc)).to.not.match(/example\.org|cus_ann/);
    expect(doc.metadata).to.have.keys('$encrypted');
    expect(doc.is_premium).to.equal(true);
    expect(await openProfile(cipher, doc as never)).to.deep.equal({ metadata: { email: 'new@example.org' }, payment_customer_id: 'cus_ann' });
  });

  it('once the key is destroyed the document, as it was, opens as null', async () => {
    await store.append('user-ann', [registered('ann', { metadata: { email: 'ann@example.org' }, payment_customer_id: 'cus_ann' })], 'no_stream');
    const before = await userDoc('ann');
    await keys.destroy(userSubject('ann'));
    expect(await openProfile(cipher, before as never)).to.deep.equal({ metadata: null, payment_customer_id: null });
    // Built again from the log (a replay after the erasure), it holds nulls.
    expect(await userDoc('ann')).to.deep.include({ metadata: null, payment_customer_id: null });
  });

  it('clear values (a log written before encryption, or a read model built before sealing) read as they are', async () => {
    await raw.append('user-old', [registered('old', { metadata: { legacy: true }, payment_customer_id: 'cus_old' })], 'no_stream');
    const doc = await userDoc('old');
    expect(doc).to.deep.include({ metadata: { legacy: true }, payment_customer_id: 'cus_old' });
    expect(await openProfile(cipher, doc as never)).to.deep.equal({ metadata: { legacy: true }, payment_customer_id: 'cus_old' });
  });

  it('a key used to open values stays in memory at most a minute after its last use', () => {
    const realNow = Date.now;
    try {
      let now = realNow() + 86_400_000;
      Date.now = () => now;
      const key = (subject: string) => ({ id: `id-${subject}-${now}`, subject, key: Buffer.alloc(32, subject.length) });
      encryptValue(key('user:kept-a-while'), 'metadata', { a: 1 });
      expect(keptKeyCount('user:kept-a-while')).to.equal(1);
      now += 59_000;
      encryptValue(key('user:other'), 'metadata', { b: 2 });
      expect(keptKeyCount('user:kept-a-while')).to.equal(1);
      now += 2_000;
      encryptValue(key('user:other'), 'metadata', { b: 2 });
      expect(keptKeyCount('user:kept-a-while')).to.equal(0);
    } finally {
      Date.now = realNow;
    }
  });
  it('each sealed value has its own IV, across refills of the IV pool, and opens as sealed', () => {
    const key = { id: 'key-iv', subject: userSubject('iv'), key: Buffer.alloc(32, 7) };
    const envelopes = Array.from({ length: 2_000 }, (_, i) => encryptValue(key, 'email', `user${i}@example.org`));
    const ivs = new Set(envelopes.map((envelope) => envelope.$encrypted.split('.')[2]));
    expect(ivs.size).to.equal(envelopes.length);
    const keys = new Map([[key.id, key]]);
    expect(envelopes.map((envelope) => decryptValue(keys, 'email', envelope))).to.deep.equal(envelopes.map((_, i) => `user${i}@example.org`));
  });
});
