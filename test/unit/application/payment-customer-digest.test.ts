import 'reflect-metadata';
import { createHmac, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { MemoryKeyStore } from '../../../src/adapters/memory/memory-key-store.js';
import { MemoryReadStore } from '../../../src/adapters/memory/memory-read-store.js';
import { PaymentCustomerClaimers } from '../../../src/application/fraud/payment-customer-claimers.js';
import { PAYMENT_CUSTOMER_DIGEST_SUBJECT } from '../../../src/application/privacy/personal-data-cipher.js';
import { applicationSpec } from '../../support/application-spec.js';

/**
 * The key that names the payment-customer counters (`payment_customer_claimers`, docs/fraud-rules.md):
 * one per deployment, in the key store, so every instance counts in the same streams.
 */
describe('PaymentCustomerClaimers: the digest key', () => {
  it('is the key store’s: two instances starting together, each with its own read store, name a customer alike', async () => {
    const app = await applicationSpec();
    const keys = new MemoryKeyStore();
    const [first, second] = [
      new PaymentCustomerClaimers(app.executor, new MemoryReadStore(), keys),
      new PaymentCustomerClaimers(app.executor, new MemoryReadStore(), keys),
    ];
    const [a, b] = await Promise.all([first.digest('cus_shared'), second.digest('cus_shared')]);
    expect(a).to.equal(b);
    const kept = await keys.existingKey(PAYMENT_CUSTOMER_DIGEST_SUBJECT);
    expect(a).to.equal(createHmac('sha256', kept!.key).update('cus_shared').digest('hex').slice(0, 40));
    expect(await first.digest('cus_other')).to.not.equal(a);
  });

  it('stays the one a deployment made before the key store held it (kept in its read store), and moves into the key store', async () => {
    const app = await applicationSpec();
    const legacy = randomBytes(32);
    const readStore = new MemoryReadStore();
    await readStore.putAux('fraud_keys', 'payment-customer-digest', { key: legacy.toString('base64') });
    const keys = new MemoryKeyStore();
    const digest = await new PaymentCustomerClaimers(app.executor, readStore, keys).digest('cus_old');
    expect(digest).to.equal(createHmac('sha256', legacy).update('cus_old').digest('hex').slice(0, 40));
    expect((await keys.existingKey(PAYMENT_CUSTOMER_DIGEST_SUBJECT))?.key.equals(legacy)).to.equal(true);
    // An instance whose read store lacks it (another replica, a rebuilt read store) names customers alike.
    expect(await new PaymentCustomerClaimers(app.executor, new MemoryReadStore(), keys).digest('cus_old')).to.equal(digest);
  });
});
