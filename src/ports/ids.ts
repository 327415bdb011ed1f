export interface Ids {
  /** A fresh unique UUID, unguessable and time-ordered (UUIDv7). */
  uuid(): string;
  /** A deterministic UUID derived from the parts (UUIDv5), for idempotent event ids. */
  derived(...parts: string[]): string;
  /** A random referral code from the code alphabet. */
  referralCode(): string;
}
