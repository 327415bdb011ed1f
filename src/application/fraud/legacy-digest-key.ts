import type { ReadStore } from '../../ports/read-store.js';

/** Where deployments made before 2026-11-25 keep the payment-customer digest key: the read store. */
const LEGACY_KEYS = 'fraud_keys';
const LEGACY_KEY_ID = 'payment-customer-digest';

/**
 * The digest key a deployment made before 2026-11-25 kept in its read store; null when it has
 * none. The key store holds it since (src/application/fraud/payment-customer-claimers.ts moves it
 * there on first use; `npm run migrate-events` carries it to its target).
 */
export async function legacyDigestKey(readStore: Pick<ReadStore, 'get'>): Promise<Buffer | null> {
  const stored = await readStore.get<{ key: string }>(LEGACY_KEYS, LEGACY_KEY_ID);
  return stored ? Buffer.from(stored.key, 'base64') : null;
}
