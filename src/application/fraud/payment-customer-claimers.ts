import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import { streams } from '../../domain/events/index.js';
import type { FraudRule } from '../../domain/events/fraud-events.js';
import type { RuleHit } from '../../domain/fraud/claim-rules.js';
import { decideCountPaymentCustomerClaim, decideReleasePaymentCustomerClaim } from '../../domain/fraud/payment-customer-counter.js';
import type { KeyStore } from '../../ports/key-store.js';
import type { ReadStore } from '../../ports/read-store.js';
import { TOKENS } from '../../ports/tokens.js';
import type { CommandContext } from '../event-log.js';
import { PAYMENT_CUSTOMER_DIGEST_SUBJECT } from '../privacy/personal-data-cipher.js';
import { StreamExecutor } from '../stream-executor.js';
import { legacyDigestKey } from './legacy-digest-key.js';

/**
 * How many referral claimers shared one payment customer (SPEC §13, `payment_customer_claimers`):
 * a counter in `payment-customer-{digest}` whose latest event carries the count, so a claim
 * appends one event, reading the latest one only when the counter exists (exact under
 * concurrency: the append has the exact expected revision; constant cost: the latest event holds
 * at most RECENT_CLAIMERS claimers). Privacy: the stream is named by a keyed digest (HMAC-SHA-256
 * with a random key kept in the key store, outside the log) and its events hold counts and keyed
 * digests of claimers' ids — no plaintext payment customer id, no user id.
 */
@injectable()
export class PaymentCustomerClaimers {
  private key: Promise<KeyObject> | null = null;

  constructor(
    @inject(StreamExecutor) private readonly executor: StreamExecutor,
    @inject(TOKENS.ReadStore) private readonly readStore: ReadStore,
    @inject(TOKENS.KeyStore) private readonly keyStore: KeyStore,
  ) {}

  /** Counts `claimerId`'s claim for this payment customer; a `reject` rule past `max` throws, a `hold` rule is returned. */
  async count(
    paymentCustomerId: string,
    claimerId: string,
    claimId: string,
    rules: readonly FraudRule[],
    context: CommandContext,
  ): Promise<{ hold: RuleHit | null; stream: string }> {
    const stream = streams.paymentCustomer(await this.digest(paymentCustomerId));
    const { claimer, claim } = await this.claimDigests(claimerId, claimId);
    // Almost every payment customer belongs to one claimer, so its counter does not exist yet: the
    // first attempt appends without reading; a counter that exists answers with a conflict, and
    // the next attempt reads it.
    const { result } = await this.executor.executeOnLatest(stream, (latest) => decideCountPaymentCustomerClaim(latest, rules, claimer, claim), context, {
      expectNew: true,
    });
    return { hold: result, stream };
  }

  /** Gives `claimerId`'s claim `claimId` back when it did not happen after all. */
  async release(stream: string, claimerId: string, claimId: string, context: CommandContext): Promise<void> {
    const { claimer, claim } = await this.claimDigests(claimerId, claimId);
    await this.executor.executeOnLatest(stream, (latest) => decideReleasePaymentCustomerClaim(latest, claimer, claim), context);
  }

  /** What the counter remembers of a claim: keyed digests, so its events name neither the claimer nor the claim. */
  private async claimDigests(claimerId: string, claimId: string): Promise<{ claimer: string; claim: string }> {
    return { claimer: await this.digest(`claimer\u001f${claimerId}`), claim: await this.digest(`claim\u001f${claimId}`) };
  }

  async digest(paymentCustomerId: string): Promise<string> {
    const key = await this.digestKey();
    return createHmac('sha256', key).update(paymentCustomerId).digest('hex').slice(0, 40);
  }

  /**
   * The digest key: one per deployment, in the key store (never in the log), made on first use;
   * instances starting together get the same key (the key store's `keyFor`). A deployment made
   * before the key store held it keeps the key its read store holds: it becomes the key store's.
   * Held as a KeyObject: HMAC with a raw Buffer imports the key again on every digest, which
   * cost more than the digest itself.
   */
  private digestKey(): Promise<KeyObject> {
    this.key ??= (async () => {
      const legacy = await legacyDigestKey(this.readStore);
      const kept = await this.keyStore.keyFor(PAYMENT_CUSTOMER_DIGEST_SUBJECT, legacy ?? undefined);
      return createSecretKey(kept.key);
    })().catch((error) => {
      this.key = null;
      throw error;
    });
    return this.key;
  }
}
