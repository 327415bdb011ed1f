import { createHash, timingSafeEqual } from 'node:crypto';

/** A secret's SHA-256 digest: equal lengths whatever was sent, so comparing two takes the same time. */
export function secretDigest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** Whether a secret sent equals the one expected, in time that shows neither where they differ nor their lengths. */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(secretDigest(given), secretDigest(expected));
}
