import fs from 'node:fs';
import { expect } from 'chai';
import { MemoryKeyStore } from '../../../src/adapters/memory/memory-key-store.js';
import { openSqlite, type SqliteConnection } from '../../../src/adapters/sqlite/sqlite-database.js';
import { SqliteWebhookOutbox } from '../../../src/adapters/sqlite/sqlite-webhook-outbox.js';
import { PersonalDataCipher, userSubject } from '../../../src/application/privacy/personal-data-cipher.js';
import { PersonalDataOutbox } from '../../../src/application/privacy/personal-data-outbox.js';
import type { NewOutboxMessage } from '../../../src/ports/webhook-outbox.js';
import { tempDir } from '../../support/temp-dir.js';

function message(type: string, data: Record<string, unknown>, position: bigint): NewOutboxMessage {
  return {
    endpoint_id: 'backend',
    message_id: `m-${position}`,
    event_id: `e-${position}`,
    event_type: type,
    position,
    payload: JSON.stringify({
      type,
      timestamp: '2026-11-23T10:00:00.000Z',
      data: { app_user_id: 'ann', ...data, event_id: `e-${position}`, position: String(position) },
    }),
    enqueued_at: '2026-11-23T10:00:00.000Z',
  };
}

describe('PersonalDataOutbox (SPEC §13: webhook messages keep personal fields sealed at rest)', () => {
  let dir: string;
  let db: SqliteConnection;
  let keys: MemoryKeyStore;
  let inner: SqliteWebhookOutbox;
  let outbox: PersonalDataOutbox;

  beforeEach(() => {
    dir = tempDir('referrals-outbox-pd');
    db = openSqlite(dir);
    keys = new MemoryKeyStore();
    inner = new SqliteWebhookOutbox(db);
    outbox = new PersonalDataOutbox(inner, new PersonalDataCipher(keys));
  });
  afterEach(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('stores user.created with metadata and payment_customer_id sealed, delivers them in the clear', async () => {
    await keys.keyFor(userSubject('ann'));
    const created = message('user.created', { metadata: { email: 'ann@example.org' }, payment_customer_id: 'cus_ann', is_premium: null }, 1n);
    const other = message('reward.granted', { reward_key: 'coins' }, 2n);
    await outbox.feed('webhooks', [created, other], null, 2n);
    const stored = await inner.get('backend', 'm-1');
    expect(stored!.payload).to.not.contain('ann@example.org').and.not.contain('cus_ann');
    expect((await inner.get('backend', 'm-2'))!.payload).to.equal(other.payload);
    expect((await outbox.head('backend'))!.payload).to.equal(created.payload);
    expect((await outbox.list('backend', { limit: 10 })).map((row) => row.payload)).to.deep.equal([created.payload, other.payload]);
  });

  it('sends the fields as null once the user is erased, and never creates a key to seal them', async () => {
    await outbox.feed('webhooks', [message('user.created', { metadata: { a: 1 }, payment_customer_id: 'cus_x' }, 1n)], null, 1n);
    expect(await keys.existingKey(userSubject('ann'))).to.equal(null);
    expect(JSON.parse((await outbox.head('backend'))!.payload).data).to.include({ metadata: null, payment_customer_id: null });

    await keys.keyFor(userSubject('ann'));
    await outbox.requeue([message('user.created', { metadata: { a: 2 }, payment_customer_id: null }, 3n)], '2026-11-23T10:00:00.000Z');
    await keys.destroy(userSubject('ann'));
    expect(JSON.parse((await outbox.get('backend', 'm-3'))!.payload).data.metadata).to.equal(null);
  });
});
